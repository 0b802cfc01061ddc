#include "sched/gin_estimator.hpp"

#include <torch/torch.h>

#include <algorithm>

namespace coinfer {

namespace {
constexpr size_t kChunk = 512;  // graphs per forward pass

class OneThread {
 public:
  OneThread() : before_(torch::get_num_threads()) { torch::set_num_threads(1); }
  ~OneThread() { torch::set_num_threads(before_); }

 private:
  int before_;
};
}  // namespace

GinEstimator::GinEstimator(const AnalyticEstimator& analytic, GinPredictor predictor, std::string file)
    : analytic_(analytic), predictor_(std::move(predictor)), file_(std::move(file)) {}

GraphInput GinEstimator::graph(const SystemState& state, const Scheme& scheme) const {
  if (predictor_.meta().config.layout == kFeatureLayoutHint) return GraphInput::of(SystemGraph::build(state, scheme, analytic_));
  return GraphInput::of(SystemGraph::build(state, scheme, analytic_.luts(), analytic_.models()));
}

double GinEstimator::score(const SystemState& state, const Scheme& scheme) const { return score_many(state, {scheme}).front(); }

std::vector<double> GinEstimator::score_many(const SystemState& state, const std::vector<Scheme>& schemes) const {
  OneThread one;
  if (predictor_.meta().has_system) {
    std::vector<double> out;
    for (size_t start = 0; start < schemes.size(); start += kChunk) {
      std::vector<GraphInput> gs;
      for (size_t i = start; i < std::min(schemes.size(), start + kChunk); ++i) gs.push_back(graph(state, schemes[i]));
      std::vector<const GraphInput*> ptrs;
      for (const auto& g : gs) ptrs.push_back(&g);
      const auto part = predictor_.throughput(ptrs);
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  }
  // A relative-only file has no absolute scale: the analytic throughput stands in.
  std::vector<double> out;
  for (const auto& s : schemes) out.push_back(analytic_.score(state, s));
  return out;
}

double GinEstimator::compare(const SystemState& state, const Scheme& a, const Scheme& b) const {
  OneThread one;
  const GraphInput ga = graph(state, a), gb = graph(state, b);
  return predictor_.better_probability({{&ga, &gb}}).front() - 0.5;
}

int GinEstimator::best_of(const SystemState& state, const Scheme& incumbent, const std::vector<Scheme>& candidates) const {
  if (candidates.empty()) return -1;
  OneThread one;
  std::vector<GraphInput> gs;
  for (const auto& c : candidates) gs.push_back(graph(state, c));
  GraphInput inc = graph(state, incumbent);
  // Knock-out rounds: every remaining candidate against the incumbent in one batched pass (chunks of
  // kChunk); the most probable winner becomes the incumbent, and only the other winners (they beat the
  // old incumbent) meet it in the next round. Taking the single most probable winner of one round
  // is not enough: many candidates beat a poor incumbent with probability ~1, and the first of them
  // won (hierarchical + gin reached 0.89 of oracle's throughput on held-out systems that way).
  std::vector<size_t> alive(candidates.size());
  for (size_t i = 0; i < alive.size(); ++i) alive[i] = i;
  const GraphInput* current = &inc;
  int best = -1;
  while (!alive.empty()) {
    std::vector<double> p;
    for (size_t start = 0; start < alive.size(); start += kChunk) {
      std::vector<std::pair<const GraphInput*, const GraphInput*>> pairs;
      for (size_t i = start; i < std::min(alive.size(), start + kChunk); ++i) pairs.emplace_back(&gs[alive[i]], current);
      const auto part = predictor_.better_probability(pairs);
      p.insert(p.end(), part.begin(), part.end());
    }
    std::vector<size_t> winners;
    size_t top = 0;
    double top_p = 0.5 + 1e-9;
    for (size_t k = 0; k < alive.size(); ++k)
      if (p[k] > 0.5 + 1e-9) {
        winners.push_back(alive[k]);
        if (p[k] > top_p) top_p = p[k], top = alive[k];
      }
    if (winners.empty()) break;
    best = static_cast<int>(top);
    current = &gs[top];
    winners.erase(std::find(winners.begin(), winners.end(), top));
    alive = std::move(winners);
  }
  return best;
}

}  // namespace coinfer
