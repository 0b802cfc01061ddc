#include "io/lut_repository.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "core/input_error.hpp"
#include "io/lut_h5.hpp"

namespace fs = std::filesystem;

namespace coinfer {

namespace {

// The files the paths name: a file as it is, a folder's *.h5 files sorted by name.
std::vector<std::string> lut_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
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
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

// `what` adds to the set, naming the file on a key given twice.
template <typename Add>
void add_from(const std::string& file, Add what) {
  try {
    what();
  } catch (const std::invalid_argument& e) {
    throw InputError(SourceLocation{file, 0, 0}, "luts", e.what());
  }
}

LutSet with_scenario_context(const Scenario& s, const std::function<LutSet()>& load) {
  try {
    return load();
  } catch (const InputError& e) {
    throw InputError(s.luts_where, "luts", e.what());
  }
}

LutSet load_files(const std::vector<std::string>& paths, const std::set<std::string>* types) {
  const std::vector<std::string> files = lut_files(paths);
  std::vector<LutFileContents> batch = read_lut_files_batch(files, types);
  LutSet set;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& f = files[i];
    // What the batch did not answer is read alone, in order: its error comes after the earlier files'.
    LutFileContents c = i < batch.size() ? std::move(batch[i]) : read_lut_file_contents(f, types);
    for (auto& t : c.tables) add_from(f, [&] { set.add(std::move(t), f); });
    for (const auto& k : c.unread) add_from(f, [&] { set.add_unread(k, f); });
  }
  return set;
}

}  // namespace

LutSet load_luts(const std::vector<std::string>& paths) { return load_files(paths, nullptr); }

LutSet load_luts_for_types(const std::vector<std::string>& paths, const std::set<std::string>& types) { return load_files(paths, &types); }

std::set<std::string> scenario_lut_types(const Scenario& s) {
  std::set<std::string> types;
  for (const auto& d : s.devices) types.insert(d.type);
  for (const auto& sv : s.servers) types.insert(sv.type);
  return types;
}

std::string scenario_luts_identity(const Scenario& s) {
  std::string id;
  for (const auto& p : s.luts) id += p + '\n';
  id += '\n';
  for (const auto& t : scenario_lut_types(s)) id += t + '\n';
  return id;
}

LutSet load_scenario_luts(const Scenario& s) {
  return with_scenario_context(s, [&] { return load_luts_for_types(s.luts, scenario_lut_types(s)); });
}

LutSet load_all_scenario_luts(const Scenario& s) {
  return with_scenario_context(s, [&] { return load_luts(s.luts); });
}

}  // namespace coinfer
