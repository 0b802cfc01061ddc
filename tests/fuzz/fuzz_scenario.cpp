// libFuzzer target: the scenario loader on arbitrary YAML text plus --set overrides, then the check
// against the shipped models and LUTs. Input layout: the YAML text, then optionally a line "%%SET%%"
// followed by one KEY=VALUE override per line, then optionally a line "%%FILE%%" followed by the
// content of `fuzz.csv` beside the scenario file (a scenario naming it, e.g. a device's `movement:
// {trace: fuzz.csv}` or `link: {trace: fuzz.csv}`, reads fuzzed mobility and bandwidth traces).
// Bad input must be an InputError (exit 2 in the CLI);
// any other exception, a crash, a sanitizer report, a leak or a hang is a bug.
// Built and run (bounded) by tests/fuzz/run_fuzz.sh.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.hpp"
#include "core/input_error.hpp"
#include "core/lut.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"

using namespace coinfer;

namespace {
struct World {
  std::string root = COINFER_SOURCE_DIR;
  std::string dir, file, side_file;
  std::unique_ptr<ModelCatalog> models;
  std::unique_ptr<LutSet> luts;
  World() {
    models = std::make_unique<ModelCatalog>(ModelCatalog::load(root + "/models"));
    luts = std::make_unique<LutSet>(load_luts({root + "/traces/lut"}));
    // run_fuzz.sh starts the target in the source folder, so relative LUT and trace paths resolve as
    // they do for the shipped scenarios (fuzz.csv first: beside the scenario file); one folder per
    // fuzzing process.
    dir = fuzz::scratch_path("scenario");
    ::mkdir(dir.c_str(), 0700);
    file = dir + "/s.yaml";
    side_file = dir + "/fuzz.csv";
  }
  ~World() {
    std::remove(file.c_str());
    std::remove(side_file.c_str());
    ::rmdir(dir.c_str());
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  World& w = fuzz::the_world<World>();
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  const std::string file_marker = "\n%%FILE%%\n";
  std::string side;  // fuzz.csv's content (none: the file is absent)
  bool has_side = false;
  if (auto at = text.find(file_marker); at != std::string::npos) {
    side = text.substr(at + file_marker.size());
    text.resize(at);
    has_side = true;
  }
  if (has_side)
    std::ofstream(w.side_file, std::ios::binary | std::ios::trunc) << side;
  else
    std::remove(w.side_file.c_str());
  const std::string marker = "\n%%SET%%\n";
  if (auto at = text.find(marker); at != std::string::npos) {
    std::string rest = text.substr(at + marker.size());
    text.resize(at);
    for (size_t start = 0; start <= rest.size();) {
      size_t nl = rest.find('\n', start);
      if (nl == std::string::npos) nl = rest.size();
      if (nl > start) sets.push_back(rest.substr(start, nl - start));
      start = nl + 1;
    }
  }
  std::ofstream(w.file, std::ios::binary | std::ios::trunc) << text;
  fuzz::refusals_only([&] {
    Scenario s = load_scenario(w.file, sets);
    // Both kinds of scheduler (the registry is not linked here): any split, and the scenario's strategies kept.
    SchedulerTraits adaptive, fixed;
    fixed.keeps_scenario_strategies = true;
    check_scenario_against(s, *w.models, *w.luts, fixed);
    check_scenario_against(s, *w.models, *w.luts, adaptive);
  });
  return 0;
}
