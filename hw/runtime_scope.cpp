#include "hw/runtime_scope.hpp"

#include <string>

#include "core/input_error.hpp"
#include "core/mobility.hpp"

namespace coinfer::hw {

void check_real_runtime_scope(const Scenario& sc) {
  if (sc.scheduler.max_output_error >= 0)
    throw InputError(sc.scheduler.where, "scheduler.max_output_error",
                     "choosing model variants at run time is simulated only (coinfer run); the testbed runs each device's model "
                     "as the scenario names it: remove the key, or name the variant on the device (variant:)");
  if (sc.mobility.mid_transfer != MobilitySpec::MidTransfer::wait)
    throw InputError(sc.mobility.where, "mobility.mid_transfer",
                     std::string("'") + mid_transfer_name(sc.mobility.mid_transfer) +
                         "' is simulated only (coinfer run): the real runtime's transfers wait through a handover (a byte sent on "
                         "a TCP stream cannot be taken back); remove the key or set it to wait");
  for (const ServerSpec& sv : sc.servers)
    if (!sv.cloud.empty())
      throw InputError(sv.where, "servers (id " + sv.id + ").cloud",
                       "a cloud tier (pp(k,m): device, edge and cloud) is simulated only (coinfer run): the real edge server "
                       "does not pass requests on to another server; remove the key");
}

}  // namespace coinfer::hw
