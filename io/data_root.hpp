#pragma once
// Where coinfer finds its data: model specs and datasets (models/), device profiles and default LUTs
// (traces/), plot scripts (plots/). A "project" is a folder holding models/specs/. Candidates, first
// match wins, per file (a project without plots/ still gets the plot scripts from the next one):
//   1. --root DIR (sets COINFER_ROOT for this process and the programs it starts)
//   2. $COINFER_ROOT
//   3. the project containing the scenario being run (its folder, then upwards)
//   4. the project containing the working directory (upwards)
//   5. the installed data: <the program's folder>/../share/coinfer (relocatable), then
//      CMAKE_INSTALL_PREFIX/share/coinfer, when they exist (`cmake --install build` puts them there)
//   6. the source tree the program was built from
// So a user who copies the project, or adds models/specs/mygcn.yaml to it, sees their files used.
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/run_results.hpp"
#include "core/scenario.hpp"

namespace coinfer {

// The scenario whose project is candidate 3 (set by the commands that load one).
void set_scenario_hint(const std::string& scenario_file);

struct DataRoot {
  std::string path;    // a folder
  std::string origin;  // "--root/COINFER_ROOT", "the scenario's project", "the working directory's project", "installed", "source tree"
};
std::vector<DataRoot> data_root_candidates();

// The first candidate holding `relative` (e.g. "models", "traces/devices.yaml"); the last candidate's
// path when none does (the caller's error then names it). `origin`, if given, receives where it came from.
// Each resolution is logged once at debug level (category "data", `coinfer -v`) and remembered for
// resolved_data_files().
std::string data_path(const std::string& relative, std::string* origin = nullptr);

// Every data_path() resolution of this process so far, in order, once each.
std::vector<DataFileOrigin> resolved_data_files();

// The files a run of `s` read: the scenario file, the data folders resolved so far (models, device
// profiles), each LUT file with the tables it gave and their kind (measured, synthetic, ...), and the
// bandwidth and arrival traces the scenario names. For the run's provenance (summary.json
// "data_files", results.h5 /provenance/data_files).
std::vector<DataFileOrigin> run_data_files(const Scenario& s, const LutSet& luts);

}  // namespace coinfer
