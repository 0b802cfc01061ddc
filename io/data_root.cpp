#include "io/data_root.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "core/log.hpp"

#ifndef COINFER_SOURCE_DIR
#define COINFER_SOURCE_DIR "."
#endif
#ifndef COINFER_INSTALL_DATA_DIR
#define COINFER_INSTALL_DATA_DIR ""
#endif

namespace fs = std::filesystem;

namespace coinfer {

namespace {
std::string& scenario_hint() {
  static std::string hint;
  return hint;
}

// The nearest folder at or above `start` that holds models/specs/; "" if none.
std::string project_above(fs::path start) {
  std::error_code ec;
  start = fs::absolute(start, ec);
  for (fs::path p = start; !p.empty(); p = p.parent_path()) {
    if (fs::is_directory(p / "models" / "specs", ec)) return p.string();
    if (p == p.parent_path()) break;
  }
  return "";
}
}  // namespace

void set_scenario_hint(const std::string& scenario_file) { scenario_hint() = scenario_file; }

std::vector<DataRoot> data_root_candidates() {
  std::vector<DataRoot> c;
  if (const char* env = std::getenv("COINFER_ROOT"); env && *env) c.push_back({env, "--root/COINFER_ROOT"});
  if (!scenario_hint().empty()) {
    const std::string p = project_above(fs::path(scenario_hint()).parent_path());
    if (!p.empty()) c.push_back({p, "the scenario's project"});
  }
  std::error_code ec;
  const std::string cwd = project_above(fs::current_path(ec));
  if (!cwd.empty()) c.push_back({cwd, "the working directory's project"});
  // Installed data: beside the running program (<prefix>/bin/coinfer -> <prefix>/share/coinfer, so an
  // installation can move), then the configured prefix.
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path() / "share" / "coinfer";
    if (fs::is_directory(beside / "models", ec)) c.push_back({beside.string(), "installed"});
  }
  if (*COINFER_INSTALL_DATA_DIR && fs::is_directory(COINFER_INSTALL_DATA_DIR, ec)) c.push_back({COINFER_INSTALL_DATA_DIR, "installed"});
  c.push_back({COINFER_SOURCE_DIR, "source tree"});
  return c;
}

namespace {
std::mutex& resolved_mutex() {
  static std::mutex m;
  return m;
}
std::vector<DataFileOrigin>& resolved() {
  static std::vector<DataFileOrigin> r;
  return r;
}
void remember(const std::string& relative, const std::string& path, const std::string& origin) {
  std::lock_guard<std::mutex> lock(resolved_mutex());
  for (const auto& f : resolved())
    if (f.role == relative && f.path == path) return;
  resolved().push_back({relative, path, origin});
  log::debug("data", relative + ": " + path + " from " + origin);
}
}  // namespace

std::string data_path(const std::string& relative, std::string* origin) {
  const std::vector<DataRoot> c = data_root_candidates();
  std::error_code ec;
  for (const DataRoot& r : c) {
    const fs::path p = fs::path(r.path) / relative;
    if (fs::exists(p, ec)) {
      const std::string why = r.origin + " (" + r.path + ")";
      if (origin) *origin = why;
      remember(relative, p.string(), why);
      return p.string();
    }
  }
  const std::string why = c.back().origin + " (" + c.back().path + "), where it is missing";
  if (origin) *origin = why;
  remember(relative, (fs::path(c.back().path) / relative).string(), why);
  return (fs::path(c.back().path) / relative).string();
}

std::vector<DataFileOrigin> resolved_data_files() {
  std::lock_guard<std::mutex> lock(resolved_mutex());
  return resolved();
}

std::vector<DataFileOrigin> run_data_files(const Scenario& s, const LutSet& luts) {
  std::vector<DataFileOrigin> out;
  out.push_back({"scenario", s.file, "given on the command line"});
  for (const auto& f : resolved_data_files()) out.push_back(f);
  // LUT files: one entry per file, naming its tables and what kind of numbers they hold.
  std::map<std::string, std::vector<std::string>> tables;
  std::map<std::string, std::set<std::string>> kinds;
  std::vector<std::string> order;
  // Files read and files whose tables are of types the run does not use (LutSet::unread), in key order.
  std::map<LutKey, std::string> named = luts.unread();
  for (const LutKey& k : luts.keys()) named.emplace(k, luts.origin(k));
  for (const auto& [k, f] : named) {
    if (!tables.count(f)) order.push_back(f);
    tables[f].push_back(k.to_string());
    if (luts.unread().count(k)) continue;
    const std::string kind = luts.table(k).provenance().kind;
    kinds[f].insert(kind.empty() ? "unlabelled" : kind);
  }
  for (const auto& f : order) {
    std::string t, kd;
    for (const auto& x : tables[f]) t += (t.empty() ? "" : ", ") + x;
    for (const auto& x : kinds[f]) kd += (kd.empty() ? "" : "/") + x;
    out.push_back({"lut", f,
                   kinds.count(f) ? "named by the scenario (luts); " + kd + "; tables " + t
                                  : "named by the scenario (luts); not read (no device or server of the scenario has its type); tables " + t});
  }
  if (!s.hardware_file.empty()) {  // the device profiles the devices' processors and memory came from
    std::set<std::string> types;
    for (const auto& d : s.devices)
      if (d.hardware) types.insert(d.type);
    std::string t;
    for (const auto& x : types) t += (t.empty() ? "" : ", ") + x;
    out.push_back(
        {"device profiles", s.hardware_file,
         "the scenario's hardware (processors, memory, interconnect)" + (t.empty() ? std::string("; no device type uses it") : " of " + t)});
  }
  std::set<std::string> seen;
  for (const auto& d : s.devices) {
    if (!d.link.trace_file.empty() && seen.insert("b" + d.link.trace_file).second)
      out.push_back({"bandwidth trace", d.link.trace_file, "named by the scenario (device " + d.id + " link.trace)"});
    if (!d.workload.file.empty() && seen.insert("a" + d.workload.file).second)
      out.push_back({"arrival trace", d.workload.file, "named by the scenario (device " + d.id + " workload.file)"});
    if (!d.movement.trace_file.empty() && seen.insert("m" + d.movement.trace_file).second)
      out.push_back({"mobility trace", d.movement.trace_file, "named by the scenario (device " + d.id + " movement.trace)"});
  }
  return out;
}

}  // namespace coinfer
