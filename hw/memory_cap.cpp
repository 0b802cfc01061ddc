#include "hw/memory_cap.hpp"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "hw/cgroup_files.hpp"

namespace fs = std::filesystem;

namespace coinfer::hw {

namespace {
// Creates the cgroup folder `dir` for a new cap. Its name holds this process's pid and a tag, so a folder
// of that name left by an earlier run (killed before it removed its caps) belonged to a process with this
// pid, which is gone: the pid was reused. Such a leftover is removed first when no process is in it.
// False, with the reason in `why`, when the folder cannot be made.
bool make_cap_folder(const fs::path& dir, std::string& why) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    std::ifstream procs(dir / "cgroup.procs");
    std::string first;
    if (procs && std::getline(procs, first) && !first.empty()) {
      why = dir.string() + " exists and holds processes";
      return false;
    }
    if (!fs::remove(dir, ec)) {
      why = "cannot remove the leftover " + dir.string() + " of an earlier run: " + ec.message();
      return false;
    }
  }
  if (!fs::create_directory(dir, ec)) {
    why = "cannot create " + dir.string() + (ec ? ": " + ec.message() : "");
    return false;
  }
  return true;
}

// "key value" lines (memory.events, memory.oom_control): the value of `key`, -1 when absent.
long keyed_value(const fs::path& p, const std::string& key) {
  std::ifstream in(p);
  std::string k;
  long v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return -1;
}
const fs::path kV1 = "/sys/fs/cgroup/memory";
const fs::path kV2Roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
}  // namespace

bool MemoryCap::available(std::string* why) {
  std::error_code ec;
  const fs::path probe_name = "coinfer-mem-probe-" + std::to_string(::getpid());
  for (const fs::path& root : kV2Roots)
    if (fs::exists(root / "cgroup.procs") && cgroup_v2_has_controller(root, "memory") && fs::create_directory(root / probe_name, ec)) {
      fs::remove(root / probe_name, ec);
      return true;
    }
  if (fs::exists(kV1 / "cgroup.procs") && fs::create_directory(kV1 / probe_name, ec)) {
    fs::remove(kV1 / probe_name, ec);
    return true;
  }
  if (why) *why = "no writable cgroup memory controller (cgroup v2 with memory in cgroup.subtree_control, or v1 at " + kV1.string() + "; needs root)";
  return false;
}

std::unique_ptr<MemoryCap> MemoryCap::apply_to(int pid, double bytes, const std::string& tag) {
  if (!(bytes >= 4096)) throw std::runtime_error("a memory limit must be at least 4096 bytes");
  const bool unlimited = std::isinf(bytes);
  const std::string limit = unlimited ? "max" : std::to_string(static_cast<long long>(bytes));
  const std::string limit_v1 = unlimited ? "-1" : limit;
  const std::string name = "coinfer-mem-" + std::to_string(::getpid()) + "-" + tag;
  auto cap = std::unique_ptr<MemoryCap>(new MemoryCap());
  cap->pid_ = pid;
  cap->limit_ = bytes;
  std::error_code ec;
  std::string failed;  // why the last attempt failed
  for (const fs::path& root : kV2Roots) {
    if (!fs::exists(root / "cgroup.procs") || !cgroup_v2_has_controller(root, "memory")) continue;
    const fs::path dir = root / name;
    if (!make_cap_folder(dir, failed)) continue;
    // No swap: a board without swap space runs out of memory at its memory.
    if (write_cgroup_file(dir / "memory.max", limit) && (!fs::exists(dir / "memory.swap.max") || write_cgroup_file(dir / "memory.swap.max", "0")) &&
        write_cgroup_file(dir / "cgroup.procs", std::to_string(pid))) {
      cap->dir_ = dir.string();
      cap->parent_procs_ = (root / "cgroup.procs").string();
      cap->v2_ = true;
      cap->description_ = "cgroup v2 memory.max (" + std::string(unlimited ? "unlimited" : limit + " B") + "), memory.swap.max 0";
      return cap;
    }
    failed = "writing the limit or the pid into " + dir.string() + " failed";
    fs::remove(dir, ec);
  }
  if (fs::exists(kV1 / "cgroup.procs")) {
    const fs::path dir = kV1 / name;
    // memsw (memory + swap) may only be set at or above the memory limit: memory first.
    const bool made = make_cap_folder(dir, failed);
    if (made && write_cgroup_file(dir / "memory.limit_in_bytes", limit_v1) &&
        (!fs::exists(dir / "memory.memsw.limit_in_bytes") || write_cgroup_file(dir / "memory.memsw.limit_in_bytes", limit_v1)) &&
        write_cgroup_file(dir / "cgroup.procs", std::to_string(pid))) {
      cap->dir_ = dir.string();
      cap->parent_procs_ = (kV1 / "cgroup.procs").string();
      cap->description_ = "cgroup v1 memory.limit_in_bytes (" + std::string(unlimited ? "unlimited" : limit + " B") + ")" +
                          (fs::exists(dir / "memory.memsw.limit_in_bytes") ? ", memory.memsw.limit_in_bytes the same (no swap)" : "");
      return cap;
    }
    if (made) {
      failed = "writing the limit or the pid into " + dir.string() + " failed";
      fs::remove(dir, ec);
    }
  }
  std::string why = failed;
  if (why.empty()) available(&why);
  throw std::runtime_error("cannot limit the memory of process " + std::to_string(pid) + ": " + why);
}

void MemoryCap::set_limit(double bytes) {
  if (!(bytes >= 4096) || !std::isfinite(bytes)) throw std::runtime_error("a memory limit must be at least 4096 bytes");
  const std::string limit = std::to_string(static_cast<long long>(bytes));
  const fs::path dir = dir_;
  bool ok;
  if (v2_) {
    ok = write_cgroup_file(dir / "memory.max", limit);
  } else {
    // memsw >= memory at every step: raising, memsw first; lowering, memory first.
    const bool memsw = fs::exists(dir / "memory.memsw.limit_in_bytes");
    const bool raise = std::isfinite(limit_) && bytes >= limit_;
    ok = raise ? (!memsw || write_cgroup_file(dir / "memory.memsw.limit_in_bytes", limit)) && write_cgroup_file(dir / "memory.limit_in_bytes", limit)
               : write_cgroup_file(dir / "memory.limit_in_bytes", limit) && (!memsw || write_cgroup_file(dir / "memory.memsw.limit_in_bytes", limit));
  }
  if (!ok) throw std::runtime_error("the kernel refused a memory limit of " + limit + " B in " + dir_);
  limit_ = bytes;
  description_ = (v2_ ? "cgroup v2 memory.max " : "cgroup v1 memory.limit_in_bytes ") + limit + " B";
}

double MemoryCap::usage_bytes() const {
  std::ifstream in(fs::path(dir_) / (v2_ ? "memory.current" : "memory.usage_in_bytes"));
  double v = 0;
  return in >> v ? v : std::nan("");
}

long MemoryCap::oom_kills() const {
  const long n = v2_ ? keyed_value(fs::path(dir_) / "memory.events", "oom_kill") : keyed_value(fs::path(dir_) / "memory.oom_control", "oom_kill");
  return n < 0 ? 0 : n;
}

double MemoryCap::peak_bytes() const {
  std::ifstream in(fs::path(dir_) / (v2_ ? "memory.peak" : "memory.max_usage_in_bytes"));
  double v = 0;
  return in >> v ? v : std::nan("");
}

MemoryCap::~MemoryCap() {
  if (dir_.empty()) return;
  if (::kill(pid_, 0) == 0) write_cgroup_file(parent_procs_, std::to_string(pid_));  // still running: move it back
  std::error_code ec;
  fs::remove(dir_, ec);
}

}  // namespace coinfer::hw
