#pragma once
// LUT files (HDF5, schema "coinfer-lut" version 1, documented in traces/README.md). One file holds the
// tables of one device type, one group per model/dataset.
#include <string>
#include <vector>

#include "core/lut.hpp"

namespace coinfer {

constexpr int kLutSchemaVersion = 1;

// Writes atomically (temporary name, then rename). All tables must share one device type.
void write_lut_file(const std::string& path, const std::vector<LutTable>& tables);
// Throws InputError naming the file and object for a missing file, corrupt data or another schema.
std::vector<LutTable> read_lut_file(const std::string& path);

}  // namespace coinfer
