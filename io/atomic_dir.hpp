#pragma once
// Atomic output: write to a temporary name beside the target, then rename. If commit() is never
// called (an error was thrown), the temporary is removed and the target is untouched.
#include <string>

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

}  // namespace coinfer
