#pragma once
// Helpers shared by the unit tests: the project's model catalog, fresh temporary folders and a board
// with a GPU and a CPU.
#include <stdlib.h>

#include <string>

#include "core/device_hardware.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::test {

// The catalog of the source tree's models/ (loaded once per test process).
inline const ModelCatalog& catalog() {
  static const ModelCatalog c = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
  return c;
}

// A new empty folder /tmp/coinfer-<what>-XXXXXX; the test removes it.
inline std::string temp_dir(const std::string& what = "unit") {
  std::string tmpl = "/tmp/coinfer-" + what + "-XXXXXX";
  return mkdtemp(tmpl.data());
}

// A board of two processors named (and of the kinds) `first`, its default, and `second`, in one
// memory of `capacity_bytes` (0: no limit), zero copy; gpu_cpu_board is a Jetson's.
inline DeviceHardware two_processor_board(const std::string& first, const std::string& second, double capacity_bytes = 0) {
  DeviceHardware hw;
  hw.processors = {first, second};
  hw.kinds = {first, second};
  hw.pool_of = {0, 0};
  hw.pool_capacity_bytes = {capacity_bytes};
  hw.pool_names = {"memory"};
  return hw;
}
inline DeviceHardware gpu_cpu_board(double capacity_bytes = 0) { return two_processor_board("gpu", "cpu", capacity_bytes); }

}  // namespace coinfer::test
