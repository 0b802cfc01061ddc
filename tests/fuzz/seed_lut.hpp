#pragma once
// A tiny LUT table with every optional dataset a LUT file can hold (distributions, wire bytes, an
// estimate, stage sparsity, memory by batch, provenance): the whole LUT reader within a few kilobytes.
// The h5_tree fuzz target's seed (tests/fuzz/run_fuzz.sh) and tests/unit/test_h5_tree.cpp's check that
// it reads back from its tree.
#include "core/lut.hpp"

namespace coinfer::fuzz {

inline LutTable lut_with_every_dataset() {
  LutTable t({"tiny", "gcn", "mr", "cpu"}, 2, 2);
  t.set_quantile_levels({0, 0.5, 1});
  for (int i = 0; i <= 2; ++i)
    for (int j = i + 1; j <= 2; ++j)
      for (int b = 1; b <= 2; ++b) {
        const double m = 0.001 * (j - i) * b;
        t.set_latency(i, j, b, {m, m, 1.5 * m, 0.1 * m, 5});
        t.set_quantiles(i, j, b, {0.5 * m, m, 2 * m});
        t.set_peak_memory(i, j, b, 1e6 * b);
      }
  t.set_estimate(1, 2, 2, {"sum of stages: gcn=lr", 0.08});
  for (int k = 0; k <= 2; ++k) t.set_wire(k, {100.0 + k, 200.0 + k, 300.0 + k}, 1e-5, 2e-5);
  t.bytes_per_split() = {1000, 500, 10};
  t.set_stage_output_sparsity(0, 0.5);
  t.provenance().kind = "measured";
  t.provenance().attributes["cpu"] = "seed";
  return t;
}

}  // namespace coinfer::fuzz
