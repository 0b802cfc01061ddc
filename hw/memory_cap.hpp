#pragma once
// A real memory limit on a process: the testbed puts each emulated board's device
// process into its own cgroup whose memory is capped (cgroup v2 memory.max with memory.swap.max 0,
// or cgroup v1 memory.limit_in_bytes with memory.memsw.limit_in_bytes where swap accounting exists),
// so a board that runs out of memory is stopped by the kernel's OOM killer as a real board's process
// would be. The cgroup is removed when the MemoryCap is destroyed (the process moved back first if it
// still runs). Needs write access to the cgroup file system (root); apply_to() throws
// std::runtime_error saying why otherwise. Units: bytes. Blocking calls: file writes only.
#include <memory>
#include <string>

namespace coinfer::hw {

class MemoryCap {
 public:
  // Moves process `pid` (all its threads) into a new cgroup named after `tag` capped at `bytes`
  // (infinity: accounted, not limited yet; set_limit() later). Memory the process touched before the
  // move stays charged where it was: move it as soon as it starts.
  static std::unique_ptr<MemoryCap> apply_to(int pid, double bytes, const std::string& tag);
  // Changes the limit (bytes, >= 4096). Throws std::runtime_error when the kernel refuses it.
  void set_limit(double bytes);
  // The memory the cgroup uses now (v2 memory.current, v1 memory.usage_in_bytes), bytes.
  double usage_bytes() const;
  // Whether a cgroup memory controller can be written here (for a test or a warning up front).
  static bool available(std::string* why = nullptr);
  ~MemoryCap();
  MemoryCap(const MemoryCap&) = delete;
  MemoryCap& operator=(const MemoryCap&) = delete;

  // How many processes of the cgroup the kernel's OOM killer has killed (v2 memory.events oom_kill;
  // v1 memory.oom_control oom_kill); 0 when the kernel does not say.
  long oom_kills() const;
  // The most memory the cgroup has used (v1 memory.max_usage_in_bytes, v2 memory.peak where the
  // kernel has it), bytes; NaN when the kernel does not say.
  double peak_bytes() const;
  double limit_bytes() const { return limit_; }
  const std::string& description() const { return description_; }

 private:
  MemoryCap() = default;
  std::string dir_, parent_procs_, description_;
  int pid_ = 0;
  bool v2_ = false;
  double limit_ = 0;
};

}  // namespace coinfer::hw
