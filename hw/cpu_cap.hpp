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
  ~CpuCap();
  const std::string& description() const { return description_; }

 private:
  std::string dir_, parent_procs_, description_;
  int pid_ = 0;
};

}  // namespace coinfer::hw
