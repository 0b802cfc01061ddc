#include "io/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/limits.hpp"

namespace fs = std::filesystem;

namespace coinfer {

void check_input_file(const std::string& path, const std::string& what, long long max_bytes) {
  auto fail = [&](const std::string& why) { throw InputError(SourceLocation{path, 0, 0}, "", what + ": " + why); };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows symlinks; a loop is an error here
  if (ec) fail(ec == std::errc::no_such_file_or_directory ? "file not found" : "cannot read (" + ec.message() + ")");
  if (fs::is_directory(st)) fail("is a folder, not a file");
  if (!fs::is_regular_file(st)) fail("is not a regular file (a device, FIFO or socket cannot be read as input)");
  const auto size = fs::file_size(path, ec);
  if (ec) fail("cannot read (" + ec.message() + ")");
  if (static_cast<long long>(size) > max_bytes)
    fail("is " + std::to_string(size) + " bytes; input files are limited to " + std::to_string(max_bytes) + " bytes");
}

std::string read_input_file(const std::string& path, const std::string& what) {
  check_input_file(path, what, limits::kMaxTextFileBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "", what + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace coinfer
