#include "sim/scheduler_monitor.hpp"

#include "core/text_util.hpp"

#include <cmath>

#include "sim/platform_builder.hpp"
#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

SchedulerMonitor::SchedulerMonitor(MonitorSlice slice, Scheduler& scheduler, const Estimator& estimator)
    : s_(std::move(slice)),
      // The simulator observes nothing by itself: every trigger at the scenario's time, and it carries
      // out the servers' failures and recoveries until the drain's end.
      loop_(*s_.scenario, scheduler, estimator, *s_.bandwidth, s_.arrivals_end_s, SelfObserved{}, s_.hard_end_s) {}

void SchedulerMonitor::start() {
  add_actor("scheduler-monitor", s_.host, [this] { loop(); })->daemonize();
}

// What the simulator observes; the snapshot itself is the Rescheduler's (the real server's too).
SystemState SchedulerMonitor::snapshot(double now) const {
  const Scenario& sc = *s_.scenario;
  std::vector<std::optional<ServerObservation>> servers(s_.servers.size());
  for (size_t i = 0; i < s_.servers.size(); ++i)
    servers[i] = ServerObservation{s_.servers[i]->queued(), s_.servers[i]->busy_workers(), s_.servers[i]->to_cloud()};
  std::vector<std::optional<DeviceObservation>> devices(sc.devices.size());
  for (size_t i = 0; i < sc.devices.size(); ++i) {
    const DeviceSpec& d = sc.devices[i];
    DeviceObservation o;
    o.connected = now >= d.join_at_s && now < d.leave_at_s;  // present between its join and its leave
    o.generates = d.workload.arrival != WorkloadSpec::Arrival::none;
    // The monitor knows each link's bandwidth as the device measured it; here, the link's true value.
    o.link_bandwidth_mbps = (*s_.bandwidth)[i].mbps_at(now);
    if (i < s_.devices.size()) {
      o.unfinished = s_.devices[i]->unfinished();
      o.queue_length = s_.devices[i]->queued();
      o.busy = s_.devices[i]->busy();
      o.completed = s_.devices[i]->completed();
      o.latency_sum_s = s_.devices[i]->latency_sum_s();
    }
    devices[i] = o;
  }
  return loop_.rescheduler().snapshot(now, devices, servers);
}

void SchedulerMonitor::decide() {
  const Scenario& sc = *s_.scenario;
  Decision d;
  try {
    d = loop_.decide(snapshot(sg4::Engine::get_clock()));
  } catch (const SchedulerFailure& e) {
    failure_ = "at t = " + format_double(sg4::Engine::get_clock()) + " s: " + e.what();
    s_.stop_devices();
    sg4::Actor::kill_all();  // servers and the controller: the run ends here
    return;
  }
  for (const DeviceChange& c : d.changes) {
    const std::string why = c.server_changed && s_.move_problem ? s_.move_problem(c.device.value, c.server.value, c.strategy) : "";
    if (why.empty()) continue;
    failure_ = "at t = " + format_double(sg4::Engine::get_clock()) + " s: scheduler " + sc.scheduler.name + " moved device " +
               sc.devices[c.device.at()].id + " to server " + sc.servers[c.server.at()].id + ": " + why;
    s_.stop_devices();
    sg4::Actor::kill_all();
    return;
  }
  if (sc.scheduler.charge_decision_time && d.record.wall_s > 0) sg4::this_actor::execute(d.record.wall_s * kFlopsPerSecond);
  // Every device in d.changes is told (control_bytes over its link), as the real server tells it:
  // its strategy, its helper role or its server changed.
  for (const DeviceChange& c : d.changes) {
    messages_.push_back(ControlMessage{c.strategy, c.server.value});
    s_.control[c.device.at()]->send_control(&messages_.back(), Endpoint{true, 0}, sc.scheduler.control_bytes);
  }
  // Helpers: each serves its own server (Decision::helpers_of, the real server's rule too).
  for (size_t j = 0; j < s_.servers.size(); ++j) s_.servers[j]->set_helpers(d.helpers_of(sc, sc.servers[j].id));
  // Batching: the servers the scheme gave another rule apply it now (the real server does the same).
  for (const auto& [j, spec] : d.batching) s_.servers[j.at()]->set_batching(spec);
  decisions_.push_back(d.record);
}

void SchedulerMonitor::loop() {
  // At each time: the servers' failures and recoveries first (the engine's state), then the decision.
  for (double t; std::isfinite(t = loop_.next_event_s());) {
    sg4::this_actor::sleep_until(t);
    for (const ServerChange& c : loop_.advance_to(t)) s_.set_server_up(c.server.value, c.up);
    if (loop_.has_pending()) decide();
    if (!failure_.empty()) return;
  }
}

}  // namespace coinfer::sim
