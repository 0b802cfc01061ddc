#include "plumbing/atomic_dir.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/input_error.hpp"
#include "core/log.hpp"

namespace coinfer {

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  std::filesystem::path p(target_);
  // Name the user's path and the real cause (not the hidden temporary file's creation failing).
  const std::filesystem::path folder = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  std::error_code ec;
  if (!std::filesystem::exists(folder, ec))
    throw InputError(SourceLocation{target_, 0, 0}, "", "the folder " + folder.string() + " does not exist (create it first)");
  if (!std::filesystem::is_directory(folder, ec)) throw InputError(SourceLocation{target_, 0, 0}, "", folder.string() + " is not a folder");
  if (::access(folder.c_str(), W_OK) != 0) throw InputError(SourceLocation{target_, 0, 0}, "", "the folder " + folder.string() + " is not writable");
  temp_ = (p.parent_path() / ("." + p.filename().string() + ".tmp" + std::to_string(::getpid()))).string();
}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temp_.c_str());
}

void AtomicFile::commit() {
  if (std::rename(temp_.c_str(), target_.c_str()) != 0)
    throw InputError(SourceLocation{target_, 0, 0}, "", "cannot write output file (folder not writable?)");
  committed_ = true;
}

void write_stream_atomic(const std::string& path, const std::function<void(std::ostream&)>& write) {
  AtomicFile f(path);
  {
    std::ofstream out(f.temp_path(), std::ios::binary);
    if (!out) throw InputError(SourceLocation{path, 0, 0}, "", "cannot write output file (folder not writable?)");
    write(out);
    if (!out.flush()) throw InputError(SourceLocation{path, 0, 0}, "", "write failed");
  }
  f.commit();
}

void write_text_atomic(const std::string& path, const std::string& text) {
  write_stream_atomic(path, [&text](std::ostream& out) { out << text; });
}

namespace fs = std::filesystem;

void check_replaceable_output(const std::string& dir, const std::string& option) {
  std::error_code ec;
  const fs::path target = fs::absolute(dir, ec).lexically_normal();
  if (!fs::exists(fs::symlink_status(target, ec))) return;
  if (!fs::is_directory(target, ec)) throw InputError(SourceLocation{dir, 0, 0}, option, "output folder exists and is not a folder");
  if (fs::is_empty(target, ec)) return;
  for (const char* ours : {kOutputMarker, "summary.json", "results.h5", "fill_report.json", "plan.json"})
    if (fs::exists(target / ours, ec)) return;
  throw InputError(
      SourceLocation{dir, 0, 0}, option,
      "output folder exists and holds files that are not an earlier coinfer output (no " + std::string(kOutputMarker) +
          "): coinfer writes only into a new or empty folder or an earlier output of its own, so give one of those (nothing was written)");
}

StagedOutput::StagedOutput(std::string dir, const std::string& option) : dir_(std::move(dir)) {
  auto fail = [&](const std::string& why) { throw InputError(SourceLocation{dir_, 0, 0}, option, why); };
  fs::path target = fs::absolute(dir_).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::error_code ec;
  check_replaceable_output(target.string(), option);
  // Parents that do not exist yet are created now and removed again if nothing is committed.
  std::vector<fs::path> missing;
  for (fs::path p = target.parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec) || ec) {
      for (auto made = created_parents_.rbegin(); made != created_parents_.rend(); ++made) fs::remove(*made, ec);
      fail("output folder cannot be created (" + it->string() + ": " + (ec ? ec.message() : "exists") + ")");
    }
    created_parents_.push_back(it->string());
  }
  staging_ = (target.parent_path() / ("." + target.filename().string() + ".staging-" + std::to_string(::getpid()))).string();
  fs::remove_all(staging_, ec);
  if (!fs::create_directory(staging_, ec) || ec) {
    for (auto made = created_parents_.rbegin(); made != created_parents_.rend(); ++made) fs::remove(*made, ec);
    fail("output folder cannot be created or written (" + target.parent_path().string() + ")");
  }
  dir_ = target.string();
}

StagedOutput::~StagedOutput() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
  for (auto made = created_parents_.rbegin(); made != created_parents_.rend(); ++made) fs::remove(*made, ec);
}

std::string StagedOutput::path(const std::string& file) const { return (fs::path(staging_) / file).string(); }

namespace {

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator i(dir, ec), end; !ec && i != end; i.increment(ec)) out.insert(i->path().filename().string());
  return out;
}

// The files an earlier output's marker lists as coinfer's (empty: a marker of a program before the
// list, or none).
std::set<std::string> listed_in_marker(const fs::path& dir) {
  std::set<std::string> out;
  std::ifstream in(dir / kOutputMarker);
  std::string line;
  bool listing = false;
  while (std::getline(in, line)) {
    if (listing && !line.empty()) out.insert(line);
    if (line == kOutputListHeader) listing = true;
  }
  return out;
}

}  // namespace

void StagedOutput::commit() {
  std::error_code ec;
  std::string aside;
  kept_.clear();
  {
    // The marker lists what this output wrote: the next output replaces those and keeps the rest.
    std::ofstream marker(fs::path(staging_) / kOutputMarker);
    marker << "written by coinfer: the next coinfer output written to this folder replaces the files listed below and keeps any "
              "others (plumbing/atomic_dir.hpp)\n"
           << kOutputListHeader << "\n";
    for (const std::string& name : names_in(staging_))
      if (name != kOutputMarker) marker << name << "\n";
  }
  // Files moved from the earlier output into the new one, (from, to): moved back if anything fails, so
  // that the staging folder's removal never takes a user's file with it.
  std::vector<std::pair<fs::path, fs::path>> moved;
  const auto restore = [&] {
    for (auto it = moved.rbegin(); it != moved.rend(); ++it) std::rename(it->second.c_str(), it->first.c_str());
    moved.clear();
  };
  if (fs::exists(fs::symlink_status(dir_, ec))) {
    check_replaceable_output(dir_, "");  // still an output of ours (nothing replaced it meanwhile)
    // What the user added beside an earlier output moves into the new one. Ours: what the old marker
    // lists; for an output made before the list, only what the new output writes again.
    std::set<std::string> ours = listed_in_marker(dir_);
    const std::set<std::string> fresh = names_in(staging_);
    if (ours.empty()) ours = fresh;
    ours.insert(kOutputMarker);
    for (const std::string& name : names_in(dir_)) {
      if (ours.count(name)) continue;
      std::string to = name;
      while (fresh.count(to) || fs::exists(fs::symlink_status(fs::path(staging_) / to, ec))) to += ".kept";  // never over a new file
      const fs::path from = fs::path(dir_) / name, into = fs::path(staging_) / to;
      if (std::rename(from.c_str(), into.c_str()) != 0) {
        restore();
        throw InputError(SourceLocation{dir_, 0, 0}, "", "cannot keep " + name + " (added beside an earlier output): nothing was replaced");
      }
      moved.emplace_back(from, into);
      kept_.push_back(to == name ? name : name + " (as " + to + ")");
    }
    const fs::path t(dir_);
    aside = (t.parent_path() / ("." + t.filename().string() + ".replaced-" + std::to_string(::getpid()))).string();
    fs::remove_all(aside, ec);
    if (std::rename(dir_.c_str(), aside.c_str()) != 0) {
      restore();
      throw InputError(SourceLocation{dir_, 0, 0}, "", "cannot move the previous output aside to replace it");
    }
  }
  if (std::rename(staging_.c_str(), dir_.c_str()) != 0) {
    if (!aside.empty()) std::rename(aside.c_str(), dir_.c_str());  // the previous output back in place
    restore();                                                     // and the user's files back into it
    throw InputError(SourceLocation{dir_, 0, 0}, "", "cannot move the outputs into place");
  }
  if (!aside.empty()) fs::remove_all(aside, ec);
  committed_ = true;
  if (!kept_.empty()) {
    std::string names;
    for (const std::string& k : kept_) names += (names.empty() ? "" : ", ") + k;
    log::info("output", "kept " + std::to_string(kept_.size()) + " file" + (kept_.size() == 1 ? "" : "s") + " of " + dir_ +
                            " that an earlier output did not write: " + names);
  }
}

}  // namespace coinfer
