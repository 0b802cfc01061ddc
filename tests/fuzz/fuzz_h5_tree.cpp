// libFuzzer target: the HDF5 readers over what libhdf5 could hand them. The bytes
// are an in-memory HDF5 tree (tests/fuzz/h5_tree.hpp: groups, datasets of any shape and class,
// attributes); the seeds are every shipped LUT file, a predictor sample set and a results.h5, in that
// form. Each input goes to
//   - read_lut_tables (the LUT file reader's parse, which runs in the isolated child for a file): what it
//     accepts must pass through the bytes the child hands to the parent (io/lut_codec.hpp) unchanged;
//   - read_predictor_samples_from (the predictor sample set reader): every sample it accepts must hold
//     1 .. 512 nodes, 3 settings a node and edges between its own nodes;
//   - read_request_records_from (results.h5's request table).
// Bad input must be an InputError; any other exception, a crash, a sanitizer report or a leak is a bug.
// Built and run (bounded) by tests/fuzz/run_fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "core/input_error.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "io/lut_codec.hpp"
#include "io/lut_h5.hpp"
#include "io/predictor_samples.hpp"
#include "io/results_h5.hpp"
#include "tests/fuzz/h5_tree.hpp"

using namespace coinfer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::H5Tree tree = fuzz::H5Tree::decode("fuzz.h5", data, size);
  fuzz::refusals_only([&] {
    const std::vector<LutTable> tables = read_lut_tables(tree);
    const std::string bytes = encode_lut_tables(tables);
    try {
      if (encode_lut_tables(decode_lut_tables(bytes)) != bytes)
        fuzz::finding("tables the reader accepted do not come back through the child's bytes unchanged");
    } catch (const std::invalid_argument& e) {
      fuzz::finding(std::string("tables the reader accepted are refused by the parent's decoder: ") + e.what());
    }
  });
  fuzz::refusals_only([&] {
    const PredictorSampleSet set = read_predictor_samples_from(tree);
    for (const PredictorSample& s : set.samples) {
      const std::size_t n = s.node_type.size();
      bool ok = n >= 1 && n <= 512 && s.node_latency_ms.size() == n && s.node_settings.size() == 3 * n;
      for (const auto& [a, b] : s.edges) ok = ok && a >= 0 && b >= 0 && static_cast<std::size_t>(a) < n && static_cast<std::size_t>(b) < n;
      if (!ok) fuzz::finding("an accepted sample breaks the sample set's limits");
    }
  });
  fuzz::refusals_only([&] { (void)read_request_records_from(tree); });
  return 0;
}
