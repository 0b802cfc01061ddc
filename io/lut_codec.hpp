#pragma once
// A compact byte form of LUT tables, used to hand tables from the isolated LUT reader (a child
// process that parses the untrusted HDF5 file, io/lut_h5.cpp) to the parent. decode_lut_tables()
// accepts any bytes: malformed input throws std::invalid_argument, never crashes, and allocates no
// more than the bounds of core/limits.hpp allow (tests/fuzz/fuzz_lut_codec.cpp searches for failures).
//
// Layout (little-endian): "CLUT" u32 version=5, u32 table count; per table: strings (u32 length +
// bytes) device_type, model, dataset; i32 num_stages, i32 max_batch; per latency cell in index order
// a presence byte and, if present, f64 mean, p50, p95, std and i64 count; u32 quantile level count K
// (0: no distributions), K f64 levels and, when K > 0, per latency entry in index order a presence
// byte and, if present, K f64 quantiles, then per split 0..n a presence byte and, if present, K f64
// wire byte quantiles, f64 compress and f64 decompress seconds; f64 bytes per split
// (num_stages + 1); per (begin, end, batch) a presence byte and f64 peak memory; per stage a
// presence byte and f64 output sparsity; provenance kind; u32
// attribute count and (key, value) strings, keys strictly increasing.
#include <string>
#include <vector>

#include "core/lut.hpp"

namespace coinfer {

std::string encode_lut_tables(const std::vector<LutTable>& tables);
std::vector<LutTable> decode_lut_tables(const std::string& bytes);

// The keys of a file's tables without their data (io/lut_h5.hpp read_lut_file_contents): "CLUK",
// u32 key count, per key the strings device_type, model, dataset, processor. decode_lut_keys accepts
// any bytes as decode_lut_tables does; is_encoded_lut_keys tells the two forms apart by their magic.
std::string encode_lut_keys(const std::vector<LutKey>& keys);
bool is_encoded_lut_keys(const std::string& bytes);
std::vector<LutKey> decode_lut_keys(const std::string& bytes);

}  // namespace coinfer
