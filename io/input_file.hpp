#pragma once
// Reading a user's input file safely: it must be a regular file (not a folder, a device such as
// /dev/zero, a FIFO or a symlink loop) no larger than limits::kMaxTextFileBytes. Errors are InputErrors
// naming the file (and `key`, the scenario key that referenced it, when given).
#include <string>

#include "core/input_error.hpp"

namespace coinfer {

// Throws InputError unless `path` is a readable regular file within the size bound. `what` says
// what the file is for ("bandwidth trace", "scenario").
void check_input_file(const std::string& path, const std::string& what, long long max_bytes);
// check_input_file, then the whole content.
std::string read_input_file(const std::string& path, const std::string& what);

}  // namespace coinfer
