#include "io/data_root.hpp"

#include <cstdlib>
#include <filesystem>

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

std::string data_path(const std::string& relative, std::string* origin) {
  const std::vector<DataRoot> c = data_root_candidates();
  std::error_code ec;
  for (const DataRoot& r : c) {
    const fs::path p = fs::path(r.path) / relative;
    if (fs::exists(p, ec)) {
      if (origin) *origin = r.origin + " (" + r.path + ")";
      return p.string();
    }
  }
  if (origin) *origin = c.back().origin + " (" + c.back().path + ")";
  return (fs::path(c.back().path) / relative).string();
}

}  // namespace coinfer
