#pragma once
// Emulates a slower device while profiling: moves this process into a new cgroup whose CPU bandwidth
// is capped at `cores` (cgroup v2 cpu.max, or cgroup v1 cpu.cfs_quota_us over a 10 ms period). The
// process moves back and the cgroup is removed when the CpuCap is destroyed. Needs write access to the
// cgroup file system (root); otherwise apply() throws std::runtime_error saying why.
#include <memory>
#include <string>

namespace coinfer::hw {

class CpuCap {
 public:
  static std::unique_ptr<CpuCap> apply(double cores);
  // Caps another process (all its threads), e.g. a device process of the testbed. Its cgroup is removed
  // when the CpuCap is destroyed (after the process has exited, or once it is moved back).
  static std::unique_ptr<CpuCap> apply_to(int pid, double cores);
  // Caps only the threads that join it, all of them together at `cores`: the testbed's device
  // processes put the threads that do the device's work (LibTorch compute, serialisation and
  // compression for uploads) under the cap the device LUT was profiled with, and leave the runtime's
  // bookkeeping threads (arrivals, reader, heartbeats, journal) uncapped. Needs the cgroup v1 cpu
  // controller (it takes thread ids in `tasks`); throws std::runtime_error saying why otherwise.
  // `tag` names the cgroup (one per capped device).
  static std::unique_ptr<CpuCap> for_threads(double cores, const std::string& tag);
  // Puts a thread (of any process; by its kernel thread id) under this cap (for_threads only).
  // Thread-safe; throws std::runtime_error on failure.
  void add_thread(long tid);
  void add_calling_thread();
  // Changes the cap to `cores` from now on (the same cgroup; background load on the testbed). Throws
  // std::runtime_error when the cgroup file cannot be written.
  void set_cores(double cores);
  ~CpuCap();
  const std::string& description() const { return description_; }

 private:
  std::string dir_, parent_procs_, description_;
  int pid_ = 0;
  bool threads_only_ = false;
  bool v2_ = false;
  long period_us_ = 10000;
};

}  // namespace coinfer::hw
