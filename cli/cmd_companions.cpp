// Subcommands carried out by the LibTorch companion programs built beside coinfer (so that the
// simulator's `coinfer` never loads Torch): profile -> coinfer-profile; aggregation -> coinfer-aggregation; medn -> coinfer-medn; lut fill -> coinfer-lutfill; predictor train|eval -> coinfer-predictor; serve, device, testbed ->
// coinfer-rt; train sac|sparoa|thresholds -> coinfer-sac. The command line is passed through unchanged (--help included).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "plumbing/child_process.hpp"

namespace coinfer::cli {

std::string companion_path(const std::string& program) { return (std::filesystem::canonical("/proc/self/exe").parent_path() / program).string(); }

namespace {

void pass_through(CLI::App& app, int& exit_code, const std::string& name, const std::string& description, const std::string& program,
                  const std::string& program_subcommand) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->allow_extras();
  cmd->set_help_flag();  // --help goes through to the companion
  cmd->callback([cmd, &exit_code, program, program_subcommand] {
    const std::string exe = companion_path(program);
    if (!std::filesystem::exists(exe)) {
      log::error("run", "this coinfer was built without LibTorch (" + exe + " is missing); scripts/setup.sh installs libtorch-dev, then rebuild");
      exit_code = 2;
      return;
    }
    std::vector<std::string> args = {exe};
    if (!program_subcommand.empty()) args.push_back(program_subcommand);
    for (const auto& a : cmd->remaining()) args.push_back(a);
    exit_code = guarded([&]() -> int { exec_replace(args); });
  });
}

}  // namespace

void register_profile(CLI::App& app, int& exit_code) {
  pass_through(app, exit_code, "profile", "measure a LUT of a model on this machine (see coinfer profile --help)", "coinfer-profile", "");
}

void register_aggregation(CLI::App& app, int& exit_code) {
  pass_through(app, exit_code, "aggregation",
               "time one GNN inference on this CPU with PyG's standard, PyG's memory-efficient or feature-decomposed aggregation (see coinfer "
               "aggregation --help)",
               "coinfer-aggregation", "");
}

void register_medn(CLI::App& app, int& exit_code) {
  pass_through(app, exit_code, "medn",
               "the MEDN paper's latency-prediction study on this machine: time its nine modules under real background load, fit and "
               "compare the regressors (see coinfer medn --help)",
               "coinfer-medn", "");
}

void register_lut_fill(CLI::App& lut, int& exit_code) {
  pass_through(lut, exit_code, "fill",
               "estimate the entries a scenario needs and its LUTs lack with per-module regressors (see coinfer lut fill --help)", "coinfer-lutfill",
               "");
}

void register_predictor_companion(CLI::App& predictor, int& exit_code) {
  pass_through(predictor, exit_code, "train", "train the GIN system and relative predictors on a sample set (see coinfer predictor train --help)",
               "coinfer-predictor", "train");
  pass_through(predictor, exit_code, "eval",
               "accuracy of learned predictors and the analytic estimator on a sample set (see coinfer predictor eval --help)", "coinfer-predictor",
               "eval");
}

void register_train(CLI::App& app, int& exit_code) {
  CLI::App* train = app.add_subcommand("train", "train a learned scheduler in simulation (train sac, train sparoa, train thresholds)");
  train->require_subcommand(1);
  pass_through(*train, exit_code, "sac", "SparOA's Soft Actor-Critic scheduling policy, trained on simulated episodes (see coinfer train sac --help)",
               "coinfer-sac", "sac");
  pass_through(*train, exit_code, "sparoa",
               "SparOA's operator scheduler: a SAC policy placing a device's stages on its CPU and GPU, trained on simulated inferences (see coinfer "
               "train sparoa --help)",
               "coinfer-sac", "sparoa");
  pass_through(*train, exit_code, "thresholds",
               "SparOA's threshold predictor for a device's board, trained on a grid search over the synthesised roofline (see coinfer train "
               "thresholds --help)",
               "coinfer-sac", "thresholds");
}

void register_runtime(CLI::App& app, int& exit_code) {
  pass_through(app, exit_code, "serve", "run a real edge server for a scenario (see coinfer serve --help)", "coinfer-rt", "serve");
  pass_through(app, exit_code, "device", "run one real device of a scenario (see coinfer device --help)", "coinfer-rt", "device");
  pass_through(app, exit_code, "testbed",
               "run a scenario on a testbed: emulated (network namespaces, tc, real processes) or real hosts over SSH (--inventory; see coinfer "
               "testbed --help)",
               "coinfer-rt", "testbed");
}

}  // namespace coinfer::cli
