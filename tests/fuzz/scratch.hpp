#pragma once
// Where a fuzz target writes the file its loader reads: /dev/shm (tmpfs) when it is a writable folder,
// else /tmp. On ext4 a file truncated and rewritten is flushed to disk at close (auto_da_alloc), which
// cost the inventory target over a quarter of its time at one write per input.
#include <unistd.h>

#include <string>

namespace coinfer::fuzz {

// "<folder>/coinfer-fuzz-<name>-<pid><suffix>": one name per fuzzing process.
inline std::string scratch_path(const std::string& name, const std::string& suffix = "") {
  static const std::string folder = ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
  return folder + "/coinfer-fuzz-" + name + "-" + std::to_string(::getpid()) + suffix;
}

}  // namespace coinfer::fuzz
