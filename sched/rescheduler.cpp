#include "sched/rescheduler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace coinfer {

DeviceIndex Trigger::device() const {
  return std::visit(Overloaded{[](const trigger::Join& k) { return k.device; }, [](const trigger::Leave& k) { return k.device; },
                               [](const trigger::Bandwidth& k) { return k.device; }, [](const trigger::Load& k) { return k.device; },
                               [](const trigger::Handover& k) { return k.device; }, [](const auto&) { return DeviceIndex(); }},
                    what);
}

std::string Trigger::describe(const Scenario& s) const {
  const auto device_id = [&s](DeviceIndex d) { return d.within(s.devices.size()) ? s.devices[d.at()].id : std::string("?"); };
  const auto server_id = [&s](ServerIndex j) { return j.within(s.servers.size()) ? s.servers[j.at()].id : std::string("?"); };
  return std::visit(
      Overloaded{[&](const trigger::ServerFail& k) { return "fail:" + server_id(k.server); },
                 [&](const trigger::ServerRecover& k) { return "recover:" + server_id(k.server); },
                 [](const trigger::Start&) { return std::string("start"); }, [&](const trigger::Join& k) { return "join:" + device_id(k.device); },
                 [&](const trigger::Leave& k) { return "leave:" + device_id(k.device); },
                 [&](const trigger::Bandwidth& k) { return "bandwidth:" + device_id(k.device); },
                 [](const trigger::Period&) { return std::string("period"); }, [&](const trigger::Load& k) { return "load:" + device_id(k.device); },
                 [&](const trigger::Handover& k) { return "handover:" + device_id(k.device); }},
      what);
}

std::string trigger_text(const std::vector<std::string>& descriptions, size_t max_listed) {
  // Triggers per kind (the text before ':'), and their ids.
  std::vector<std::string> kinds;
  std::vector<std::vector<std::string>> ids;
  for (const std::string& d : descriptions) {
    const auto colon = d.find(':');
    const std::string kind = colon == std::string::npos ? d : d.substr(0, colon);
    size_t k = std::find(kinds.begin(), kinds.end(), kind) - kinds.begin();
    if (k == kinds.size()) kinds.push_back(kind), ids.emplace_back();
    if (colon != std::string::npos) ids[k].push_back(d.substr(colon + 1));
  }
  std::string out;
  std::vector<bool> summarised(kinds.size(), false);
  for (const std::string& d : descriptions) {
    const auto colon = d.find(':');
    const size_t k = std::find(kinds.begin(), kinds.end(), colon == std::string::npos ? d : d.substr(0, colon)) - kinds.begin();
    std::string part = d;
    if (colon != std::string::npos && ids[k].size() > max_listed) {
      if (summarised[k]) continue;
      summarised[k] = true;
      std::string prefix = ids[k].front();
      for (const std::string& id : ids[k]) {
        size_t n = 0;
        while (n < prefix.size() && n < id.size() && prefix[n] == id[n]) ++n;
        prefix.resize(n);
      }
      const bool servers = kinds[k] == "fail" || kinds[k] == "recover";
      part = kinds[k] + ":" + std::to_string(ids[k].size()) + (servers ? " servers of " : " devices of ") + prefix + "*";
    }
    out += (out.empty() ? "" : "+") + part;
  }
  return out;
}

Rescheduler::Rescheduler(const Scenario& scenario, Scheduler& scheduler, const Estimator& estimator)
    : scenario_(scenario), scheduler_(scheduler), estimator_(estimator) {
  for (const auto& d : scenario.devices) strategy_.push_back(d.strategy);
  helper_.assign(scenario.devices.size(), false);
  for (const auto& d : scenario.devices) server_.push_back(scenario.server_index(d.server));
  access_point_server_.resize(scenario.devices.size());
  for (const EventSpec& e : scenario.events) {  // in time order
    const auto* h = e.as<event::Handover>();
    if (!h) continue;
    const int i = scenario.device_index(h->device);
    for (const AccessPointPlace& a : scenario.mobility.access_points)
      if (a.id == h->access_point && !a.server.empty() && i >= 0)
        access_point_server_[static_cast<size_t>(i)].emplace_back(e.at_s, scenario.server_index(a.server));
  }
  for (const auto& sv : scenario.servers) batching_.push_back(sv.batch);
  for (const auto& d : scenario.devices) load_.emplace_back(d, scenario.events);
  load_at_decision_.assign(scenario.devices.size(), 0);
  availability_ = ServerAvailability(scenario);
  // Until the first decision, bandwidth events compare with the scenario's configured rate.
  for (const auto& d : scenario.devices) bandwidth_at_decision_.push_back(d.link.bandwidth_mbps);
}

int Rescheduler::access_point_server(size_t device, double t_s) const {
  int j = -1;
  for (const auto& [at, server] : access_point_server_[device]) {
    if (at > t_s) break;
    j = server;
  }
  return j;
}

bool Rescheduler::offer(const Trigger& t) {
  if (const auto* b = t.as<trigger::Bandwidth>()) {
    if (!b->device.within(bandwidth_at_decision_.size())) return false;
    double& before = bandwidth_at_decision_[b->device.at()];
    const double threshold = scenario_.scheduler.bandwidth_threshold_pct / 100;
    if (before > 0 && std::fabs(b->mbps - before) / before <= threshold) return false;
    if (before > 0) before = b->mbps;  // one trigger per change
  }
  if (const auto* l = t.as<trigger::Load>()) {
    if (!l->device.within(load_at_decision_.size())) return false;
    double& before = load_at_decision_[l->device.at()];
    if (std::fabs(l->share - before) <= scenario_.scheduler.load_threshold) return false;
    before = l->share;  // one trigger per change
  }
  pending_.push_back(t);
  return true;
}

double Rescheduler::next_period_after(double t_s) const { return next_period_after(scenario_, t_s); }

double Rescheduler::next_period_after(const Scenario& s, double t_s) {
  const double p = s.scheduler.period_s;
  const double never = std::numeric_limits<double>::infinity();
  if (!(p > 0)) return never;
  // k * p, not a running sum (which drifts); k one more where rounding put k * p at or before t_s.
  double k = std::max(1.0, std::floor(t_s / p) + 1);
  if (k * p <= t_s) k += 1;
  const double t = k * p;
  return t < s.duration_s ? t : never;
}

SystemState Rescheduler::snapshot(double now_s, const std::vector<std::optional<DeviceObservation>>& devices,
                                  const std::vector<std::optional<ServerObservation>>& servers) const {
  SystemState st = scenario_state(scenario_, now_s);
  for (size_t i = 0; i < st.servers.size() && i < batching_.size(); ++i) {  // as last decided
    st.servers[i].batch_window_ms = batching_[i].window_ms;
    st.servers[i].batch_max_size = batching_[i].max_size;
  }
  for (size_t i = 0; i < st.devices.size() && i < load_.size(); ++i)  // the scenario's own schedule, in both engines
    if (!load_[i].empty()) st.devices[i].load = load_[i].share_at(now_s, st.devices[i].processor);
  if (availability_.any())  // the scenario's own schedule, in both engines
    for (size_t i = 0; i < st.servers.size(); ++i) st.servers[i].up = availability_.up_at(static_cast<int>(i), now_s);
  for (size_t i = 0; i < st.servers.size() && i < servers.size(); ++i) {
    if (!servers[i]) continue;
    st.servers[i].queue_length = servers[i]->queue_length;
    st.servers[i].busy_workers = servers[i]->busy_workers;
    st.servers[i].to_cloud = servers[i]->to_cloud;
  }
  for (size_t i = 0; i < st.devices.size(); ++i) {
    DeviceState& x = st.devices[i];
    x.strategy = strategy_[i];
    // As last decided, or the server of the access point it has handed over to since.
    const int ap_server = access_point_server(i, now_s);
    const int server = ap_server >= 0 ? ap_server : server_[i];
    if (server >= 0) x.server = scenario_.servers[static_cast<size_t>(server)].id;
    if (i >= devices.size() || !devices[i]) continue;
    const DeviceObservation& o = *devices[i];
    x.connected = o.connected;
    if (!o.connected) continue;
    if (o.link_bandwidth_mbps > 0) x.link_bandwidth_mbps = o.link_bandwidth_mbps;
    x.generates = o.generates;
    x.queue_length = o.queue_length;
    x.unfinished = o.unfinished;
    x.busy = o.busy;
    x.completed = o.completed;
    x.latency_sum_s = o.latency_sum_s;
  }
  return st;
}

Decision Rescheduler::decide(const SystemState& state) {
  Decision d;
  std::vector<std::string> described;
  described.reserve(pending_.size());
  for (const Trigger& t : pending_) described.push_back(t.describe(scenario_));
  d.record.trigger = trigger_text(described);
  pending_.clear();
  const auto t0 = std::chrono::steady_clock::now();
  d.scheme = scheduler_.decide(state);
  // A device that handed over to an access point tied to a server is that server's from then on
  // (mobility.access_points[].server; the scheme cannot choose servers then): in the scheme, so that
  // the record, the predictions and both engines carry the move out.
  for (size_t i = 0; i < scenario_.devices.size(); ++i)
    if (const int j = access_point_server(i, state.time_s); j >= 0)
      d.scheme.servers[scenario_.devices[i].id] = scenario_.servers[static_cast<size_t>(j)].id;
  // Server choice (Scheme::servers): only devices and servers the scenario has can be moved.
  std::vector<int> moved_to(scenario_.devices.size(), -1);
  for (const auto& [device, server] : d.scheme.servers) {
    const int i = scenario_.device_index(device);
    const int j = scenario_.server_index(server);
    if (i < 0 || j < 0)
      throw SchedulerFailure("scheduler " + scheduler_.name() + " moved " +
                             (i < 0 ? "device '" + device + "', which the scenario does not have," : "device " + device) + " to " +
                             (j < 0 ? "server '" + server + "', which the scenario does not have" : "server " + server));
    moved_to[static_cast<size_t>(i)] = j;
  }
  d.record.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  d.record.t_s = state.time_s;
  d.record.detail = scheduler_.decision_detail();
  d.record.scheme = d.scheme.to_string();
  const Estimator::RecordFigures p = estimator_.figures_for_record(state, d.scheme);
  d.record.predicted_throughput_rps = p.throughput_rps;
  d.record.predicted_latency_ms = p.mean_latency_ms;
  // Constraints (scheduler.max_p95_ms, ...): whether the chosen scheme is predicted to meet them, said
  // in the record rather than a scheme returned silently.
  if (p.constrained) {
    nlohmann::ordered_json j = d.record.detail.empty() ? nlohmann::ordered_json::object() : nlohmann::ordered_json::parse(d.record.detail);
    auto finite = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr); };
    j["constraints"] = {{"met", p.missed.empty()},
                        {"missed", p.missed},
                        {"predicted_p95_ms", finite(p.p95_latency_ms)},
                        {"predicted_energy_j", finite(p.energy_j_per_inference)},
                        {"predicted_throughput_rps", p.throughput_rps}};
    d.record.detail = j.dump();
  }
  std::vector<bool> helper(scenario_.devices.size(), false);
  for (const auto& id : d.scheme.helpers) {
    const int i = scenario_.device_index(id);
    if (i < 0) continue;
    helper[static_cast<size_t>(i)] = true;
    d.helpers.push_back(i);
  }
  for (size_t i = 0; i < scenario_.devices.size(); ++i) {
    DeviceChange c;
    c.device = DeviceIndex(static_cast<int>(i));
    c.strategy = strategy_[i];
    auto it = d.scheme.strategies.find(scenario_.devices[i].id);
    if (it != d.scheme.strategies.end()) {
      c.strategy_changed = it->second != strategy_[i];
      c.strategy = strategy_[i] = it->second;
    }
    c.helper = helper[i];
    c.helper_changed = helper[i] != helper_[i];
    helper_[i] = helper[i];
    if (moved_to[i] >= 0 && moved_to[i] != server_[i]) {
      c.server_changed = true;
      server_[i] = moved_to[i];
    }
    c.server = ServerIndex(server_[i]);
    d.record.switched += c.strategy_changed || c.server_changed;  // sent a new strategy or a new server
    if (c.strategy_changed || c.helper_changed || c.server_changed) d.changes.push_back(c);
  }
  // Batching: a server the scheme names with another rule than it has is told; one not named keeps its.
  for (size_t j = 0; j < scenario_.servers.size(); ++j) {
    auto it = d.scheme.batching.find(scenario_.servers[j].id);
    if (it == d.scheme.batching.end() || it->second == batching_[j]) continue;
    batching_[j] = it->second;
    d.batching.emplace_back(ServerIndex(static_cast<int>(j)), it->second);
  }
  for (size_t i = 0; i < state.devices.size() && i < bandwidth_at_decision_.size(); ++i)
    bandwidth_at_decision_[i] = state.devices[i].link_bandwidth_mbps;
  for (size_t i = 0; i < state.devices.size() && i < load_at_decision_.size(); ++i) load_at_decision_[i] = state.devices[i].load;
  return d;
}

std::vector<std::pair<double, Trigger>> Rescheduler::scenario_events(const Scenario& s, const std::vector<BandwidthSchedule>& bandwidth,
                                                                     double end_s) {
  std::vector<std::pair<double, Trigger>> ev;
  ev.push_back({0, trigger::Start{}});
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceSpec& d = s.devices[i];
    const DeviceIndex di(static_cast<int>(i));
    if (d.join_at_s > 0 && d.join_at_s < end_s) ev.push_back({d.join_at_s, trigger::Join{di}});
    if (d.leave_at_s < end_s) ev.push_back({d.leave_at_s, trigger::Leave{di}});
    if (i < bandwidth.size())
      for (const auto& p : bandwidth[i].points())
        if (p.t_s > 0 && p.t_s < end_s) ev.push_back({p.t_s, trigger::Bandwidth{di, p.mbps}});
    const LoadSchedule load(d, s.events);
    for (const auto& p : load.points())
      if (p.t_s > 0 && p.t_s < end_s) ev.push_back({p.t_s, trigger::Load{di, load.share_at(p.t_s, d.default_processor())}});
  }
  for (const EventSpec& e : s.events)  // devices changing access point (core/mobility.hpp)
    if (const auto* h = e.as<event::Handover>(); h && e.at_s > 0 && e.at_s < end_s)
      ev.push_back({e.at_s, trigger::Handover{DeviceIndex(s.device_index(h->device))}});
  for (const EventSpec& e : s.events) {  // servers failing and recovering (core/server_failures.hpp)
    if (!(e.at_s > 0 && e.at_s < end_s)) continue;
    const ServerIndex j(s.server_index(e.server()));
    if (e.is<event::ServerFail>()) ev.push_back({e.at_s, trigger::ServerFail{j}});
    if (e.is<event::ServerRecover>()) ev.push_back({e.at_s, trigger::ServerRecover{j}});
  }
  for (double t = next_period_after(s, 0); t < end_s; t = next_period_after(s, t)) ev.push_back({t, trigger::Period{}});
  std::stable_sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return ev;
}

}  // namespace coinfer
