#pragma once
// Scenario YAML -> Scenario (scenarios/README.md documents every key). Syntax and value errors are
// InputErrors naming file, line and key. Cross-checks against models and LUTs are in
// check_scenario_against().
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/scenario.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer {

// overrides: "--set key=value" assignments applied to the YAML before it is read.
Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides = {});

// Bandwidth trace CSV: "time_s,bandwidth_mbps" rows (header and '#' comments allowed), times
// non-decreasing, bandwidth > 0. Errors name the file and line.
std::vector<BandwidthPoint> load_bandwidth_trace(const std::string& file);
// Arrival trace: one arrival time in seconds per line ('#' comments allowed), non-decreasing.
std::vector<double> load_arrival_trace(const std::string& file);

// Resolves a path named in a scenario: as given if it exists (relative to the working directory),
// else relative to the scenario's folder and then each of its parent folders. Returns "" if none exists.
std::string resolve_scenario_path(const std::string& scenario_file, const std::string& path);

// Checks what needs the model catalog and the LUTs: every device's model, dataset and type exists, its
// split is in range, and every LUT entry the run will consult is present (device ranges at batch 1,
// server ranges at batch 1..max_size). Throws InputError naming the device entry and key.
void check_scenario_against(const Scenario& s, const ModelCatalog& models, const LutSet& luts);

}  // namespace coinfer
