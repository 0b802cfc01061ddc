#pragma once
// Subcommand registration for the `coinfer` program. Each register_* adds a subcommand to the app and
// stores its options in `state`; the callback runs the command and sets exit_code.
#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>
#include <string>

namespace coinfer {
struct RunResults;
}

namespace coinfer::cli {

// Runs `body`, mapping InputError (and other bad-input errors) to exit code 2 with "error: ..." on
// stderr, and any other exception to exit code 1.
int guarded(const std::function<int()>& body);

// Refuses (InputError naming `option`) an output folder that cannot be created or written, without
// leaving anything behind: a probe folder is made in the nearest existing ancestor and removed.
void check_output_folder(const std::string& dir, const std::string& option);

// Adds -v/--verbose and -q/--quiet to `app` and to every subcommand below it (core/log.hpp: they set
// the log levels as they are parsed, and reach the programs this one starts through $COINFER_LOG).
void add_log_flags(CLI::App& app);
// Applies $COINFER_LOG: -1 when the program goes on, else 2 after printing the error.
int start_logging();
// Whether a command should print nothing but warnings and errors (-q, or $COINFER_LOG above info for
// `category`): no progress, no summary on success.
bool quiet(const std::string& category);

// Parses a companion program's command line (coinfer-profile, coinfer-lutfill): -1 when the program
// goes on, else its exit code (0 after --help, 2 for a usage error, printed by CLI11). Applies
// $COINFER_LOG and adds the log flags (add_log_flags) first. command_line
// gets argv joined by spaces (for provenance).
int parse_command_line(CLI::App& app, int argc, char** argv, std::string& command_line);

void register_run(CLI::App& app, int& exit_code);
void register_model(CLI::App& app, int& exit_code);
void register_lut(CLI::App& app, int& exit_code);
void register_sweep(CLI::App& app, int& exit_code);
void register_plot(CLI::App& app, int& exit_code);
void register_report(CLI::App& app, int& exit_code);  // report (an HTML page; in cmd_plot.cpp)
void register_profile(CLI::App& app, int& exit_code);
void register_aggregation(CLI::App& app, int& exit_code);
void register_medn(CLI::App& app, int& exit_code);
void register_runtime(CLI::App& app, int& exit_code);   // serve, device, testbed
void register_lut_fill(CLI::App& lut, int& exit_code);  // lut fill (a subcommand of lut)
void register_validate(CLI::App& app, int& exit_code);
void register_scheduler(CLI::App& app, int& exit_code);                  // scheduler list
void register_plan(CLI::App& app, int& exit_code);                       // plan (ACE-GNN's planning phase)
void register_predictor(CLI::App& app, int& exit_code);                  // predictor samples|add (train|eval: coinfer-predictor)
void register_predictor_companion(CLI::App& predictor, int& exit_code);  // predictor train|eval
void register_train(CLI::App& app, int& exit_code);                      // train sac (coinfer-sac)
void register_reproduce(CLI::App& app, int& exit_code);                  // reproduce (the seed papers' items, reproduce/)

// The per-device table `coinfer run` prints (completed, failed, throughput, latency, energy).
void print_run_table(const RunResults& r, std::ostream& os);
void register_collect(CLI::App& app, int& exit_code);  // collect (journals of a real run -> results)
void register_version(CLI::App& app, int& exit_code);
void register_schema(
    CLI::App& app, int& exit_code);  // schema (results.h5 columns, JSON-lines keys)  // version (program, commit, protocol, SimGrid, HDF5, LibTorch)
// The command line this process was started with (main() records it), shell-quoted.
void set_invocation(int argc, char** argv);
const std::string& invocation();
// Fills r.made_by's program, commit, command line and working directory (the scenario's overrides
// and resolved YAML come from run_results_of).
void stamp_provenance(RunResults& r);

// A program built beside this one (coinfer-profile, coinfer-rt).
std::string companion_path(const std::string& program);

}  // namespace coinfer::cli
