// coinfer profile ...: runs coinfer-profile (built beside coinfer when LibTorch is available).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"

namespace coinfer::cli {

void register_profile(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("profile", "measure a LUT of a model on this machine (see coinfer-profile --help)");
  cmd->allow_extras();
  cmd->set_help_flag();  // --help goes through to coinfer-profile
  cmd->callback([cmd, &exit_code] {
    const auto exe = std::filesystem::canonical("/proc/self/exe").parent_path() / "coinfer-profile";
    if (!std::filesystem::exists(exe)) {
      std::cerr << "error: this coinfer was built without LibTorch (" << exe.string()
                << " is missing); scripts/setup.sh installs libtorch-dev, then rebuild\n";
      exit_code = 2;
      return;
    }
    std::vector<std::string> args = {exe.string()};
    for (const auto& a : cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    ::execv(argv[0], argv.data());
    std::perror("cannot run coinfer-profile");
    exit_code = 1;
  });
}

}  // namespace coinfer::cli
