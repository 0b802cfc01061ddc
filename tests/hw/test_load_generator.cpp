// hw/load_generator: the child holds the memory it was asked for, is killed and reaped when the level
// changes, and levels stay in their bounds. The child program is coinfer-medn (its _load-child entry).
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <thread>

#include "hw/load_generator.hpp"

using namespace coinfer;
using namespace coinfer::hw;

namespace {
long long resident_bytes(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
}
}  // namespace

TEST(LoadGenerator, ChildHoldsItsMemoryAndIsReaped) {
  LoadGenerator g(COINFER_MEDN);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  g.set({1, 0.5, 32LL << 20});
  const pid_t first = g.child();
  ASSERT_GT(first, 0);
  // "ready" comes after every page was touched: resident at once.
  EXPECT_GE(resident_bytes(first), 32LL << 20);
  g.set({cores, 0.25, 0});  // a new child; the first is gone (killed and reaped, so not even a zombie)
  EXPECT_NE(g.child(), first);
  EXPECT_EQ(kill(first, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  const pid_t second = g.child();
  g.set({0, 0, 0});  // idle: no child
  EXPECT_EQ(g.child(), 0);
  EXPECT_EQ(kill(second, 0), -1);
  EXPECT_THROW(g.set({cores + 1, 0.5, 0}), std::invalid_argument);
  EXPECT_THROW(g.set({1, 0, 0}), std::invalid_argument);
  EXPECT_THROW(g.set({1, 0.5, -1}), std::invalid_argument);
}

TEST(LoadGenerator, RandomLevelsStayInBounds) {
  RandomStream r(1, StreamPurpose::test, 3);
  int idle = 0;
  for (int i = 0; i < 2000; ++i) {
    const LoadLevel l = random_load_level(r, 2, 1000);
    if (l.threads == 0) {
      ++idle;
      EXPECT_EQ(l.memory_bytes, 0);
      continue;
    }
    EXPECT_TRUE(l.threads >= 1 && l.threads <= 2) << l.threads;
    EXPECT_TRUE(l.duty >= 0.25 && l.duty <= 1.0) << l.duty;
    EXPECT_TRUE(l.memory_bytes >= 0 && l.memory_bytes <= 1000) << l.memory_bytes;
  }
  // Idle with probability 0.3: 600 expected of 2000, standard deviation ~20.
  EXPECT_NEAR(idle, 600, 100);
}
