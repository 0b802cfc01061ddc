#include <gtest/gtest.h>

#include "core/bandwidth_schedule.hpp"

using namespace coinfer;

TEST(BandwidthSchedule, MergesBaseTraceAndEventsInTimeOrder) {
  DeviceSpec d;
  d.id = "x";
  d.link.bandwidth_mbps = 40;
  d.link.trace = {{10, 20}, {20, 5}};
  std::vector<EventSpec> ev(2);
  ev[0].at_s = 15;
  ev[0].what = event::Bandwidth{"x", 1};
  ev[1].at_s = 15;
  ev[1].what = event::Bandwidth{"other", 99};  // another device: ignored
  BandwidthSchedule s(d, ev);
  EXPECT_DOUBLE_EQ(s.mbps_at(0), 40);
  EXPECT_DOUBLE_EQ(s.mbps_at(9.99), 40);
  EXPECT_DOUBLE_EQ(s.mbps_at(10), 20);
  EXPECT_DOUBLE_EQ(s.mbps_at(15), 1);  // the event
  EXPECT_DOUBLE_EQ(s.mbps_at(25), 5);  // the next trace point
  EXPECT_DOUBLE_EQ(s.peak_mbps(), 40);
  EXPECT_DOUBLE_EQ(s.bytes_per_s_at(0), 5e6);
  EXPECT_FALSE(s.constant());
  DeviceSpec c;
  c.link.bandwidth_mbps = 8;
  EXPECT_TRUE(BandwidthSchedule(c, {}).constant());
}
