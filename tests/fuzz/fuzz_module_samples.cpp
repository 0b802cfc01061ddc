// libFuzzer target: the module sample set reader (io/module_samples.hpp) on arbitrary bytes. Bad input
// must be an InputError (exit 2 in the CLI); any other exception, a crash, a sanitizer report, a leak
// or a hang is a bug. Every set it accepts must write and read back to the same samples.
// Built and run (bounded) by tests/fuzz/run_fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "tests/fuzz/fuzz_support.hpp"
#include "core/input_error.hpp"
#include "io/module_samples.hpp"

using namespace coinfer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string file = fuzz::scratch_path("samples", ".csv");
  static const std::string again = file + ".again.csv";
  fuzz::write_input(file, data, size);
  fuzz::refusals_only([&] {
    const ModuleSampleSet set = read_module_samples(file);
    write_module_samples(again, set);
    const ModuleSampleSet back = read_module_samples(again);
    if (back.samples.size() != set.samples.size()) fuzz::finding("round trip changed the sample count");
    for (size_t i = 0; i < set.samples.size(); ++i)
      if (back.samples[i].features != set.samples[i].features || back.samples[i].mean_s != set.samples[i].mean_s ||
          back.samples[i].op != set.samples[i].op)
        fuzz::finding("round trip changed sample " + std::to_string(i));
  });
  return 0;
}
