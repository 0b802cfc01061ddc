// coinfer: simulate and replay device-edge co-inference of GNNs. See README.md.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "core/text_util.hpp"

namespace {

// CLI11 alone answers an unknown subcommand with "A subcommand is required". Walks the words of the
// command line down the subcommand tree; the first word that names no subcommand where one is
// expected is reported with the nearest name and the list. Returns 2 then, else 0.
int check_subcommands(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  std::string path = "coinfer";
  for (int k = 1; k < argc; ++k) {
    const std::string word = argv[k];
    if (word.empty() || word[0] == '-') return 0;  // options are CLI11's to check
    const std::vector<CLI::App*> subs = cur->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) return 0;  // a leaf: the rest are its arguments
    // A command with positional arguments of its own (sweep GRID) takes the word as one of them.
    if (!cur->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty()) return 0;
    CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (CLI::App* s : subs) {
      names.push_back(s->get_name());
      if (s->get_name() == word) next = s;
    }
    if (!next) {
      const std::string near = coinfer::nearest_word(word, names);
      std::cerr << "error: '" << path << "' has no subcommand '" << coinfer::printable(word, 80) << "'"
                << (near.empty() ? "" : "; did you mean '" + near + "'?") << " (subcommands: " << coinfer::join(names) << ")\n";
      return 2;
    }
    cur = next;
    path += " " + word;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"coinfer: device-edge GNN co-inference simulator (SimGrid) and testbed harness"};
  app.name("coinfer");  // usage lines read "coinfer run ...", however the binary was invoked
  app.require_subcommand(1);
  coinfer::cli::set_invocation(argc, argv);  // results record how they were made
  app.set_version_flag("--version", "coinfer " COINFER_VERSION_STRING);
  // Data folders (io/data_root.hpp): --root wins, and reaches the companion programs through the
  // environment.
  app.add_option_function<std::string>(
         "--root", [](const std::string& dir) { ::setenv("COINFER_ROOT", dir.c_str(), 1); },
         "project folder holding models/, traces/, plots/ (default: $COINFER_ROOT, else the scenario's or the working "
         "directory's project, else the installed or source data)")
      ->trigger_on_parse();
  int exit_code = 0;
  coinfer::cli::register_run(app, exit_code);
  coinfer::cli::register_model(app, exit_code);
  coinfer::cli::register_lut(app, exit_code);
  coinfer::cli::register_sweep(app, exit_code);
  coinfer::cli::register_plot(app, exit_code);
  coinfer::cli::register_report(app, exit_code);
  coinfer::cli::register_collect(app, exit_code);
  coinfer::cli::register_profile(app, exit_code);
  coinfer::cli::register_aggregation(app, exit_code);
  coinfer::cli::register_medn(app, exit_code);
  coinfer::cli::register_runtime(app, exit_code);
  coinfer::cli::register_validate(app, exit_code);
  coinfer::cli::register_scheduler(app, exit_code);
  coinfer::cli::register_predictor(app, exit_code);
  coinfer::cli::register_train(app, exit_code);
  coinfer::cli::register_plan(app, exit_code);
  coinfer::cli::register_reproduce(app, exit_code);
  coinfer::cli::register_version(app, exit_code);
  coinfer::cli::register_schema(app, exit_code);
  coinfer::cli::add_log_flags(app);
  if (const int rc = coinfer::cli::start_logging(); rc >= 0) return rc;
  if (const int rc = check_subcommands(app, argc, argv)) return rc;
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
