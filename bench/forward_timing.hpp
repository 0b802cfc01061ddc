#pragma once
// Shared by the model benchmarks: the median wall time of a model's forward pass.
#include <algorithm>
#include <chrono>
#include <vector>

#include "models/gnn_model.hpp"

namespace coinfer::bench {

// Median of `repeats` timed forwards (ms) after 2 untimed ones.
inline double median_forward_ms(const models::GnnModel& m, const models::GraphSample& g, int repeats) {
  for (int i = 0; i < 2; ++i) m.forward(g);
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    m.forward(g);
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace coinfer::bench
