// libFuzzer target: the LUT file reader (read_lut_file) on arbitrary HDF5 bytes. The reader parses in
// a forked child (libhdf5 1.10 crashes on some corrupted metadata), so coverage feedback comes only
// from this process's side; mutations of the shipped LUT files (the seed corpus) do the searching.
// Any outcome other than tables or an InputError is a bug: a crash here, an abort, another exception.
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
#include "io/lut_h5.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = coinfer::fuzz::scratch_path("lut", ".h5");
  coinfer::fuzz::write_input(file, data, size);
  coinfer::fuzz::refusals_only([&] { coinfer::read_lut_file(file); });
  return 0;
}
