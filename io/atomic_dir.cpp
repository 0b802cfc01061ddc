#include "io/atomic_dir.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"

namespace coinfer {

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  std::filesystem::path p(target_);
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

void write_text_atomic(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  {
    std::ofstream out(f.temp_path(), std::ios::binary);
    if (!out) throw InputError(SourceLocation{path, 0, 0}, "", "cannot write output file (folder not writable?)");
    out << text;
    if (!out.flush()) throw InputError(SourceLocation{path, 0, 0}, "", "write failed");
  }
  f.commit();
}

}  // namespace coinfer
