#pragma once
// greedy: a scheduler that decides device by device with the estimator (formulation in sched/README.md).
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

// Decision work, in device-solves, of a decision on `state` (the unit of bench/RESULTS.md "Scale": the
// analytic estimator solves a server's fixed point over its devices, one unit per device of that
// server): greedy's, exactly. Each device's step predicts on the devices decided before it, a new
// state: its first option solves every server, the others the device's own: O(D^2) on one server,
// O(D^2 / S) spread over S.
double greedy_work(const AnalyticEstimator& est, const SystemState& state);

}  // namespace coinfer
