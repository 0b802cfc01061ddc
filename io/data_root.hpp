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
std::string data_path(const std::string& relative, std::string* origin = nullptr);

}  // namespace coinfer
