#include "io/lut_repository.hpp"

#include <algorithm>
#include <filesystem>

#include "core/input_error.hpp"
#include "io/lut_h5.hpp"

namespace fs = std::filesystem;

namespace coinfer {

LutSet load_luts(const std::vector<std::string>& paths) {
  LutSet set;
  for (const auto& p : paths) {
    std::vector<std::string> files;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".h5") files.push_back(it->path().string());
      if (ec) throw InputError(SourceLocation{p, 0, 0}, "", "cannot list the LUT folder: " + ec.message());
      std::sort(files.begin(), files.end());
      if (files.empty()) throw InputError(SourceLocation{p, 0, 0}, "", "folder holds no .h5 LUT files");
    } else {
      files.push_back(p);  // read_lut_file names what is wrong with it (missing, a loop, not a file)
    }
    for (const auto& f : files) {
      for (auto& t : read_lut_file(f)) {
        try {
          set.add(std::move(t), f);
        } catch (const std::invalid_argument& e) {
          throw InputError(SourceLocation{f, 0, 0}, "luts", e.what());
        }
      }
    }
  }
  return set;
}

LutSet load_scenario_luts(const Scenario& s) {
  try {
    return load_luts(s.luts);
  } catch (const InputError& e) {
    throw InputError(s.luts_where, "luts", e.what());
  }
}

}  // namespace coinfer
