#include "sched/server_choice.hpp"

#include <nlohmann/json.hpp>

#include "core/strategy.hpp"

namespace coinfer {

Scheme choose_servers(const AnalyticEstimator& est, const SystemState& state, Scheme scheme, std::vector<ServerMove>* moves, int* candidates) {
  int predicted = 0;
  for (const DeviceState& d : state.devices) {
    if (!d.connected || !d.generates) continue;
    auto own = scheme.strategies.find(d.id);
    const std::string run_model = model_under(d.model, own != scheme.strategies.end() ? own->second : d.strategy);
    auto placed = scheme.servers.find(d.id);
    const std::string current = placed != scheme.servers.end() ? placed->second : d.server;
    std::vector<Scheme> options;
    for (const ServerState& sv : state.servers) {
      if (sv.id == current || !sv.up || !est.luts().contains({sv.type, run_model, d.dataset})) continue;
      options.push_back(scheme);
      options.back().servers[d.id] = sv.id;
    }
    if (options.empty()) continue;
    predicted += static_cast<int>(options.size());
    const int k = est.best_of(state, scheme, options);
    if (k < 0) continue;
    scheme = std::move(options[static_cast<size_t>(k)]);
    if (moves) moves->push_back({d.id, d.server, scheme.servers.at(d.id)});
  }
  // A device back where the state has it needs no entry.
  for (const DeviceState& d : state.devices)
    if (auto it = scheme.servers.find(d.id); it != scheme.servers.end() && it->second == d.server) scheme.servers.erase(it);
  if (candidates) *candidates = predicted + 1;
  return scheme;
}

Scheme ServerChoosingScheduler::decide(const SystemState& state) {
  moves_.clear();
  Scheme first = inner_->decide(state);
  Scheme placed = choose_servers(est_, state, std::move(first), &moves_, &candidates_);
  if (placed.servers.empty()) return placed;
  // The strategies again, on the devices as placed; kept where predicted better.
  Scheme second = inner_->decide(state_under(state, placed));
  second.servers = placed.servers;
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
