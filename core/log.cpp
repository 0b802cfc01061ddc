#include "core/log.hpp"

#include <fstream>

#include <spdlog/cfg/helpers.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>

#include "core/input_error.hpp"
#include "core/text_util.hpp"

namespace coinfer::log {

namespace {

spdlog::level::level_enum to_spdlog(Level l) {
  switch (l) {
    case Level::debug:
      return spdlog::level::debug;
    case Level::info:
      return spdlog::level::info;
    case Level::warn:
      return spdlog::level::warn;
    case Level::error:
      return spdlog::level::err;
    case Level::off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

// The loggers live in spdlog's registry (one per process, in libspdlog.so), so a copy of this file
// linked into a plugin logs at the same levels as the program that loaded it.
std::shared_ptr<spdlog::logger> logger_for(const std::string& category) {
  if (auto l = spdlog::get(category)) return l;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (auto l = spdlog::get(category)) return l;
  static const auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto l = std::make_shared<spdlog::logger>(category, sink);
  try {
    spdlog::initialize_logger(l);  // registers it, at the configured level
  } catch (const spdlog::spdlog_ex&) {
    if (auto other = spdlog::get(category)) return other;  // another copy registered it first
    throw;
  }
  l->set_pattern("%v");  // the prefix is ours (write())
  l->flush_on(spdlog::level::debug);
  return l;
}

bool known_level(const std::string& name) {
  static const std::vector<std::string> names = {"trace", "debug", "info", "warning", "warn", "error", "err", "critical", "off"};
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const std::vector<std::string>& categories() {
  static const std::vector<std::string> c = {"run",      "sweep",    "plan",    "predictor", "profile", "lut",   "data",   "sched",
                                             "scenario", "validate", "testbed", "serve",     "device",  "train", "report", "output"};
  return c;
}

void write(Level level, const std::string& category, const std::string& message) {
  auto l = logger_for(category);
  const auto sl = to_spdlog(level);
  if (!l->should_log(sl)) return;
  switch (level) {
    case Level::warn:
      l->log(sl, "warning: {}", message);
      break;
    case Level::error:
      l->log(sl, "error: {}", message);
      break;
    default:
      l->log(sl, "[{}] {}", category, message);
      break;
  }
}

void warn_once(const std::string& category, const std::string& message) {
  static std::mutex m;
  static std::set<std::string> given;
  {
    std::lock_guard<std::mutex> lock(m);
    if (!given.insert(category + '\n' + message).second) return;
  }
  write(Level::warn, category, message);
}

bool enabled(Level level, const std::string& category) { return logger_for(category)->should_log(to_spdlog(level)); }

void set_levels(const std::string& spec, const std::string& source) {
  if (spec.size() > 512) throw InputError(source + ": a log level specification of at most 512 characters is expected");
  for (const std::string& raw : split(spec, ',')) {
    const std::string item = trim(raw);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string category = eq == std::string::npos ? "" : trim(item.substr(0, eq));
    const std::string level = to_lower(trim(eq == std::string::npos ? item : item.substr(eq + 1)));
    if (!known_level(level)) throw InputError(source + ": '" + printable(level, 40) + "' is not a log level (debug, info, warn, error, off)");
    if (eq != std::string::npos) {
      const auto& cs = categories();
      if (std::find(cs.begin(), cs.end(), category) == cs.end()) {
        const std::string near = nearest_word(category, cs);
        throw InputError(source + ": no log category '" + printable(category, 40) + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
                         " (categories: " + join(cs) + ")");
      }
    }
  }
  for (const auto& c : categories()) logger_for(c);  // so levels reach every category now
  spdlog::cfg::helpers::load_levels(spec);
}

void set_from_environment() {
  if (const char* env = std::getenv("COINFER_LOG")) set_levels(env, "$COINFER_LOG");
}

void set_from_flags(int verbose, bool quiet) {
  if (verbose > 0 && quiet) throw InputError("-v/--verbose and -q/--quiet: give one of them");
  set_from_environment();
  std::string spec;
  if (verbose > 0) spec = "debug";
  if (quiet) spec = "warn";
  if (spec.empty()) return;
  set_levels(spec, verbose > 0 ? "--verbose" : "--quiet");
  ::setenv("COINFER_LOG", spec.c_str(), 1);
}

namespace {
double steady_seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

PhaseTimer::PhaseTimer(std::string category) : category_(std::move(category)), last_s_(steady_seconds()) {}

namespace {
// The process's peak resident memory so far in MiB (Linux /proc/self/status VmHWM), -1 where unknown.
long peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10) / 1024;
  return -1;
}
}  // namespace

void PhaseTimer::mark(const std::string& what) {
  const double now = steady_seconds();
  if (enabled(Level::debug, category_)) {
    const long peak = peak_rss_mib();
    debug(category_,
          what + ": " + strprintf("%.3f", now - last_s_) + " s" + (peak >= 0 ? " (peak RSS so far " + std::to_string(peak) + " MiB)" : ""));
  }
  last_s_ = now;
}

}  // namespace coinfer::log
