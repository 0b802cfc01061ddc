// hw/system_meter: /proc parsers and the utilisation of others worked by hand.
#include <gtest/gtest.h>

#include "hw/system_meter.hpp"

using namespace coinfer::hw;

TEST(SystemMeter, ProcStatByHand) {
  // user 100, nice 5, system 50, idle 800, iowait 10, irq 1, softirq 2, steal 3 (guest fields ignored):
  // busy = 100 + 5 + 50 + 1 + 2 + 3 = 161; total = 161 + 800 + 10 = 971.
  const CpuTicks t = parse_proc_stat("cpu  100 5 50 800 10 1 2 3 0 0\ncpu0 50 2 25 400 5 1 1 1 0 0\nintr 1\n");
  EXPECT_EQ(t.busy, 161u);
  EXPECT_EQ(t.total, 971u);
  // A kernel that only has the first four fields.
  const CpuTicks old = parse_proc_stat("cpu 1 2 3 4\n");
  EXPECT_EQ(old.busy, 6u);
  EXPECT_EQ(old.total, 10u);
  EXPECT_THROW(parse_proc_stat("cpu0 1 2 3 4\n"), std::invalid_argument);
  EXPECT_THROW(parse_proc_stat("cpu 1 2\n"), std::invalid_argument);
}

TEST(SystemMeter, MemAvailableByHand) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n"), 2048LL * 1024);
  EXPECT_THROW(parse_mem_available("MemTotal: 1 kB\n"), std::invalid_argument);
}

TEST(SystemMeter, OthersUtilisationByHand) {
  // 400 ticks passed (2 CPUs, 2 s at 100 ticks/s), 200 of them busy; this process used 0.5 s = 50
  // ticks of them: others (200 - 50) / 400 = 0.375.
  EXPECT_DOUBLE_EQ(others_utilisation({100, 400}, {300, 800}, 0.5, 100), 0.375);
  // Own time beyond the busy ticks (tick granularity): clamped to 0; no tick passed: 0.
  EXPECT_DOUBLE_EQ(others_utilisation({100, 400}, {110, 420}, 1.0, 100), 0.0);
  EXPECT_DOUBLE_EQ(others_utilisation({100, 400}, {100, 400}, 0, 100), 0.0);
  // All busy and none of it ours: 1.
  EXPECT_DOUBLE_EQ(others_utilisation({0, 0}, {200, 200}, 0, 100), 1.0);
}

TEST(SystemMeter, ReadsThisMachine) {
  SystemMeter m;
  EXPECT_GT(m.available_memory_bytes(), 0);
  m.mark();
  const double u = m.utilisation_since_mark();
  EXPECT_GE(u, 0.0);
  EXPECT_LE(u, 1.0);
  EXPECT_FALSE(cpu_model_name().empty());
}
