#pragma once
// Real background load on this machine (the MEDN paper's dynamic environment, Sec. 3.1: "random module
// inference jobs are occasionally generated on the device"): a child process with `threads` threads,
// each busy for `duty` of every 10 ms (streaming through its share of `memory_bytes` of touched memory,
// or doing arithmetic when there is none) and idle for the rest. Bounded: at most the machine's cores
// in threads, memory only as asked (the caller bounds it; `coinfer medn sample` keeps it under a quarter
// of MemAvailable). The child dies with its parent (PR_SET_PDEATHSIG) and is killed and reaped when the
// level changes or the generator is destroyed. Linux only.
#include <string>
#include <sys/types.h>

#include "core/random_stream.hpp"

namespace coinfer::hw {

struct LoadLevel {
  int threads = 0;             // 0: no load (no child)
  double duty = 0;             // in (0, 1] when threads > 0
  long long memory_bytes = 0;  // touched before the load starts
};

// A level drawn for the next stretch of samples: idle with probability 0.3, otherwise 1..max_threads
// threads at a duty in [0.25, 1] holding a uniform share of [0, max_memory_bytes].
LoadLevel random_load_level(RandomStream& rng, int max_threads, long long max_memory_bytes);

class LoadGenerator {
 public:
  // `program`: an executable whose `load_child_arguments()` run run_load_child (coinfer-medn).
  explicit LoadGenerator(std::string program);
  ~LoadGenerator();
  LoadGenerator(const LoadGenerator&) = delete;
  LoadGenerator& operator=(const LoadGenerator&) = delete;

  // Stops the current load and starts `level`; blocks until the child has touched its memory (at most
  // 60 s). Throws std::invalid_argument for a level out of bounds, std::runtime_error when the child
  // cannot start or does not get ready.
  void set(const LoadLevel& level);
  void stop();
  pid_t child() const { return pid_; }  // 0 when none
  const LoadLevel& level() const { return level_; }

 private:
  std::string program_;
  pid_t pid_ = 0;
  LoadLevel level_;
};

// The child's body: touches the memory, writes "ready\n" to stdout, then loads until killed. Returns
// only on bad arguments (exit code 2).
int run_load_child(int threads, double duty, long long memory_bytes);

}  // namespace coinfer::hw
