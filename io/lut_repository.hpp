#pragma once
// Loads the LUTs a scenario names: files, or folders whose *.h5 files are all read (sorted by name).
#include <string>
#include <vector>

#include "core/lut.hpp"

namespace coinfer {

LutSet load_luts(const std::vector<std::string>& files_or_folders);

}  // namespace coinfer
