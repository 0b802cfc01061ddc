#pragma once
// What the real runtime cannot carry out of a scenario, refused before anything starts: `coinfer serve`
// (hw/edge_server.cpp) and `coinfer testbed` (hw/testbed.cpp) both check it. Torch-free.
#include "core/scenario.hpp"

namespace coinfer::hw {

// Throws InputError naming the key: model variants chosen at run time (scheduler.max_output_error).
void check_real_runtime_scope(const Scenario& sc);

}  // namespace coinfer::hw
