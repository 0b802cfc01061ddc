// MemoryCap (hw/memory_cap.hpp): a cgroup folder left by an earlier run under the name a new cap takes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "hw/memory_cap.hpp"

namespace fs = std::filesystem;
using coinfer::hw::MemoryCap;

// A cap's folder is named "coinfer-mem-<this process's pid>-<tag>". A run killed before it removed its
// caps leaves such folders behind; once the kernel reuses its pid, the next run with the same tag found
// the name taken and failed with "cannot limit the memory of process N: " (no reason): testbed tests
// failed so on this machine with 45 leftovers in /sys/fs/cgroup/memory. A leftover without processes is
// removed and the cap made; the folder is gone once the cap is.
TEST(MemoryCap, ALeftoverFolderOfAReusedPidIsReplaced) {
  std::string why;
  if (::geteuid() != 0 || !MemoryCap::available(&why)) GTEST_SKIP() << "no writable cgroup memory controller: " << why;
  const std::string tag = "leftover-test";
  const std::string name = "coinfer-mem-" + std::to_string(::getpid()) + "-" + tag;
  fs::path leftover;
  for (const fs::path root : {fs::path("/sys/fs/cgroup"), fs::path("/sys/fs/cgroup/memory")}) {
    std::error_code ec;
    if (fs::exists(root / "cgroup.procs") && fs::create_directory(root / name, ec)) {
      leftover = root / name;
      break;
    }
  }
  ASSERT_FALSE(leftover.empty()) << "could not plant the leftover folder";
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  {
    std::unique_ptr<MemoryCap> cap;
    try {
      cap = MemoryCap::apply_to(child, 64.0 * 1024 * 1024, tag);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    if (cap) EXPECT_NE(cap->description().find("memory"), std::string::npos) << cap->description();
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  std::error_code ec;
  EXPECT_FALSE(fs::exists(leftover, ec)) << leftover;  // replaced, then removed with the cap
  fs::remove(leftover, ec);
}
