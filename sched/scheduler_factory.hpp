#pragma once
// Builds the scheduler a scenario names. Unknown names or parameters are InputErrors listing the
// allowed ones.
#include <memory>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/scheduler.hpp"

namespace coinfer {

std::vector<std::string> scheduler_names();
std::unique_ptr<Scheduler> make_scheduler(const Scenario& scenario);

}  // namespace coinfer
