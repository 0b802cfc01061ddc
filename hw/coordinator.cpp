#include "hw/coordinator.hpp"

namespace coinfer::hw {

// The real coordinator observes the start (its gate), joins and leaves (registrations,
// disconnections), fixed devices' rates (heartbeats) and, unless it only coordinates, its own failure
// (the process is down then; started again, its first decision is the recovery). Its servers fail as
// processes (the testbed kills and restarts them): no server changes for the loop to carry out.
Coordinator::Coordinator(const Scenario& sc, Scheduler& scheduler, const Estimator& estimator, const std::vector<BandwidthSchedule>& schedules,
                         Options options)
    : opt_(options),
      loop_(sc, scheduler, estimator, schedules, sc.duration_s,
            SelfObserved{true, true, true, ServerIndex(options.coordinate_only ? -1 : options.server_index)}, 0.0),
      start_gate_(sc, options.several ? -1 : options.server_index, options.start_deadline_s, options.now_s) {
  // Started again after a failure: what came before the restart was this process's predecessor's.
  if (opt_.recovering) loop_.skip_to(opt_.now_s);
}

Trigger Coordinator::start_trigger() const {
  if (opt_.recovering) return trigger::ServerRecover{ServerIndex(opt_.server_index)};
  return trigger::Start{};
}

bool Coordinator::registered(int device) {
  if (device >= 0 && start_gate_.is_join(device)) return loop_.offer(trigger::Join{DeviceIndex(device)});
  return start_gate_.registered(device) && loop_.offer(start_trigger());
}

bool Coordinator::left(int device) { return loop_.offer(trigger::Leave{DeviceIndex(device)}); }

bool Coordinator::bandwidth(int device, double mbps) { return loop_.offer(trigger::Bandwidth{DeviceIndex(device), mbps}); }

std::optional<std::vector<int>> Coordinator::advance_to(double now_s) {
  std::optional<std::vector<int>> went_without;
  if (start_gate_.deadline_passed(now_s)) {
    went_without = start_gate_.missing();
    loop_.offer(start_trigger());
  }
  loop_.advance_to(now_s);  // no server changes (constructed with 0)
  return went_without;
}

}  // namespace coinfer::hw
