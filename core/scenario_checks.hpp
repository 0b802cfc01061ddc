#pragma once
// The rules a whole scenario must meet across its sections (the loader parses and
// reports positions, the domain says what is valid). Each rule throws InputError at the position of
// the entry at fault (the specs carry where they came from). Called by io/scenario_loader.cpp once
// everything is read, before the failure models are expanded into events (core/server_failures.hpp
// add_modelled_failures: its events alternate by construction).
#include "core/scenario.hpp"

namespace coinfer {

// - every candidate batch size of the scheduler (scheduler.batch_sizes) is at most every server's
//   batch.max_size (the largest batch its LUTs are checked for);
// - a server with a failure model (servers[].failures) has no hand-written fail or recover events;
// - each server's fail and recover events alternate (core/server_failures.hpp check_server_failures);
// - every device leaves after it joins.
void check_scenario(const Scenario& s);

}  // namespace coinfer
