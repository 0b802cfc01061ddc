#pragma once
// Schedulers that search the scheme space with the estimator (formulations in sched/README.md).
// greedy, dp and hierarchical take two estimators: `est`, the analytic one, for what the structure of
// the search needs (model specs, LUT-derived PP_comp/PP_comm splits, dp's server capacity), and
// `rank` for ranking schemes (the analytic estimator itself, or the learned one: estimator: gin).
// Each search round goes through Estimator::best_of, so a learned estimator compares a round's
// candidates in one batched forward pass.
#include <string>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

// Devices one by one (state order); each takes the option that is best for the system made of the
// devices decided so far (undecided devices are left out).
class GreedyScheduler : public Scheduler {
 public:
  explicit GreedyScheduler(const AnalyticEstimator& est) : GreedyScheduler(est, est) {}
  GreedyScheduler(const AnalyticEstimator& est, const Estimator& rank) : est_(est), rank_(rank) {}
  std::string name() const override { return "greedy"; }
  Scheme decide(const SystemState& state) override;

 private:
  const AnalyticEstimator& est_;
  const Estimator& rank_;
};

// Dynamic programming (multiple-choice knapsack) per server: each option of each device has a value,
// its isolated throughput (the device alone), and a weight, the server capacity it uses (isolated
// rate x server seconds per request, in units of 1/resolution of the workers); maximise the sum of
// values with the total weight within capacity. Exact for that model; the result is then what the
// estimator evaluates. Devices with options that use no server (local) always fit. With a learned
// `rank`, the values are its scores of each device alone (one batched pass per device); the weights
// stay analytic (a predictor of system throughput says nothing about server utilisation).
class DpScheduler : public Scheduler {
 public:
  DpScheduler(const AnalyticEstimator& est, int resolution = 200) : DpScheduler(est, est, resolution) {}
  DpScheduler(const AnalyticEstimator& est, const Estimator& rank, int resolution = 200)
      : est_(est), rank_(rank), resolution_(resolution) {}
  std::string name() const override { return "dp"; }
  Scheme decide(const SystemState& state) override;
  // The knapsack objective of the last decision (sum of isolated throughputs), for tests.
  double last_objective() const { return last_objective_; }

 private:
  const AnalyticEstimator& est_;
  const Estimator& rank_;
  int resolution_;
  double last_objective_ = 0;
};

// Exhaustive: every combination of every device's options; refuses (std::invalid_argument naming the
// limit) systems with more than max_schemes combinations.
class OracleScheduler : public Scheduler {
 public:
  OracleScheduler(const AnalyticEstimator& est, long long max_schemes = 20000) : est_(est), max_schemes_(max_schemes) {}
  std::string name() const override { return "oracle"; }
  Scheme decide(const SystemState& state) override;

 private:
  const AnalyticEstimator& est_;
  long long max_schemes_;
};

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
  HierarchicalScheduler(const AnalyticEstimator& est, int iterations = 10, bool share_groups = true,
                        long long max_schemes = 729, bool use_helpers = true)
      : HierarchicalScheduler(est, est, iterations, share_groups, max_schemes, use_helpers) {}
  HierarchicalScheduler(const AnalyticEstimator& est, const Estimator& rank, int iterations = 10, bool share_groups = true,
                        long long max_schemes = 729, bool use_helpers = true)
      : est_(est), rank_(rank), iterations_(iterations), share_groups_(share_groups), max_schemes_(max_schemes),
        use_helpers_(use_helpers) {}
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

// Decision work, in device-solves, of a decision on `state`: the analytic estimator solves a server's fixed
// point over its devices and, for one state, solves again only the server whose devices a candidate changes
// (one unit per device of that server; ~0.4-1 us each on this project's 2-core machine, bench/RESULTS.md
// "Scale"). greedy: exactly (each device's step predicts on the devices decided before it, a new state:
// its first option solves every server, the others the device's own: O(D^2) on one server, O(D^2 / S)
// spread over S). hierarchical: about what its first round costs (3 options per group and variant, fewer
// where they coincide; stage 1 ranking every combination, each re-solving every server, when there are at
// most max_schemes, else one coordinate round; one climb step per group and split, each re-solving the
// group's server); later rounds add to it, remembered solutions subtract.
double greedy_work(const AnalyticEstimator& est, const SystemState& state);
double hierarchical_work(const AnalyticEstimator& est, const SystemState& state, bool share_groups, long long max_schemes);

}  // namespace coinfer
