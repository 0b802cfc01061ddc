#pragma once
// Helpers shared by the unit tests: the project's model catalog and fresh temporary folders.
#include <stdlib.h>

#include <string>

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

}  // namespace coinfer::test
