#pragma once
// `coinfer train sparoa`: SparOA's operator scheduler (sched/sparoa_learner.hpp) trained for one device
// of a scenario (its board, model and the stages its strategy keeps on the board); `coinfer train
// thresholds`: SparOA's threshold predictor (sched/threshold_predictor.hpp) for that device's board.
// Part of coinfer-sac.
#include <CLI/CLI.hpp>

#include <string>

namespace coinfer::cli {

struct SparoaTrainCli;
// Adds the `sparoa` and `thresholds` subcommands to `train`; `run()` carries it out once parsed (0, or 2 for bad input).
class SparoaTrainCommand {
 public:
  explicit SparoaTrainCommand(CLI::App& train);
  ~SparoaTrainCommand();
  bool chosen() const;
  int run(const std::string& command_line);

 private:
  int run_thresholds(const std::string& command_line);
  SparoaTrainCli* o_;
  CLI::App* cmd_;
  CLI::App* thresholds_cmd_;
};

}  // namespace coinfer::cli
