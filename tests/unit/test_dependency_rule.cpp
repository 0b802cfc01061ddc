// The dependency rule (docs/ARCHITECTURE.md), checked on the include lines of every source file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

namespace fs = std::filesystem;

TEST(DependencyRule, ModulesIncludeOnlyWhatTheyMay) {
  // module -> modules of ours it may include (besides itself)
  const std::map<std::string, std::set<std::string>> allowed = {
      {"core", {}},
      {"plumbing", {"core"}},  // process, fork-isolation and atomic-folder plumbing (not I/O: docs/ARCHITECTURE.md)
      {"io", {"core", "plumbing"}},
      {"sched", {"core", "plumbing"}},
      {"models", {"core", "io", "plumbing"}},
      {"sim", {"core", "io", "plumbing", "sched"}},
      {"hw", {"core", "io", "plumbing", "sched", "models"}},
      {"cli", {"core", "io", "plumbing", "sched", "models", "sim", "hw"}},
  };
  // third-party headers forbidden per module
  const std::map<std::string, std::vector<std::string>> forbidden = {
      {"core", {"simgrid/", "torch/", "hdf5", "H5Cpp", "yaml-cpp/"}},
      {"plumbing", {"simgrid/", "torch/", "hdf5", "H5Cpp", "yaml-cpp/"}},
      {"io", {"simgrid/", "torch/"}},
      {"sched", {"simgrid/", "hdf5", "H5Cpp"}},
      {"sim", {"torch/"}},
  };
  const std::regex include_re(R"re(^\s*#\s*include\s*[<"]([^>"]+)[>"])re");
  int files = 0;
  for (const auto& [module, deps] : allowed) {
    fs::path dir = fs::path(COINFER_SOURCE_DIR) / module;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const auto ext = e.path().extension();
      if (ext != ".hpp" && ext != ".cpp" && ext != ".h") continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string inc = m[1];
        const auto slash = inc.find('/');
        const std::string top = slash == std::string::npos ? "" : inc.substr(0, slash);
        if (allowed.count(top) && top != module) {
          EXPECT_TRUE(deps.count(top)) << e.path() << " includes " << inc << ": " << module << " may not depend on " << top;
        }
        if (forbidden.count(module)) {
          for (const auto& f : forbidden.at(module)) {
            EXPECT_EQ(inc.rfind(f, 0), std::string::npos) << e.path() << " includes " << inc;
          }
        }
      }
    }
  }
  EXPECT_GT(files, 20);  // the scan really looked at the tree
}

// The real runtime's two big programs reach LibTorch only through models/model_runner.hpp and
// hw/batch_runner.hpp: no Torch header, not even through a models/ header that has one.
TEST(DependencyRule, TheRealRuntimeKeepsTorchBehindInterfaces) {
  const std::regex include_re(R"re(^\s*#\s*include\s*[<"]([^>"]+)[>"])re");
  // The headers of ours that bring Torch in: any models/ or hw/ header that includes torch/ itself.
  auto includes = [&](const fs::path& file) {
    std::vector<std::string> out;
    std::ifstream in(file);
    std::string line;
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_search(line, m, include_re)) out.push_back(m[1]);
    return out;
  };
  std::set<std::string> torch_headers;
  for (const char* module : {"models", "hw"})
    for (const auto& e : fs::directory_iterator(fs::path(COINFER_SOURCE_DIR) / module))
      if (e.path().extension() == ".hpp")
        for (const std::string& inc : includes(e.path()))
          if (inc.rfind("torch/", 0) == 0) torch_headers.insert(std::string(module) + "/" + e.path().filename().string());
  EXPECT_TRUE(torch_headers.count("models/gnn_model.hpp")) << "the scan must see the headers that include Torch";
  // The real runtime's processes and their rooms (hw/server_context.hpp, hw/device_context.hpp).
  for (const char* file :
       {"hw/edge_server.cpp",        "hw/device_runtime.cpp",   "hw/edge_server.hpp",       "hw/device_runtime.hpp", "hw/device_requests.hpp",
        "hw/batch_runner.hpp",       "models/model_runner.hpp", "hw/server_context.hpp",    "hw/server_context.cpp", "hw/server_work.hpp",
        "hw/server_work.cpp",        "hw/device_sessions.cpp",  "hw/server_scheduling.cpp", "hw/peer_servers.cpp",   "hw/coordinator_link.cpp",
        "hw/cloud_tier.cpp",         "hw/device_context.hpp",   "hw/device_context.cpp",    "hw/device_work.hpp",    "hw/device_work.cpp",
        "hw/device_server_link.cpp", "hw/runtime_lock.hpp"})
    for (const std::string& inc : includes(fs::path(COINFER_SOURCE_DIR) / file)) {
      EXPECT_NE(inc.rfind("torch/", 0), 0u) << file << " includes " << inc;
      EXPECT_EQ(torch_headers.count(inc), 0u) << file << " includes " << inc << ", which includes Torch";
    }
}
