#pragma once
// Atomic output: write to a temporary name beside the target, then rename. If commit() is never
// called (an error was thrown), the temporary is removed and the target is untouched.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace coinfer {

class AtomicFile {
 public:
  explicit AtomicFile(std::string target);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();
  const std::string& temp_path() const { return temp_; }
  void commit();  // rename temp -> target (throws InputError if the folder is not writable)

 private:
  std::string target_, temp_;
  bool committed_ = false;
};

// Writes text atomically.
void write_text_atomic(const std::string& path, const std::string& text);
// The same, the text written by `write` into the temporary file as it goes (a long output never held
// whole in memory).
void write_stream_atomic(const std::string& path, const std::function<void(std::ostream&)>& write);

// A folder of outputs that appear together or not at all. Files are written under a staging folder
// beside the target (".<name>.staging-<pid>"); commit() writes the marker file kOutputMarker listing
// the files the output wrote, and renames the staging folder to the target. An existing target is
// replaced, but only when it is empty or an earlier coinfer output (replaceable_output_folder); any
// other folder is refused by the constructor. Replacing it drops the files the earlier output's marker
// lists (so no file of an earlier output -- another scenario's figures -- stays beside the new ones)
// and KEEPS every other file: what a user added (a report.html, figures) moves into the new folder,
// under its own name or NAME.kept when the new output writes that name, and kept() names them. An
// earlier output whose marker has no list (programs before it) keeps everything the new output does
// not write again. The replaced folder is moved aside before the rename and removed after it. Without
// a commit (an error was thrown), the destructor removes the staging folder and any parent folders the
// constructor had to create, so a failed command leaves nothing behind.
// The marker file every StagedOutput folder holds, and the line after which it lists the output's files.
constexpr const char* kOutputMarker = ".coinfer-output";
constexpr const char* kOutputListHeader = "files:";
// Whether `dir` may be replaced by a new output: it does not exist, is an empty folder, holds
// kOutputMarker, or (outputs of programs before the marker) a top-level summary.json, results.h5,
// fill_report.json or plan.json. Throws InputError naming `option` when it exists but may not be (a
// file, or a folder of other things), saying what to do. Cheap: call it before long work.
void check_replaceable_output(const std::string& dir, const std::string& option);

class StagedOutput {
 public:
  // Throws InputError naming `option` when the folder cannot be created or written.
  StagedOutput(std::string dir, const std::string& option);
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;
  ~StagedOutput();
  // Where to write `file` (a plain file name) before commit().
  std::string path(const std::string& file) const;
  // Puts the output in place (see above); logs the files kept from beside an earlier output.
  void commit();
  // After commit(): the files of the earlier folder that were not coinfer's and were kept.
  const std::vector<std::string>& kept() const { return kept_; }

 private:
  std::string dir_, staging_;
  std::vector<std::string> created_parents_;  // deepest last
  std::vector<std::string> kept_;
  bool committed_ = false;
};

}  // namespace coinfer
