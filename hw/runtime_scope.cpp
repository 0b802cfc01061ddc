#include "hw/runtime_scope.hpp"

#include <string>

#include "core/input_error.hpp"

namespace coinfer::hw {

void check_real_runtime_scope(const Scenario& sc) {
  if (sc.scheduler.max_output_error >= 0)
    throw InputError(sc.scheduler.where, "scheduler.max_output_error",
                     "choosing model variants at run time is simulated only (coinfer run); the testbed runs each device's model "
                     "as the scenario names it: remove the key, or name the variant on the device (variant:)");
  for (const ServerSpec& sv : sc.servers)
    if (!sv.cloud.empty())
      throw InputError(sv.where, "servers (id " + sv.id + ").cloud",
                       "a cloud tier (pp(k,m): device, edge and cloud) is simulated only (coinfer run): the real edge server "
                       "does not pass requests on to another server; remove the key");
}

}  // namespace coinfer::hw
