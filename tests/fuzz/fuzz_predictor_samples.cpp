// libFuzzer target: the predictor sample set reader (read_predictor_samples) on arbitrary HDF5 bytes. The reader parses in
// a forked child (libhdf5 1.10 crashes on some corrupted metadata), so coverage feedback comes only
// from this process's side; mutations of a small written sample set (the seed) do the searching.
// Any outcome other than a sample set or an InputError is a bug: a crash here, an abort, another exception.
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
#include "io/predictor_samples.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = coinfer::fuzz::scratch_path("samples", ".h5");
  coinfer::fuzz::write_input(file, data, size);
  coinfer::fuzz::refusals_only([&] { coinfer::read_predictor_samples(file); });
  return 0;
}
