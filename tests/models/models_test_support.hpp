#pragma once
// Helpers shared by the LibTorch model tests.
#include <string>

#include "io/model_spec_loader.hpp"
#include "models/gnn_model.hpp"

namespace coinfer::models::test {

// The source tree's model catalog, loaded once per test process.
inline const ModelCatalog& catalog() {
  static ModelCatalog c = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
  return c;
}

inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace coinfer::models::test
