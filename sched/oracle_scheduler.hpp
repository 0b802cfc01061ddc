#pragma once
// oracle: the exhaustive search over every device's options (formulation in sched/README.md).
#include <string>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

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

}  // namespace coinfer
