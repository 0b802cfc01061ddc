#pragma once
// Loads the LUTs a scenario names: files, or folders whose *.h5 files are all read (sorted by name).
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/scenario.hpp"

namespace coinfer {

LutSet load_luts(const std::vector<std::string>& files_or_folders);
// load_luts(s.luts); an error also names the scenario's `luts` key, file and line.
LutSet load_scenario_luts(const Scenario& s);

}  // namespace coinfer
