#pragma once
// Scenario YAML -> Scenario (scenarios/README.md documents every key). Syntax and value errors are
// InputErrors naming file, line and key. Cross-checks against models and LUTs are in
// check_scenario_against().
#include <map>
#include <functional>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/scenario.hpp"
#include "core/scenario_binding.hpp"
#include "core/scheduler_traits.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer {

// overrides: "--set key=value" assignments applied to the YAML before it is read.
Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides = {});

// Bandwidth trace CSV: "time_s,bandwidth_mbps" rows (header and '#' comments allowed), times
// non-decreasing, bandwidth > 0. Errors name the file and line.
std::vector<BandwidthPoint> load_bandwidth_trace(const std::string& file);
// A mobility trace (CSV t_s,x_m,y_m; traces/README.md "Mobility traces"): InputError naming file and line.
std::vector<PositionPoint> load_position_trace(const std::string& file);
// Arrival trace: one arrival time in seconds per line ('#' comments allowed), non-decreasing.
std::vector<double> load_arrival_trace(const std::string& file);

// Resolves a path named in a scenario to an absolute, normalised path. An absolute path is taken as
// it is. A relative one is tried, first match wins, against: the scenario's folder and then up to
// four of its parent folders (its project); the data roots of io/data_root.hpp (--root/COINFER_ROOT,
// the working directory's project, the installed data, the source tree); the working directory. So
// the same scenario means the same files wherever it is run from, and a scenario copied out of the
// project finds the shipped LUTs through --root. When the working directory holds a different file
// under the same name, a warning says which one is used (once per path and process). Returns "" when
// none exists.
std::string resolve_scenario_path(const std::string& scenario_file, const std::string& path);

// check_scenario_binding (core/scenario_binding.hpp) with the project's device profiles
// (traces/devices.yaml, io/data_root.hpp) for the remedy a missing LUT's error offers.
void check_scenario_against(const Scenario& s, const ModelCatalog& models, const LutSet& luts, const SchedulerTraits& scheduler);

}  // namespace coinfer
