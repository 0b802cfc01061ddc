#include "sched/scheduler_factory.hpp"

#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "sched/static_scheduler.hpp"

namespace coinfer {

std::vector<std::string> scheduler_names() { return {"static"}; }

std::unique_ptr<Scheduler> make_scheduler(const Scenario& s) {
  const std::string& name = s.scheduler.name;
  if (name == "static") {
    for (const auto& kv : s.scheduler.params)
      throw InputError(SourceLocation{s.file, 0, 0}, "scheduler." + kv.first, "the static scheduler takes no parameters");
    std::map<std::string, Strategy> strategies;
    for (const auto& d : s.devices) strategies[d.id] = d.strategy;
    return std::make_unique<StaticScheduler>(strategies);
  }
  std::string near = nearest_word(name, scheduler_names());
  throw InputError(SourceLocation{s.file, 0, 0}, "scheduler.name",
                   "unknown scheduler '" + name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
                       " (available: " + join(scheduler_names()) + ")");
}

}  // namespace coinfer
