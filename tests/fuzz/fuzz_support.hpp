#pragma once
// What the fuzz targets share: the scratch file a loader reads, and the rule that a loader may refuse
// an input only with an InputError (any other exception, or a broken invariant, is a finding: the
// target prints what it found and aborts, and libFuzzer keeps the input).
//
// The scratch file lives in /dev/shm (tmpfs) when it is a writable folder, else /tmp. On ext4 a file
// truncated and rewritten is flushed to disk at close (auto_da_alloc), which cost the inventory target
// over a quarter of its time at one write per input.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "core/input_error.hpp"

namespace coinfer::fuzz {

// "<folder>/coinfer-fuzz-<name>-<pid><suffix>": one name per fuzzing process.
inline std::string scratch_path(const std::string& name, const std::string& suffix = "") {
  static const std::string folder = ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
  return folder + "/coinfer-fuzz-" + name + "-" + std::to_string(::getpid()) + suffix;
}

// Replaces the file at `path` with `size` bytes of `data`.
inline void write_input(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

// The one `W` of this fuzzing process, made at its first use (what every input is checked against).
template <typename W>
W& the_world() {
  static W w;
  return w;
}

// A finding: prints `what` and aborts.
[[noreturn]] inline void finding(const std::string& what) {
  std::cerr << what << "\n";
  std::abort();
}

// Runs `f`: an InputError (the loader's refusal) ends it quietly; any other exception is a finding.
template <typename F>
void refusals_only(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    finding(std::string("not an InputError: ") + e.what());
  }
}

}  // namespace coinfer::fuzz
