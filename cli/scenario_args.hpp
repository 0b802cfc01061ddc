#pragma once
// The arguments of every command that reads a scenario: the scenario file and its --set overrides,
// added once here so that they read and behave alike in every command (scenarios/README.md, "Overrides").
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace coinfer::cli {

// Adds to `cmd` the positional `scenario` (described by `what`; required unless `required` is false)
// and the repeatable --set KEY=VALUE. Returns the scenario's option (to chain checks on it).
inline CLI::Option* add_scenario_args(CLI::App& cmd, std::string& scenario, std::vector<std::string>& sets,
                                      const std::string& what = "scenario YAML file", bool required = true) {
  CLI::Option* option = cmd.add_option("scenario", scenario, what);
  if (required) option->required();
  cmd.add_option("--set", sets, "override a scenario key, KEY=VALUE, e.g. --set devices.0.link.bandwidth_mbps=5 (repeatable)");
  return option;
}

}  // namespace coinfer::cli
