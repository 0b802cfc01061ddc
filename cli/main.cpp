// coinfer: simulate and replay device-edge co-inference of GNNs. See README.md.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"coinfer: device-edge GNN co-inference simulator (SimGrid) and testbed harness"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "coinfer 0.1.0");
  int exit_code = 0;
  coinfer::cli::register_run(app, exit_code);
  coinfer::cli::register_model(app, exit_code);
  coinfer::cli::register_lut(app, exit_code);
  coinfer::cli::register_sweep(app, exit_code);
  coinfer::cli::register_plot(app, exit_code);
  coinfer::cli::register_profile(app, exit_code);
  coinfer::cli::register_runtime(app, exit_code);
  coinfer::cli::register_validate(app, exit_code);
  coinfer::cli::register_scheduler(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // bad command line = bad input
  }
  return exit_code;
}
