#include "hw/runtime_scope.hpp"

#include <string>

#include "core/input_error.hpp"

namespace coinfer::hw {

void check_real_runtime_scope(const Scenario& sc) {
  if (sc.scheduler.max_output_error >= 0)
    throw InputError(sc.scheduler.where, "scheduler.max_output_error",
                     "choosing model variants at run time is simulated only (coinfer run); the testbed runs each device's model "
                     "as the scenario names it: remove the key, or name the variant on the device (variant:)");
}

}  // namespace coinfer::hw
