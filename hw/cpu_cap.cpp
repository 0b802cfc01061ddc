#include "hw/cpu_cap.hpp"

#include <signal.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "hw/cgroup_files.hpp"

namespace fs = std::filesystem;

namespace coinfer::hw {

namespace {}  // namespace

std::unique_ptr<CpuCap> CpuCap::apply(double cores) { return apply_to(::getpid(), cores); }

std::unique_ptr<CpuCap> CpuCap::apply_to(int pid, double cores) {
  if (!(cores > 0)) throw std::runtime_error("the CPU cap must be > 0 cores");
  const long period = 10000;  // 10 ms: fine-grained enough to slow down stages of a few ms
  const long quota = std::max(1000L, std::lround(cores * period));
  const std::string name = "coinfer-cap-" + std::to_string(pid);
  auto cap = std::unique_ptr<CpuCap>(new CpuCap());
  cap->pid_ = pid;
  std::error_code ec;
  // cgroup v2 (unified at /sys/fs/cgroup or /sys/fs/cgroup/unified) with the cpu controller enabled.
  for (const fs::path& root : {fs::path("/sys/fs/cgroup"), fs::path("/sys/fs/cgroup/unified")}) {
    if (!fs::exists(root / "cgroup.procs") || !cgroup_v2_has_controller(root, "cpu")) continue;
    const fs::path dir = root / name;
    if (!fs::create_directory(dir, ec)) continue;
    if (write_cgroup_file(dir / "cpu.max", std::to_string(quota) + " " + std::to_string(period)) &&
        write_cgroup_file(dir / "cgroup.procs", std::to_string(pid))) {
      cap->dir_ = dir.string();
      cap->v2_ = true;
      cap->parent_procs_ = (root / "cgroup.procs").string();
      cap->description_ = "cgroup v2 cpu.max " + std::to_string(quota) + "/" + std::to_string(period) + " us (" + std::to_string(cores) + " cores)";
      return cap;
    }
    fs::remove(dir, ec);
  }
  // cgroup v1 cpu controller.
  const fs::path v1 = "/sys/fs/cgroup/cpu";
  if (fs::exists(v1 / "cgroup.procs")) {
    const fs::path dir = v1 / name;
    if (fs::create_directory(dir, ec) && write_cgroup_file(dir / "cpu.cfs_period_us", std::to_string(period)) &&
        write_cgroup_file(dir / "cpu.cfs_quota_us", std::to_string(quota)) && write_cgroup_file(dir / "cgroup.procs", std::to_string(pid))) {
      cap->dir_ = dir.string();
      cap->parent_procs_ = (v1 / "cgroup.procs").string();
      cap->description_ =
          "cgroup v1 cpu.cfs_quota_us " + std::to_string(quota) + " per " + std::to_string(period) + " us (" + std::to_string(cores) + " cores)";
      return cap;
    }
    fs::remove(dir, ec);
  }
  throw std::runtime_error(
      "cannot cap the CPU: no writable cgroup with a cpu controller (cgroup v2 cpu.max or v1 "
      "cpu.cfs_quota_us; needs root). Alternative: profile on the real board, or limit "
      "threads with --threads and cores with taskset");
}

std::unique_ptr<CpuCap> CpuCap::for_threads(double cores, const std::string& tag) {
  if (!(cores > 0)) throw std::runtime_error("the CPU cap must be > 0 cores");
  const long period = 10000;
  const long quota = std::max(1000L, std::lround(cores * period));
  const fs::path v1 = "/sys/fs/cgroup/cpu";
  if (!fs::exists(v1 / "tasks"))
    throw std::runtime_error(
        "cannot cap single threads: no cgroup v1 cpu controller at /sys/fs/cgroup/cpu (cgroup v2 needs "
        "threaded mode); cap the whole process instead (--cpu-cap-scope process)");
  const fs::path dir = v1 / ("coinfer-cap-threads-" + std::to_string(::getpid()) + "-" + tag);
  std::error_code ec;
  if (!fs::create_directory(dir, ec) || !write_cgroup_file(dir / "cpu.cfs_period_us", std::to_string(period)) ||
      !write_cgroup_file(dir / "cpu.cfs_quota_us", std::to_string(quota))) {
    fs::remove(dir, ec);
    throw std::runtime_error("cannot cap single threads: " + dir.string() + " cannot be created or written (root?)");
  }
  auto cap = std::unique_ptr<CpuCap>(new CpuCap());
  cap->pid_ = ::getpid();
  cap->threads_only_ = true;
  cap->dir_ = dir.string();
  cap->parent_procs_ = (v1 / "tasks").string();
  cap->description_ = "cgroup v1 cpu.cfs_quota_us " + std::to_string(quota) + " per " + std::to_string(period) + " us (" + std::to_string(cores) +
                      " cores) on the device's work threads only";
  return cap;
}

void CpuCap::add_thread(long tid) {
  if (!threads_only_) throw std::runtime_error("add_thread: this cap is not a thread cap");
  if (!write_cgroup_file(fs::path(dir_) / "tasks", std::to_string(tid)))
    throw std::runtime_error("cannot move thread " + std::to_string(tid) + " into " + dir_);
}

void CpuCap::add_calling_thread() { add_thread(static_cast<long>(::syscall(SYS_gettid))); }

void CpuCap::set_cores(double cores) {
  if (!(cores > 0)) throw std::runtime_error("the CPU cap must be > 0 cores");
  const long quota = std::max(1000L, std::lround(cores * period_us_));
  const bool ok = v2_ ? write_cgroup_file(fs::path(dir_) / "cpu.max", std::to_string(quota) + " " + std::to_string(period_us_))
                      : write_cgroup_file(fs::path(dir_) / "cpu.cfs_quota_us", std::to_string(quota));
  if (!ok) throw std::runtime_error("cannot change the CPU cap of " + dir_);
}

CpuCap::~CpuCap() {
  if (dir_.empty()) return;
  if (threads_only_) {
    // Threads still in the cgroup go back to the root one; then it can be removed.
    std::ifstream in(fs::path(dir_) / "tasks");
    std::string tid;
    while (in >> tid) write_cgroup_file(parent_procs_, tid);
    std::error_code ec;
    fs::remove(dir_, ec);
    return;
  }
  if (::kill(pid_, 0) == 0) write_cgroup_file(parent_procs_, std::to_string(pid_));  // still running: move it back
  std::error_code ec;
  fs::remove(dir_, ec);
}

}  // namespace coinfer::hw
