#include "sched/server_choice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/strategy.hpp"

namespace coinfer {

namespace {

// The servers device d may move to: up, not its current one, and with a table for the model it runs.
std::vector<int> destinations(const AnalyticEstimator& est, const SystemState& state, const Scheme& scheme, const DeviceState& d,
                              const std::string& current) {
  auto own = scheme.strategies.find(d.id);
  const std::string run_model = model_under(d.model, own != scheme.strategies.end() ? own->second : d.strategy);
  std::vector<int> out;
  for (size_t j = 0; j < state.servers.size(); ++j) {
    const ServerState& sv = state.servers[j];
    if (sv.id != current && sv.up && est.luts().contains({sv.type, run_model, d.dataset})) out.push_back(static_cast<int>(j));
  }
  return out;
}

// The strategy device d is predicted with on another server: its own (`current`), except that a device
// running locally because its server is down is predicted offloading there (failover: its local
// strategy was forced by the failure, not chosen against that server). The scheduler then decides
// again on the devices as placed (ServerChoosingScheduler::decide).
Strategy strategy_elsewhere(const Strategy& current, bool own_server_up) {
  return !own_server_up && current.kind == Strategy::Kind::local ? Strategy::offload() : current;
}

bool server_up(const SystemState& state, const std::string& id) {
  for (const ServerState& sv : state.servers)
    if (sv.id == id) return sv.up;
  return false;
}

// Figures of a part of the system that add up over disjoint parts: each device's outcome depends on
// its own server's queue only (the estimator solves servers apart), so the system is the sum of its
// servers' parts. The p95 does not add up (NaN).
struct PartFigures {
  double throughput_rps = 0, weighted_latency = 0, offered_rps = 0, unserved_rps = 0, power_w = 0, device_latency_sum = 0;
  int devices = 0, serves_nothing = 0;
  static PartFigures of(const Prediction& p) {
    PartFigures f;
    f.throughput_rps = p.throughput_rps;
    f.weighted_latency = p.mean_latency_s * p.throughput_rps;
    f.offered_rps = p.offered_rps;
    f.unserved_rps = p.unserved_rps;
    f.power_w = p.power_w;
    f.device_latency_sum = p.mean_device_latency_s * static_cast<double>(p.num_devices);
    f.devices = p.num_devices;
    f.serves_nothing = p.serves_nothing;
    return f;
  }
  void add(const PartFigures& o) {
    throughput_rps += o.throughput_rps;
    weighted_latency += o.weighted_latency;
    offered_rps += o.offered_rps;
    unserved_rps += o.unserved_rps;
    power_w += o.power_w;
    device_latency_sum += o.device_latency_sum;
    devices += o.devices;
    serves_nothing += o.serves_nothing;
  }
  Prediction prediction() const {
    Prediction p;
    p.throughput_rps = throughput_rps;
    p.mean_latency_s = throughput_rps > 0 ? weighted_latency / throughput_rps : 0;
    p.mean_device_latency_s = devices > 0 ? device_latency_sum / devices : 0;
    p.offered_rps = offered_rps;
    p.unserved_rps = unserved_rps;
    p.power_w = power_w;
    p.energy_per_inference_j = throughput_rps > 0 ? power_w / throughput_rps : std::numeric_limits<double>::infinity();
    p.p95_latency_s = std::numeric_limits<double>::quiet_NaN();
    p.serves_nothing = serves_nothing;
    p.num_devices = devices;
    return p;
  }
};

// The exact rule on the whole system: a p95 (a max_p95_ms constraint) needs every device at once.
Scheme choose_on_whole_system(const AnalyticEstimator& est, const SystemState& state, Scheme scheme, std::vector<ServerMove>* moves, int* predicted) {
  for (const DeviceState& d : state.devices) {
    if (!d.connected || !d.generates) continue;
    auto placed = scheme.servers.find(d.id);
    const std::string current = placed != scheme.servers.end() ? placed->second : d.server;
    auto own = scheme.strategies.find(d.id);
    const Strategy mine = own != scheme.strategies.end() ? own->second : d.strategy;
    const Strategy there = strategy_elsewhere(mine, server_up(state, current));
    std::vector<Scheme> options;
    for (int j : destinations(est, state, scheme, d, current)) {
      options.push_back(scheme);
      options.back().servers[d.id] = state.servers[static_cast<size_t>(j)].id;
      const Strategy fitted = strategy_at(there, state.servers[static_cast<size_t>(j)]);
      if (fitted != mine) options.back().strategies[d.id] = fitted;
    }
    if (options.empty()) continue;
    *predicted += static_cast<int>(options.size());
    const int k = est.best_of(state, scheme, options);
    if (k < 0) continue;
    scheme = std::move(options[static_cast<size_t>(k)]);
    if (moves) moves->push_back({d.id, current, scheme.servers.at(d.id)});
  }
  return scheme;
}

// The same rule on the system split by server: a move re-predicts its two servers' parts only.
Scheme choose_by_server(const AnalyticEstimator& est, const SystemState& state, Scheme scheme, std::vector<ServerMove>* moves, int* predicted) {
  const SystemState placed = state_under(state, scheme);  // the scheme's batching and moves so far
  const size_t ns = placed.servers.size();
  SystemState skeleton = placed;
  skeleton.devices.clear();
  std::vector<SystemState> part(ns, skeleton);
  std::vector<Scheme> strategies(ns);  // what each part is predicted under: its devices' strategies
  Scheme idle_strategies;
  SystemState idle = skeleton;  // connected devices without inputs of their own: their idle power only
  std::map<std::string, int> server_index;
  for (size_t j = 0; j < ns; ++j) server_index.emplace(placed.servers[j].id, static_cast<int>(j));
  for (const DeviceState& d : placed.devices) {
    if (!d.connected) continue;
    auto st = scheme.strategies.find(d.id);
    if (!d.generates) {
      idle.devices.push_back(d);
      if (st != scheme.strategies.end()) idle_strategies.strategies.insert(*st);
      continue;
    }
    auto it = server_index.find(d.server);
    if (it == server_index.end()) throw std::invalid_argument("device " + d.id + " names unknown server " + d.server);
    part[static_cast<size_t>(it->second)].devices.push_back(d);
    if (st != scheme.strategies.end()) strategies[static_cast<size_t>(it->second)].strategies.insert(*st);
  }
  const PartFigures idle_figures = PartFigures::of(est.predict_figures(idle, idle_strategies));
  std::vector<PartFigures> figures(ns);
  for (size_t j = 0; j < ns; ++j) figures[j] = PartFigures::of(est.predict_figures(part[j], strategies[j]));
  // The system with servers a and b replaced by the given parts.
  auto system_with = [&](int a, const PartFigures& fa, int b, const PartFigures& fb) {
    PartFigures t = idle_figures;
    for (size_t j = 0; j < ns; ++j)
      if (static_cast<int>(j) != a && static_cast<int>(j) != b) t.add(figures[j]);
    t.add(fa);
    t.add(fb);
    return t.prediction();
  };
  for (const DeviceState& d : placed.devices) {
    if (!d.connected || !d.generates) continue;
    const int from = server_index.at(d.server);
    std::vector<DeviceState>& here = part[static_cast<size_t>(from)].devices;
    const size_t k = static_cast<size_t>(std::find_if(here.begin(), here.end(), [&](const DeviceState& x) { return x.id == d.id; }) - here.begin());
    const std::vector<int> to = destinations(est, placed, scheme, here[k], here[k].server);
    if (to.empty()) continue;
    *predicted += static_cast<int>(to.size());
    here[k].connected = false;  // its server's part without it
    const PartFigures without = PartFigures::of(est.predict_figures(part[static_cast<size_t>(from)], strategies[static_cast<size_t>(from)]));
    here[k].connected = true;
    const auto own = scheme.strategies.find(d.id);
    const Strategy mine = own != scheme.strategies.end() ? own->second : d.strategy;
    const Strategy elsewhere_any = strategy_elsewhere(mine, placed.servers[static_cast<size_t>(from)].up);
    Prediction best = system_with(from, figures[static_cast<size_t>(from)], -1, {});
    int best_to = -1;
    PartFigures best_there;
    DeviceState moved = here[k];
    for (int j : to) {
      const Strategy elsewhere = strategy_at(elsewhere_any, placed.servers[static_cast<size_t>(j)]);
      const bool named = own != scheme.strategies.end() || elsewhere != mine;  // the scheme names its strategy there
      moved.server = placed.servers[static_cast<size_t>(j)].id;
      std::vector<DeviceState>& there = part[static_cast<size_t>(j)].devices;
      there.push_back(moved);
      Scheme& theirs = strategies[static_cast<size_t>(j)];
      if (named) theirs.strategies[d.id] = elsewhere;
      const PartFigures with = PartFigures::of(est.predict_figures(part[static_cast<size_t>(j)], theirs));
      theirs.strategies.erase(d.id);
      there.pop_back();
      const Prediction candidate = system_with(from, without, j, with);
      if (est.compare_predictions(candidate, best) > 1e-12) {
        best = candidate;
        best_to = j;
        best_there = with;
      }
    }
    if (best_to < 0) continue;
    const Strategy elsewhere = strategy_at(elsewhere_any, placed.servers[static_cast<size_t>(best_to)]);
    const bool named = own != scheme.strategies.end() || elsewhere != mine;
    moved.server = placed.servers[static_cast<size_t>(best_to)].id;
    part[static_cast<size_t>(best_to)].devices.push_back(moved);
    here.erase(here.begin() + static_cast<std::ptrdiff_t>(k));
    if (named) {
      strategies[static_cast<size_t>(best_to)].strategies[d.id] = elsewhere;
      strategies[static_cast<size_t>(from)].strategies.erase(d.id);
    }
    if (elsewhere != mine) scheme.strategies[d.id] = elsewhere;
    figures[static_cast<size_t>(from)] = without;
    figures[static_cast<size_t>(best_to)] = best_there;
    scheme.servers[d.id] = moved.server;
    if (moves) moves->push_back({d.id, d.server, moved.server});
  }
  return scheme;
}

}  // namespace

Scheme choose_servers(const AnalyticEstimator& est, const SystemState& state, Scheme scheme, std::vector<ServerMove>* moves, int* candidates) {
  int predicted = 0;
  if (state.servers.size() > 1)
    scheme = std::isfinite(est.constraints().max_p95_s) ? choose_on_whole_system(est, state, std::move(scheme), moves, &predicted)
                                                        : choose_by_server(est, state, std::move(scheme), moves, &predicted);
  // A device back where the state has it needs no entry.
  for (const DeviceState& d : state.devices)
    if (auto it = scheme.servers.find(d.id); it != scheme.servers.end() && it->second == d.server) scheme.servers.erase(it);
  if (candidates) *candidates = predicted + 1;
  return scheme;
}

namespace {

// Every device of `scheme` (its strategy there, else the state's) on a server without a cloud loses its
// cloud part (strategy_at): an inner scheduler deciding again on the devices as placed may give a moved
// device the strategy it had (the static one does).
void fit_to_servers(const SystemState& state, Scheme& scheme) {
  for (const DeviceState& d : state.devices) {
    auto own = scheme.strategies.find(d.id);
    const Strategy& st = own != scheme.strategies.end() ? own->second : d.strategy;
    if (!st.has_cloud_part()) continue;
    auto moved = scheme.servers.find(d.id);
    const ServerState* sv = state.server(moved != scheme.servers.end() ? moved->second : d.server);
    if (sv && sv->cloud.empty()) scheme.strategies[d.id] = strategy_at(st, *sv);
  }
}

}  // namespace

Scheme ServerChoosingScheduler::decide(const SystemState& state) {
  moves_.clear();
  Scheme first = inner_->decide(state);
  fit_to_servers(state, first);
  Scheme placed = choose_servers(est_, state, std::move(first), &moves_, &candidates_);
  if (placed.servers.empty()) return placed;
  fit_to_servers(state, placed);
  // The strategies again, on the devices as placed; kept where predicted better.
  Scheme second = inner_->decide(state_under(state, placed));
  second.servers = placed.servers;
  fit_to_servers(state, second);
  return est_.compare(state, second, placed) > 1e-12 ? second : placed;
}

std::string ServerChoosingScheduler::decision_detail() const {
  const std::string inner = inner_->decision_detail();
  nlohmann::ordered_json j = inner.empty() ? nlohmann::ordered_json::object() : nlohmann::ordered_json::parse(inner);
  nlohmann::ordered_json moved = nlohmann::ordered_json::array();
  for (const ServerMove& m : moves_) moved.push_back({{"device", m.device}, {"from", m.from}, {"to", m.to}});
  j["servers"] = {{"candidates", candidates_}, {"moved", moved}};
  return j.dump();
}

}  // namespace coinfer
