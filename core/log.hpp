#pragma once
// One logging facility for every program of coinfer (spdlog underneath, kept out of this header).
//
// A message has a level and a category (the module that says it). It goes to stderr as
//   debug, info:  "[category] message"
//   warn:         "warning: message"
//   error:        "error: message"
// so a line of progress reads like before and a warning or error reads the same in every program.
// Results (tables, summaries a command was asked for) are not log messages: they go to stdout.
//
// Levels, lowest first: debug, info, warn, error, off. The default is info. A program sets them from
//   -v / --verbose        debug everywhere
//   -q / --quiet          warn everywhere (no progress, no notes; warnings and errors still print)
//   $COINFER_LOG          spdlog's syntax: "debug", "warn,sweep=debug", "off"; the command-line flags
//                         win over it. Programs started by coinfer inherit it (set_from_flags exports
//                         the flags' choice), so a sweep's points log like the sweep.
// A category not in `categories()`, or a level name spdlog does not know, is an InputError (spdlog
// itself would ignore it silently).
//
// Thread-safe: the engines' threads (serve, device) log concurrently.
#include <string>
#include <vector>

namespace coinfer::log {

enum class Level { debug, info, warn, error, off };

// Category names, one per module that logs: "run", "sweep", "plan", "predictor", "profile",
// "lut", "data", "sched", "scenario", "validate", "testbed", "serve", "device", "train", "report", "output".
const std::vector<std::string>& categories();

void write(Level level, const std::string& category, const std::string& message);
inline void debug(const std::string& category, const std::string& message) { write(Level::debug, category, message); }
inline void info(const std::string& category, const std::string& message) { write(Level::info, category, message); }
inline void warn(const std::string& category, const std::string& message) { write(Level::warn, category, message); }
inline void error(const std::string& category, const std::string& message) { write(Level::error, category, message); }
// A warning printed the first time this exact message is given in this process, not again: what a
// scenario's set-up says about a file it loads, when the set-up runs twice (checked before the run,
// then run: `coinfer run` built the scheduler twice and printed a policy's trust warnings twice).
void warn_once(const std::string& category, const std::string& message);

// Whether a message of `level` in `category` would print (to skip building an expensive one, and for
// progress lines, which print at info).
bool enabled(Level level, const std::string& category);

// Applies a level specification in spdlog's syntax ("info", "warn,sweep=debug"). `source` names where
// it came from for the error ("$COINFER_LOG", "--log-level"). Throws InputError.
void set_levels(const std::string& spec, const std::string& source);

// Reads $COINFER_LOG (if set), then applies -v (verbose > 0: debug) or -q (warn) on top, and exports
// the result to $COINFER_LOG for the programs this one starts. Throws InputError (bad $COINFER_LOG, or
// both flags).
void set_from_flags(int verbose, bool quiet);

// Reads $COINFER_LOG only (programs started by coinfer, before their own flags are parsed).
void set_from_environment();

// Where time goes, at debug level: each mark() logs "WHAT: S s (peak RSS so far M MiB)" since the
// previous mark (or the construction) in `category`; the peak from /proc/self/status (Linux). Costs a
// clock reading when debug is off.
class PhaseTimer {
 public:
  explicit PhaseTimer(std::string category);
  void mark(const std::string& what);

 private:
  std::string category_;
  double last_s_;
};

}  // namespace coinfer::log
