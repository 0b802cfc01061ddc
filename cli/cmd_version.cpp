// coinfer version: what this program is and what it runs on (the engine a result was made with).
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "build_commit.hpp"  // generated at build time (cmake/build_commit.cmake)
#include "cli/commands.hpp"
#include "core/run_results.hpp"
#include "hw/frame.hpp"
#include "io/hdf5_version.hpp"
#include "sim/simgrid_api.hpp"

#ifndef COINFER_TORCH_VERSION
#define COINFER_TORCH_VERSION ""
#endif

namespace coinfer::cli {

namespace {

nlohmann::ordered_json version_info() {
  const std::string torch = COINFER_TORCH_VERSION;
  return {{"coinfer", COINFER_VERSION_STRING},
          {"commit", COINFER_GIT_COMMIT},
          {"protocol", static_cast<int>(hw::kProtocolVersion)},
          {"simgrid", sim::runtime_version()},
          {"simgrid_built_with", sim::build_version()},
          {"hdf5", h5::library_version()},
          // coinfer itself never links LibTorch: its companions (coinfer-profile, -predictor, -sac,
          // coinfer-rt) do, when the build found it.
          {"libtorch", torch.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(torch)}};
}

std::string& invocation_storage() {
  static std::string s;
  return s;
}

// 'word' when it needs no quoting for a POSIX shell, else single-quoted.
std::string shell_quoted(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == std::string::npos) return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

void set_invocation(int argc, char** argv) {
  std::string& s = invocation_storage();
  s.clear();
  // The program by its name ("coinfer"), not the path it was started from: the same command from another
  // build (or engine) reads the same.
  // A child started as /proc/self/exe (a sweep's points, validate, plan) is that program too, not "exe".
  std::string program = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : std::string("coinfer");
  if (argc > 0 && std::string(argv[0]) == "/proc/self/exe") {
    std::error_code ec;
    const auto real = std::filesystem::canonical("/proc/self/exe", ec);
    if (!ec) program = real.filename().string();
  }
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + shell_quoted(i == 0 ? program : argv[i]);
}

const std::string& invocation() { return invocation_storage(); }

void stamp_provenance(RunResults& r) {
  r.made_by.program = std::string("coinfer ") + COINFER_VERSION_STRING;
  r.made_by.commit = COINFER_GIT_COMMIT;
  r.made_by.command_line = invocation();
  std::error_code ec;
  r.made_by.working_directory = std::filesystem::current_path(ec).string();
  if (const char* t = std::getenv("COINFER_TRANSFERS"); t != nullptr && *t != '\0')
    r.made_by.environment.push_back(std::string("COINFER_TRANSFERS=") + t);
  if (!r.scenario_file.empty()) r.scenario_file = std::filesystem::absolute(r.scenario_file, ec).lexically_normal().string();
}

void register_version(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("version", "print the program's version, commit, wire protocol, and the SimGrid, HDF5 and LibTorch it runs with");
  static bool as_json = false;
  cmd->add_flag("--json", as_json, "as one JSON object (coinfer, commit, protocol, simgrid, simgrid_built_with, hdf5, libtorch)");
  cmd->callback([&exit_code] {
    const auto v = version_info();
    if (as_json) {
      std::cout << v.dump() << "\n";
    } else {
      std::cout << "coinfer " << v["coinfer"].get<std::string>() << " (commit " << v["commit"].get<std::string>() << ")\n"
                << "wire protocol " << v["protocol"].get<int>() << "\n"
                << "SimGrid " << v["simgrid"].get<std::string>();
      if (v["simgrid"] != v["simgrid_built_with"]) std::cout << " (built with " << v["simgrid_built_with"].get<std::string>() << ")";
      std::cout << "\nHDF5 " << v["hdf5"].get<std::string>() << "\n"
                << "LibTorch "
                << (v["libtorch"].is_null() ? std::string("not built (no companion programs)")
                                            : v["libtorch"].get<std::string>() + " (companion programs)")
                << "\n";
    }
    exit_code = 0;
  });
}

}  // namespace coinfer::cli
