// libFuzzer target: the model spec loader (io/model_spec_loader.hpp) on arbitrary YAML text as the one
// spec file of a models folder with the shipped datasets.yaml, every declared model/dataset pair built
// and its costs derived (the catalog builds them at load). A user writes such files for models of their own (models/README.md).
// Bad input must be an InputError (exit 2 in the CLI); any other exception, a crash, a sanitizer report,
// a leak or a hang is a bug. Every stage's derived figures must also be finite and non-negative.
// Built and run (bounded) by tests/fuzz/run_fuzz.sh.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "core/input_error.hpp"
#include "io/model_spec_loader.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace coinfer;
namespace fs = std::filesystem;

namespace {
// A models folder: the shipped datasets.yaml and one spec file, specs/fuzz.yaml, rewritten per input.
struct World {
  std::string dir, spec;
  World() {
    dir = fuzz::scratch_path("model-spec");
    fs::create_directories(dir + "/specs");
    fs::copy_file(COINFER_SOURCE_DIR "/models/datasets.yaml", dir + "/datasets.yaml", fs::copy_options::overwrite_existing);
    spec = dir + "/specs/fuzz.yaml";
  }
  ~World() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void check_figures(const ModelCatalog& catalog) {
  for (const auto& name : catalog.model_names())
    for (const auto& ds : catalog.datasets_for(name)) {
      const ModelSpec& m = catalog.spec(name, ds);
      for (const auto& s : m.stages)
        for (double v : {s.flops, s.out_bytes, s.weight_bytes, s.traffic_bytes, s.memory_bytes})
          if (!std::isfinite(v) || v < 0) {
            std::cerr << "FINDING: model " << name << "/" << ds << " stage " << s.name << " has a derived figure " << v << "\n";
            std::abort();
          }
    }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  World& w = fuzz::the_world<World>();
  fuzz::write_input(w.spec, data, size);
  fuzz::refusals_only([&] { check_figures(ModelCatalog::load(w.dir)); });
  return 0;
}
