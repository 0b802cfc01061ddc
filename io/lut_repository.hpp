#pragma once
// Loads the LUTs a scenario names: files, or folders whose *.h5 files are all read (sorted by name).
#include <set>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/scenario.hpp"

namespace coinfer {

// Every table of every file.
LutSet load_luts(const std::vector<std::string>& files_or_folders);
// The tables of the given device types; every other file has its keys read only (LutSet::unread), so
// a run that needs two of the ten shipped types reads two files' data. Any file that is not a readable
// coinfer LUT is still refused, and a key given twice still throws.
LutSet load_luts_for_types(const std::vector<std::string>& files_or_folders, const std::set<std::string>& types);
// The device types whose tables a run of `s` consults: its devices' and its servers' types.
std::set<std::string> scenario_lut_types(const Scenario& s);
// What decides load_scenario_luts(s)'s tables: the paths and the types (a cache key).
std::string scenario_luts_identity(const Scenario& s);
// load_luts_for_types(s.luts, scenario_lut_types(s)); an error also names the scenario's `luts` key,
// file and line.
LutSet load_scenario_luts(const Scenario& s);
// load_luts(s.luts), every type's tables (coinfer lut fill learns from every measured table), with the
// same error context.
LutSet load_all_scenario_luts(const Scenario& s);

}  // namespace coinfer
