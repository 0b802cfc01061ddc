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

double GinEstimator::score(const SystemState& state, const Scheme& scheme) const {
  return score_many(state, {scheme}).front();
}

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
  const GraphInput inc = graph(state, incumbent);
  int best = -1;
  double top = 0.5 + 1e-9;
  // One forward pass per chunk of candidates (a round of a few hundred is one pass; chunks bound the
  // activations of stage 1's thousands of combinations).
  for (size_t start = 0; start < candidates.size(); start += kChunk) {
    std::vector<GraphInput> gs;
    for (size_t i = start; i < std::min(candidates.size(), start + kChunk); ++i) gs.push_back(graph(state, candidates[i]));
    std::vector<std::pair<const GraphInput*, const GraphInput*>> pairs;
    for (const auto& g : gs) pairs.emplace_back(&g, &inc);
    const auto p = predictor_.better_probability(pairs);
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] > top) top = p[i], best = static_cast<int>(start + i);
  }
  return best;
}

}  // namespace coinfer
