#include <stdlib.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/lut.hpp"

namespace coinfer::cli {

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const LutMissingError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}

int parse_command_line(CLI::App& app, int argc, char** argv, std::string& command_line) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  return -1;
}

void check_output_folder(const std::string& dir, const std::string& option) {
  namespace fs = std::filesystem;
  fs::path p = fs::absolute(dir);
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  std::string probe = (p / ".coinfer-probe-XXXXXX").string();
  if (p.empty() || !fs::is_directory(p) || ::mkdtemp(probe.data()) == nullptr)
    throw InputError(SourceLocation{dir, 0, 0}, option, "output folder cannot be created or written (" + p.string() + ")");
  fs::remove(probe);
}

}  // namespace coinfer::cli
