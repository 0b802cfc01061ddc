#include "hw/coordinator.hpp"

namespace coinfer::hw {

namespace {
SelfObserved observed_by(const Coordinator::Options& o) {
  SelfObserved self{true, true, true, ServerIndex(o.coordinate_only ? -1 : o.server_index)};
  self.server_recoveries = true;
  return self;
}
}  // namespace

// The real coordinator observes the start (its gate), joins and leaves (registrations,
// disconnections), fixed devices' rates (heartbeats), the other servers' recoveries (registrations)
// and, unless it only coordinates, its own failure (the process is down then; started again, its
// first decision is the recovery). Its servers fail as processes (the testbed kills and restarts
// them): no server changes for the loop to carry out.
Coordinator::Coordinator(const Scenario& sc, Scheduler& scheduler, const Estimator& estimator, const std::vector<BandwidthSchedule>& schedules,
                         Options options)
    : opt_(options),
      loop_(sc, scheduler, estimator, schedules, sc.duration_s, observed_by(options), 0.0),
      start_gate_(sc, options.several ? -1 : options.server_index, options.start_deadline_s, options.now_s) {
  const ServerIndex own(opt_.coordinate_only ? -1 : opt_.server_index);
  for (const auto& [at, t] : Rescheduler::scenario_events(sc, schedules, sc.duration_s)) {
    const auto* r = t.as<trigger::ServerRecover>();
    if (!r || r->server == own || (opt_.recovering && at <= opt_.now_s)) continue;
    double failed_at = 0;
    for (const EventSpec& e : sc.events)
      if (e.is<event::ServerFail>() && e.at_s <= at && sc.server_index(e.server()) == r->server.value) failed_at = std::max(failed_at, e.at_s);
    awaited_.push_back({r->server.value, failed_at, at});
  }
  // Started again after a failure: what came before the restart was this process's predecessor's.
  if (opt_.recovering) loop_.skip_to(opt_.now_s);
}

bool Coordinator::server_registered(int server, double now_s) {
  for (auto it = awaited_.begin(); it != awaited_.end(); ++it)
    if (it->server == server && it->failed_at_s < now_s) {
      awaited_.erase(it);
      return loop_.offer(trigger::ServerRecover{ServerIndex(server)});
    }
  return false;
}

std::vector<int> Coordinator::overdue_recoveries(double now_s, double grace_s) {
  std::vector<int> out;
  for (AwaitedRecovery& a : awaited_)
    if (!a.overdue_told && now_s > a.recovers_at_s + grace_s) {
      a.overdue_told = true;
      out.push_back(a.server);
    }
  return out;
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
