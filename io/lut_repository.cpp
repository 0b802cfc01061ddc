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
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p))
        if (e.path().extension() == ".h5") files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      if (files.empty()) throw InputError(SourceLocation{p, 0, 0}, "luts", "folder holds no .h5 LUT files");
    } else {
      files.push_back(p);
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

}  // namespace coinfer
