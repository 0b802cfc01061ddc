#include "sim/scheduler_monitor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "sim/device_runtime.hpp"
#include "sim/edge_server.hpp"
#include "sim/sim_run.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer {

SchedulerMonitor::SchedulerMonitor(SimRun& run, Scheduler& scheduler, const AnalyticEstimator& estimator)
    : run_(run), scheduler_(scheduler), estimator_(estimator) {
  const Scenario& s = *run.scenario;
  const double end = run.arrivals_end_s;
  triggers_.push_back({0, "start", -1});
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceSpec& d = s.devices[i];
    if (d.join_at_s > 0 && d.join_at_s < end) triggers_.push_back({d.join_at_s, "join:" + d.id, -1});
    if (d.leave_at_s < end) triggers_.push_back({d.leave_at_s, "leave:" + d.id, -1});
    for (const auto& p : run.platform.device_bandwidth[i].points())
      if (p.t_s > 0 && p.t_s < end) triggers_.push_back({p.t_s, "bandwidth:" + d.id, static_cast<int>(i)});
  }
  if (s.scheduler.period_s > 0)
    for (double t = s.scheduler.period_s; t < end; t += s.scheduler.period_s) triggers_.push_back({t, "period", -1});
  std::stable_sort(triggers_.begin(), triggers_.end(), [](const Trigger& a, const Trigger& b) { return a.t_s < b.t_s; });
  bandwidth_at_decision_.assign(s.devices.size(), 0);
}

void SchedulerMonitor::start() {
  sg4::Actor::create("scheduler-monitor", run_.platform.server_hosts[0], [this] { loop(); })->daemonize();
}

SystemState SchedulerMonitor::snapshot(double now) const {
  SystemState st = scenario_state(*run_.scenario, now);
  for (size_t i = 0; i < st.servers.size() && i < run_.servers.size(); ++i) {
    st.servers[i].queue_length = run_.servers[i]->queued();
    st.servers[i].busy_workers = run_.servers[i]->busy_workers();
  }
  for (size_t i = 0; i < st.devices.size(); ++i) {
    DeviceState& x = st.devices[i];
    if (i < run_.devices.size()) {
      x.strategy = run_.devices[i]->strategy();
      x.unfinished = run_.devices[i]->unfinished();
      x.queue_length = run_.devices[i]->queued();
      x.busy = run_.devices[i]->busy();
    }
    // The monitor knows each link's bandwidth as the device measured it; here, the link's true value.
    x.link_bandwidth_mbps = run_.platform.device_bandwidth[i].mbps_at(now);
  }
  return st;
}

void SchedulerMonitor::decide(const std::string& why) {
  const double now = sg4::Engine::get_clock();
  SystemState state = snapshot(now);
  const auto t0 = std::chrono::steady_clock::now();
  Scheme scheme = scheduler_.decide(state);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  DecisionRecord rec;
  rec.t_s = now;
  rec.trigger = why;
  rec.scheme = scheme.to_string();
  rec.wall_s = wall;
  const Prediction p = estimator_.predict(state, scheme);
  rec.predicted_throughput_rps = p.throughput_rps;
  rec.predicted_latency_ms = p.mean_latency_s * 1e3;
  for (size_t i = 0; i < state.devices.size(); ++i) bandwidth_at_decision_[i] = state.devices[i].link_bandwidth_mbps;
  if (run_.scenario->scheduler.charge_decision_time && wall > 0) sg4::this_actor::execute(wall * kFlopsPerSecond);
  for (size_t i = 0; i < state.devices.size(); ++i) {
    auto it = scheme.strategies.find(state.devices[i].id);
    if (it == scheme.strategies.end() || it->second == run_.devices[i]->strategy()) continue;
    messages_.push_back(it->second);
    ++rec.switched;
    run_.devices[i]->send_strategy(&messages_.back(), run_.scenario->scheduler.control_bytes);
  }
  // Helpers: each serves its own server.
  std::map<std::string, std::vector<int>> helpers_by_server;
  for (const auto& id : scheme.helpers) {
    const int i = run_.scenario->device_index(id);
    if (i >= 0) helpers_by_server[run_.scenario->devices[i].server].push_back(i);
  }
  for (size_t j = 0; j < run_.servers.size(); ++j) run_.servers[j]->set_helpers(helpers_by_server[run_.scenario->servers[j].id]);
  decisions_.push_back(rec);
}

void SchedulerMonitor::loop() {
  const double threshold = run_.scenario->scheduler.bandwidth_threshold_pct / 100;
  size_t i = 0;
  while (i < triggers_.size()) {
    const double t = triggers_[i].t_s;
    sg4::this_actor::sleep_until(t);
    std::string why;
    for (; i < triggers_.size() && triggers_[i].t_s == t; ++i) {
      const Trigger& tr = triggers_[i];
      if (tr.device >= 0) {
        const double before = bandwidth_at_decision_[tr.device];
        const double now_bw = run_.platform.device_bandwidth[tr.device].mbps_at(t);
        if (before > 0 && std::fabs(now_bw - before) / before <= threshold) continue;
      }
      why += (why.empty() ? "" : "+") + tr.what;
    }
    if (!why.empty()) decide(why);
  }
}

}  // namespace coinfer
