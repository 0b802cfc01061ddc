// libFuzzer target: decode_lut_tables and decode_lut_keys (the bytes the isolated LUT reader hands to the
// parent process) on arbitrary bytes. Malformed input must throw std::invalid_argument; anything else is
// a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "io/lut_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto tables = coinfer::decode_lut_tables(bytes);
    // What decodes must encode back to the same bytes.
    if (coinfer::encode_lut_tables(tables) != bytes) {
      std::cerr << "decode/encode round trip differs\n";
      std::abort();
    }
  } catch (const std::invalid_argument&) {
  }
  // The keys-only form: the same bytes with its magic in front, so the fuzzer's inputs reach its body.
  for (const std::string& in : {bytes, std::string("CLUK") + bytes}) {
    try {
      const auto keys = coinfer::decode_lut_keys(in);
      if (coinfer::encode_lut_keys(keys) != in) {
        std::cerr << "keys decode/encode round trip differs\n";
        std::abort();
      }
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
