#include "core/system_state.hpp"

#include <algorithm>

#include "core/scenario.hpp"
#include "core/scheme.hpp"

namespace coinfer {

const DeviceState* SystemState::device(const std::string& id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

const ServerState* SystemState::server(const std::string& id) const {
  for (const auto& s : servers)
    if (s.id == id) return &s;
  return nullptr;
}

bool scheme_alters_state(const SystemState& state, const Scheme& scheme) {
  for (const auto& [id, spec] : scheme.batching) {
    const ServerState* sv = state.server(id);
    if (sv && (sv->batch_window_ms != spec.window_ms || sv->batch_max_size != spec.max_size)) return true;
  }
  for (const auto& [id, server] : scheme.servers) {
    const DeviceState* d = state.device(id);
    if (d && d->server != server) return true;
  }
  return false;
}

SystemState state_under(const SystemState& state, const Scheme& scheme) {
  SystemState out = state;
  for (auto& sv : out.servers)
    if (auto it = scheme.batching.find(sv.id); it != scheme.batching.end()) {
      sv.batch_window_ms = it->second.window_ms;
      sv.batch_max_size = it->second.max_size;
    }
  if (!scheme.servers.empty())
    for (auto& d : out.devices)
      if (auto it = scheme.servers.find(d.id); it != scheme.servers.end()) {
        d.server = it->second;
        if (const ServerState* sv = out.server(d.server)) d.strategy = strategy_at(d.strategy, *sv);
      }
  return out;
}

Strategy strategy_at(Strategy s, const ServerState& to) {
  if (!s.has_cloud_part() || !to.cloud.empty()) return s;
  s.cloud_split = 0;
  if (s.split == 0) s.kind = Strategy::Kind::offload;
  return s;
}

SystemState scenario_state(const Scenario& s, double now) {
  SystemState st;
  st.time_s = now;
  st.horizon_s = std::max(0.0, s.duration_s - now);
  st.warmup_left_s = std::max(0.0, s.warmup_s - now);
  st.access_point_mbps = s.access_point.bandwidth_mbps;
  st.access_point_latency_ms = s.access_point.latency_ms;
  st.servers.reserve(s.servers.size());
  st.devices.reserve(s.devices.size());  // a DeviceState is ~0.5 KB of strings: regrowing copied them all again
  for (const auto& sv : s.servers) {
    ServerState x;
    x.id = sv.id;
    x.type = sv.type;
    x.workers = sv.workers;
    x.batch_window_ms = sv.batch.window_ms;
    x.batch_max_size = sv.batch.max_size;
    x.batch_size_limit = sv.batch.max_size;
    x.link_bandwidth_mbps = sv.link.bandwidth_mbps;
    for (const auto& p : sv.link.trace)  // its trace's value now (a cloud's WAN), the base before its first point
      if (p.t_s <= now) x.link_bandwidth_mbps = p.mbps;
    x.link_latency_ms = sv.link.latency_ms;
    x.cloud = sv.cloud;
    st.servers.push_back(x);
  }
  for (const auto& d : s.devices) {
    DeviceState x;
    x.id = d.id;
    x.type = d.type;
    x.processor = d.default_processor();
    x.hardware = d.hardware;
    x.model = d.model;
    x.dataset = d.dataset;
    x.server = d.server;
    x.connected = now >= d.join_at_s && now < d.leave_at_s;
    x.strategy = d.strategy;
    x.link_bandwidth_mbps = d.link.bandwidth_mbps;
    x.link_latency_ms = d.link.latency_ms;
    x.in_flight = d.workload.in_flight;
    x.generates = d.workload.arrival != WorkloadSpec::Arrival::none;
    x.variant_choices = d.variant_choices;
    x.idle_w = d.power.idle_w;
    x.busy_w = d.power.busy_w;
    x.radio_j_per_mb = d.power.radio_j_per_mb;
    x.radio = d.power.radio;
    for (const auto& p : d.power.processors) x.processor_idle_w.push_back(p.idle_w), x.processor_busy_w.push_back(p.busy_w);
    if (d.workload.arrival == WorkloadSpec::Arrival::poisson) x.arrival_rate_per_s = d.workload.rate_per_s;
    if (d.workload.arrival == WorkloadSpec::Arrival::trace)
      x.arrival_rate_per_s = std::max(1e-9, d.workload.arrival_times_s.size() / std::max(1e-9, s.duration_s));
    st.devices.push_back(x);
  }
  return st;
}

bool operator==(const DeviceState& a, const DeviceState& b) {
  return a.id == b.id && a.type == b.type && a.processor == b.processor && a.model == b.model && a.dataset == b.dataset && a.server == b.server &&
         a.strategy == b.strategy && a.connected == b.connected && a.busy == b.busy && a.queue_length == b.queue_length &&
         a.unfinished == b.unfinished && a.link_bandwidth_mbps == b.link_bandwidth_mbps && a.link_latency_ms == b.link_latency_ms &&
         a.in_flight == b.in_flight && a.arrival_rate_per_s == b.arrival_rate_per_s && a.generates == b.generates && a.completed == b.completed &&
         a.latency_sum_s == b.latency_sum_s && a.variant_choices == b.variant_choices && a.idle_w == b.idle_w && a.busy_w == b.busy_w &&
         a.radio_j_per_mb == b.radio_j_per_mb && a.processor_idle_w == b.processor_idle_w && a.processor_busy_w == b.processor_busy_w &&
         a.load == b.load && a.radio == b.radio;
}

bool operator==(const ServerState& a, const ServerState& b) {
  return a.id == b.id && a.type == b.type && a.queue_length == b.queue_length && a.busy_workers == b.busy_workers && a.workers == b.workers &&
         a.batch_window_ms == b.batch_window_ms && a.batch_max_size == b.batch_max_size && a.batch_size_limit == b.batch_size_limit &&
         a.link_bandwidth_mbps == b.link_bandwidth_mbps && a.link_latency_ms == b.link_latency_ms && a.up == b.up && a.cloud == b.cloud &&
         a.to_cloud == b.to_cloud;
}

bool operator==(const SystemState& a, const SystemState& b) {
  return a.time_s == b.time_s && a.horizon_s == b.horizon_s && a.warmup_left_s == b.warmup_left_s && a.access_point_mbps == b.access_point_mbps &&
         a.access_point_latency_ms == b.access_point_latency_ms && a.devices == b.devices && a.servers == b.servers;
}

SystemState alone_in(const SystemState& state, const DeviceState& device) {
  SystemState alone;
  alone.time_s = state.time_s;
  alone.horizon_s = state.horizon_s;
  alone.warmup_left_s = state.warmup_left_s;
  alone.access_point_mbps = state.access_point_mbps;
  alone.access_point_latency_ms = state.access_point_latency_ms;
  alone.servers = state.servers;
  alone.devices = {device};
  return alone;
}

}  // namespace coinfer
