// libFuzzer target: the testbed inventory loader (hw/inventory.hpp) on arbitrary YAML text, then its
// check against a fixed two-device scenario. Bad input must be an InputError (exit 2 in the CLI); any
// other exception, a crash, a sanitizer report, a leak or a hang is a bug.
// Built and run (bounded) by tests/fuzz/run_fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "tests/fuzz/fuzz_support.hpp"
#include "core/input_error.hpp"
#include "hw/inventory.hpp"
#include "io/scenario_loader.hpp"

using namespace coinfer;

namespace {
struct World {
  std::string file, key;
  Scenario scenario;
  World() {
    file = fuzz::scratch_path("inventory", ".yaml");
    key = fuzz::scratch_path("inventory-key");  // a readable "key" the seeds name
    std::ofstream(key) << "not a real key\n";
    const std::string scn = fuzz::scratch_path("inventory-scenario", ".yaml");
    std::ofstream(scn) << "name: f\nduration_s: 1\nluts: [" COINFER_SOURCE_DIR
                          "/traces/lut]\nservers: [{id: e, type: gtx1060}]\n"
                          "devices:\n  - {id: pi0, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 10}}\n"
                          "  - {id: pi1, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 10}}\n";
    scenario = load_scenario(scn, {});
    std::remove(scn.c_str());
  }
  ~World() {
    std::remove(file.c_str());
    std::remove(key.c_str());
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  World& w = fuzz::the_world<World>();
  std::string text(reinterpret_cast<const char*>(data), size);
  for (size_t at; (at = text.find("@KEY@")) != std::string::npos;) text.replace(at, 5, w.key);
  std::ofstream(w.file, std::ios::binary | std::ios::trunc) << text;
  fuzz::refusals_only([&] { check_inventory_against(load_inventory(w.file), w.scenario); });
  return 0;
}
