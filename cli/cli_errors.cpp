#include <stdlib.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/lut.hpp"

namespace coinfer::cli {

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const LutMissingError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}

namespace {
struct Verbosity {
  int verbose = 0;
  bool quiet = false;
};
Verbosity& verbosity() {
  static Verbosity v;
  return v;
}
void apply_verbosity() {
  try {
    log::set_from_flags(verbosity().verbose, verbosity().quiet);
  } catch (const InputError& e) {
    throw CLI::ValidationError(e.what());
  }
}
}  // namespace

void add_log_flags(CLI::App& app) {
  if (!app.get_option_no_throw("--verbose"))
    app.add_flag_function(
        "-v,--verbose", [](std::int64_t n) { verbosity().verbose += static_cast<int>(n), apply_verbosity(); },
        "log more: debug messages of every module (where data files came from, decisions, ...); see $COINFER_LOG");
  if (!app.get_option_no_throw("--quiet"))
    app.add_flag_function(
        "-q,--quiet", [](std::int64_t) { verbosity().quiet = true, apply_verbosity(); },
        "print warnings and errors only (no progress, no notes, no summary on success)");
  // A subcommand carried out by a companion program (it takes extras: cmd_companions.cpp) passes -q and
  // -v through to the companion, which has its own.
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (!sub->get_allow_extras()) add_log_flags(*sub);
}

bool quiet(const std::string& category) { return !log::enabled(log::Level::info, category); }

int start_logging() {
  try {
    log::set_from_environment();
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return -1;
}

int parse_command_line(CLI::App& app, int argc, char** argv, std::string& command_line) {
  if (const int rc = start_logging(); rc >= 0) return rc;
  add_log_flags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  return -1;
}

void check_output_folder(const std::string& dir, const std::string& option) {
  namespace fs = std::filesystem;
  fs::path p = fs::absolute(dir);
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  std::string probe = (p / ".coinfer-probe-XXXXXX").string();
  if (p.empty() || !fs::is_directory(p) || ::mkdtemp(probe.data()) == nullptr)
    throw InputError(SourceLocation{dir, 0, 0}, option, "output folder cannot be created or written (" + p.string() + ")");
  fs::remove(probe);
}

}  // namespace coinfer::cli
