#pragma once
// hierarchical: ACE-GNN's two-stage search (Alg. 1) (formulation in sched/README.md).
#include <string>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

// ACE-GNN Alg. 1. Options {data_parallel, PP_comp, PP_comm}; coarse-grained: rank all combinations
// (devices of the same type, model, dataset, server and link bandwidth share one choice when
// share_groups); fine-grained: shift each PP split left and right (within 0..n, so pp(0) = offload
// and pp(n) = local are reachable) while the estimator predicts a gain, at most T rounds. When the
// coarse space exceeds max_schemes combinations (default 3^6 = 729), the coarse stage makes coordinate
// rounds instead (each group its best option with the others fixed, until a round changes nothing, at
// most T + 1 rounds): work O(groups x options x rounds) instead of the options' product.
// With use_helpers, every connected idle device (no inputs of its own) is named a helper (ACE-GNN
// Sec. III-D): the server forwards pending work to it.
class HierarchicalScheduler : public Scheduler {
 public:
  HierarchicalScheduler(const AnalyticEstimator& est, int iterations = 10, bool share_groups = true, long long max_schemes = 729,
                        bool use_helpers = true)
      : HierarchicalScheduler(est, est, iterations, share_groups, max_schemes, use_helpers) {}
  HierarchicalScheduler(const AnalyticEstimator& est, const Estimator& rank, int iterations = 10, bool share_groups = true,
                        long long max_schemes = 729, bool use_helpers = true)
      : est_(est), rank_(rank), iterations_(iterations), share_groups_(share_groups), max_schemes_(max_schemes), use_helpers_(use_helpers) {}
  std::string name() const override { return "hierarchical"; }
  Scheme decide(const SystemState& state) override;

 private:
  const AnalyticEstimator& est_;
  const Estimator& rank_;
  int iterations_;
  bool share_groups_;
  long long max_schemes_;
  bool use_helpers_;
};

// Decision work, in device-solves, of a decision on `state` (the unit of bench/RESULTS.md "Scale":
// ~0.4-1 us each on this project's 2-core machine): about what hierarchical's first round costs (3
// options per group and variant, fewer where they coincide; stage 1 ranking every combination, each
// re-solving every server, when there are at most max_schemes, else one coordinate round; one climb
// step per group and split, each re-solving the group's server); later rounds add to it, remembered
// solutions subtract.
double hierarchical_work(const AnalyticEstimator& est, const SystemState& state, bool share_groups, long long max_schemes);

}  // namespace coinfer
