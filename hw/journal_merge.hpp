#pragma once
// Turns what a real run left behind (each device's journal of request records, the server's
// decisions) into a RunResults in the simulator's schema: requests of every device in creation
// order with ids renumbered 0.., per-device bytes and last strategy, the scenario's events and
// bandwidth schedule, and the summary over the measurement window. A pure function (no files, no
// processes): the emulated testbed uses it, and it is tested without root.
#include <string>
#include <vector>

#include "core/request_record.hpp"
#include "core/run_results.hpp"
#include "core/scenario.hpp"

namespace coinfer::hw {

// journals[i]: the records of scenario device i (empty when its journal is missing). Energy is not
// measured on the testbed: NaN.
// Reads the device journals named by `paths` (one per scenario device; "" = none) onto the server's
// clock (hw/clock_sync.hpp) and notes each board's clock in `clocks`; warns (log category `warn_as`)
// when an estimate is missing or its uncertainty exceeds `tolerance_s`.
std::vector<std::vector<RequestRecord>> read_journals_server_clock(const Scenario& sc, const std::vector<std::string>& paths,
                                                                   std::vector<ClockRecord>& clocks, double tolerance_s,
                                                                   const std::string& warn_as);

RunResults merge_journals(const Scenario& sc, const std::vector<std::vector<RequestRecord>>& journals,
                          std::vector<DecisionRecord> decisions, double end_s);

}  // namespace coinfer::hw
