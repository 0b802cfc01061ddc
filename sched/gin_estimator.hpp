#pragma once
// The learned estimator (`scheduler.estimator: gin`): ACE-GNN's predictors behind the
// Estimator interface. score() is the system predictor's throughput of the scheme's system graph;
// compare() and best_of() use the relative predictor. best_of runs knock-out rounds: every remaining
// candidate against the incumbent in one batched forward pass (per 512 candidates), the most probable
// winner (P > 0.5) becomes the incumbent and only the other winners go on; it stops when none wins.
// A file without a relative predictor compares by the system predictor. Graphs are built with the analytic estimator's
// LUTs and specs (and its prediction as the hint for kFeatureLayoutHint models). Part of the learned
// Torch target; the simulator reaches it through sched/learned_plugin.hpp. Inference runs on one
// intra-op thread (deterministic, and what ACE-GNN's per-inference time is measured on).
#include <memory>
#include <string>

#include "sched/analytic_estimator.hpp"
#include "sched/gin_predictor.hpp"

namespace coinfer {

class GinEstimator : public Estimator {
 public:
  // `analytic` must outlive this estimator.
  GinEstimator(const AnalyticEstimator& analytic, GinPredictor predictor, std::string file);
  double score(const SystemState& state, const Scheme& scheme) const override;
  double compare(const SystemState& state, const Scheme& a, const Scheme& b) const override;
  int best_of(const SystemState& state, const Scheme& incumbent, const std::vector<Scheme>& candidates) const override;
  std::vector<double> score_many(const SystemState& state, const std::vector<Scheme>& schemes) const override;
  std::string describe() const override { return "gin (" + file_ + ")"; }
  const GinPredictor& predictor() const { return predictor_; }
  GraphInput graph(const SystemState& state, const Scheme& scheme) const;

 private:
  const AnalyticEstimator& analytic_;
  GinPredictor predictor_;
  std::string file_;
};

}  // namespace coinfer
