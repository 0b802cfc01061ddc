#include "sim/scheduler_monitor.hpp"

#include "core/text_util.hpp"

#include <cmath>
#include <map>

#include "sim/platform_builder.hpp"
#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

SchedulerMonitor::SchedulerMonitor(MonitorSlice slice, Scheduler& scheduler, const AnalyticEstimator& estimator)
    : s_(std::move(slice)),
      rescheduler_(*s_.scenario, scheduler, estimator),
      events_(Rescheduler::scenario_events(*s_.scenario, *s_.bandwidth, s_.arrivals_end_s)) {}

void SchedulerMonitor::start() { add_actor("scheduler-monitor", s_.host, [this] { loop(); })->daemonize(); }

SystemState SchedulerMonitor::snapshot(double now) const {
  SystemState st = scenario_state(*s_.scenario, now);
  for (size_t i = 0; i < st.servers.size() && i < s_.servers.size(); ++i) {
    st.servers[i].queue_length = s_.servers[i]->queued();
    st.servers[i].busy_workers = s_.servers[i]->busy_workers();
  }
  for (size_t i = 0; i < st.devices.size(); ++i) {
    DeviceState& x = st.devices[i];
    if (i < s_.devices.size()) {
      x.strategy = s_.devices[i]->strategy();
      x.unfinished = s_.devices[i]->unfinished();
      x.queue_length = s_.devices[i]->queued();
      x.busy = s_.devices[i]->busy();
      x.completed = s_.devices[i]->completed();
      x.latency_sum_s = s_.devices[i]->latency_sum_s();
    }
    // The monitor knows each link's bandwidth as the device measured it; here, the link's true value.
    x.link_bandwidth_mbps = (*s_.bandwidth)[i].mbps_at(now);
  }
  return st;
}

void SchedulerMonitor::decide() {
  const Scenario& sc = *s_.scenario;
  Decision d;
  try {
    d = rescheduler_.decide(snapshot(sg4::Engine::get_clock()));
  } catch (const SchedulerFailure& e) {
    failure_ = "at t = " + format_double(sg4::Engine::get_clock()) + " s: " + e.what();
    s_.stop_devices();
    sg4::Actor::kill_all();  // servers and the controller: the run ends here
    return;
  }
  if (sc.scheduler.charge_decision_time && d.record.wall_s > 0) sg4::this_actor::execute(d.record.wall_s * kFlopsPerSecond);
  // Every device in d.changes is told (control_bytes over its link), as the real server tells it:
  // its strategy or its helper role changed (issue 33: the simulator used to tell strategy changes only).
  for (const DeviceChange& c : d.changes) {
    messages_.push_back(c.strategy);
    s_.control[static_cast<size_t>(c.device)]->send_control(&messages_.back(), s_.host, sc.scheduler.control_bytes);
  }
  // Helpers: each serves its own server.
  std::map<std::string, std::vector<int>> helpers_by_server;
  for (int i : d.helpers) helpers_by_server[sc.devices[i].server].push_back(i);
  for (size_t j = 0; j < s_.servers.size(); ++j) s_.servers[j]->set_helpers(helpers_by_server[sc.servers[j].id]);
  decisions_.push_back(d.record);
}

void SchedulerMonitor::loop() {
  size_t i = 0;
  while (i < events_.size()) {
    const double t = events_[i].first;
    sg4::this_actor::sleep_until(t);
    for (; i < events_.size() && events_[i].first == t; ++i) rescheduler_.offer(events_[i].second);
    if (rescheduler_.has_pending()) decide();
    if (!failure_.empty()) return;
  }
}

}  // namespace coinfer::sim
