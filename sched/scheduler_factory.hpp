#pragma once
// Builds the scheduler a scenario names. Unknown names or parameters are InputErrors listing the
// allowed ones.
#include <memory>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

std::vector<std::string> scheduler_names();
// `estimator` must outlive the scheduler.
std::unique_ptr<Scheduler> make_scheduler(const Scenario& scenario, const AnalyticEstimator& estimator);

}  // namespace coinfer
