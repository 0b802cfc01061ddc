#pragma once
// dp: the multiple-choice knapsack per server (dynamic programming, not data_parallel) (formulation in sched/README.md).
#include <string>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

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
  DpScheduler(const AnalyticEstimator& est, const Estimator& rank, int resolution = 200) : est_(est), rank_(rank), resolution_(resolution) {}
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

}  // namespace coinfer
