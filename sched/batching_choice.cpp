#include "sched/batching_choice.hpp"

#include <nlohmann/json.hpp>

namespace coinfer {

std::vector<BatchSpec> batching_candidates(const BatchingChoices& choices, const BatchSpec& current, int size_limit) {
  const std::vector<double> windows = choices.windows_ms.empty() ? std::vector<double>{current.window_ms} : choices.windows_ms;
  const std::vector<int> sizes = choices.sizes.empty() ? std::vector<int>{current.max_size} : choices.sizes;
  std::vector<BatchSpec> out;
  for (double w : windows)
    for (int b : sizes)
      if (b >= 1 && b <= size_limit) out.push_back({w, b});
  return out;
}

Scheme choose_batching(const AnalyticEstimator& est, const SystemState& state, Scheme scheme, const BatchingChoices& choices,
                       std::vector<BatchingChosen>* chosen) {
  for (const ServerState& sv : state.servers) {
    const BatchSpec current{sv.batch_window_ms, sv.batch_max_size};
    auto it = scheme.batching.find(sv.id);
    const BatchSpec start = it != scheme.batching.end() ? it->second : current;
    Scheme best = scheme;
    best.batching[sv.id] = start;
    int candidates = 0;
    for (const BatchSpec& spec : batching_candidates(choices, start, sv.batch_size_limit)) {
      if (spec == start) continue;
      ++candidates;
      Scheme cand = best;
      cand.batching[sv.id] = spec;
      if (est.compare(state, cand, best) > 1e-12) best = std::move(cand);
    }
    // A server left as it is needs no entry (the engines are told changes only either way).
    if (best.batching[sv.id] == current) best.batching.erase(sv.id);
    scheme = std::move(best);
    if (chosen) {
      BatchingChosen c;
      c.server = sv.id;
      c.batching = scheme.batching.count(sv.id) ? scheme.batching.at(sv.id) : current;
      c.candidates = candidates + 1;
      const Prediction p = est.predict(state, scheme);
      c.predicted_throughput_rps = p.throughput_rps;
      c.predicted_latency_ms = p.mean_latency_s * 1e3;
      chosen->push_back(c);
    }
  }
  return scheme;
}

Scheme BatchingChoosingScheduler::decide(const SystemState& state) {
  chosen_.clear();
  return choose_batching(est_, state, inner_->decide(state), choices_, &chosen_);
}

std::string BatchingChoosingScheduler::decision_detail() const {
  const std::string inner = inner_->decision_detail();
  nlohmann::ordered_json j = inner.empty() ? nlohmann::ordered_json::object() : nlohmann::ordered_json::parse(inner);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const BatchingChosen& c : chosen_)
    list.push_back({{"server", c.server},
                    {"window_ms", c.batching.window_ms},
                    {"max_size", c.batching.max_size},
                    {"candidates", c.candidates},
                    {"predicted_throughput_rps", c.predicted_throughput_rps},
                    {"predicted_latency_ms", c.predicted_latency_ms}});
  j["batching"] = list;
  return j.dump();
}

}  // namespace coinfer
