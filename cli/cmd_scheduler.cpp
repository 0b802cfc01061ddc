// coinfer scheduler list: the scheduler names a scenario may give (scheduler.name), one per line, so
// that scripts (tests/golden/matrix.py) pick up a new scheduler by themselves.
#include <iostream>

#include "cli/commands.hpp"
#include "sched/scheduler_factory.hpp"

namespace coinfer::cli {

void register_scheduler(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("scheduler", "schedulers a scenario can name (sched/README.md)");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "print every scheduler name, one per line");
  list->callback([&exit_code] {
    exit_code = guarded([] {
      for (const auto& n : scheduler_names()) std::cout << n << "\n";
      return 0;
    });
  });
}

}  // namespace coinfer::cli
