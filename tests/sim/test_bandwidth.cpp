// A bandwidth step during a transfer changes its duration. One offloaded input of 12288 B; the device
// link has no latency, the server link 0.1 ms, so bytes flow from t = 0.1 ms. The step is at 6.2 ms.
#include <gtest/gtest.h>

#include "core/bandwidth_schedule.hpp"
#include "sim/platform_builder.hpp"
#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

TEST(Bandwidth, FallingStepSlowsTheTransferInFlight) {
  SimSetup s;
  write_standard_luts(s);
  // 8 Mbit/s = 1e6 B/s until 6.2 ms: 6100 B sent; the other 6188 B at 0.5e6 B/s take 12.376 ms.
  RunResults r = s.run(scenario(device("d", "offload", "{arrival: closed_loop, in_flight: 1}", "{bandwidth_mbps: 8, latency_ms: 0}"),
                                "{window_ms: 0, max_size: 1}", 0.001, 0, 1, "events:\n  - {at_s: 0.0062, device: d, bandwidth_mbps: 4}\n"));
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_NEAR(r.requests[0].t_uplink_end, 0.0062 + 6188 / 0.5e6, kTol);
}

TEST(Bandwidth, RisingStepFromATraceSpeedsUpTheTransferInFlight) {
  SimSetup s;
  write_standard_luts(s);
  s.write_file("bw.csv", "# source: test\ntime_s,bandwidth_mbps\n0,4\n0.0062,8\n");
  // 0.5e6 B/s until 6.2 ms: 3050 B; the other 9238 B at 1e6 B/s take 9.238 ms -> 15.438 ms
  // (SimGrid alone would keep the starting rate and finish at 24.676 ms).
  RunResults r = s.run(
      scenario(device("d", "offload", "{arrival: closed_loop, in_flight: 1}", "{bandwidth_mbps: 4, latency_ms: 0, trace: " + s.dir() + "/bw.csv}"),
               "{window_ms: 0, max_size: 1}", 0.001));
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_NEAR(r.requests[0].t_uplink_end, 0.0062 + 9238 / 1e6, kTol);
  ASSERT_EQ(r.bandwidth.size(), 2u);  // recorded for the plot: 4 from 0, 8 from 6.2 ms
  EXPECT_DOUBLE_EQ(r.bandwidth[1].mbps, 8);
}

TEST(Bandwidth, AccessPointIsSharedByAllDevices) {
  SimSetup s;
  write_standard_luts(s);
  // Two devices on 80 Mbit/s links share a 16 Mbit/s (2e6 B/s) access point: 1e6 B/s each, so
  // each 12288 B input takes 12.288 ms + 5.1 ms latency instead of 1.2288 ms + 5.1 ms.
  std::string link = "{bandwidth_mbps: 80, latency_ms: 5}";
  std::string yaml = scenario(
      device("a", "offload", "{arrival: closed_loop, in_flight: 1}", link) + device("b", "offload", "{arrival: closed_loop, in_flight: 1}", link),
      "{window_ms: 0, max_size: 1}", 0.001);
  RunResults r = s.run(yaml, {"access_point.bandwidth_mbps=16"});
  ASSERT_EQ(r.requests.size(), 2u);
  for (const auto& q : r.requests) EXPECT_NEAR(q.t_uplink_end, 0.0051 + kRawBytes / 1e6, kTol);
}

// The access point is left out of the routes only where no moment can load it past its capacity: its
// capacity at least the sum of every device link's peak, up and down, and no latency of its own (which
// would be lost with it).
TEST(Bandwidth, AccessPointLeftOutOnlyWhereItCannotBind) {
  DeviceSpec a, b;
  a.id = "a";
  b.id = "b";
  a.link.bandwidth_mbps = 40;
  b.link.bandwidth_mbps = 10;
  // b rises to 100 Mbit/s at 3 s: its peak. Peaks 40 + 100, up and down: 280 Mbit/s.
  EventSpec rise;
  rise.at_s = 3, rise.what = event::Bandwidth{"b", 100};
  const std::vector<EventSpec> events{rise};
  const std::vector<BandwidthSchedule> links{BandwidthSchedule(a, events), BandwidthSchedule(b, events)};
  AccessPointSpec ap;
  ap.bandwidth_mbps = 280;
  EXPECT_FALSE(sim::access_point_can_bind(ap, links));  // exactly the sum: it cannot be exceeded
  ap.bandwidth_mbps = 279.9;
  EXPECT_TRUE(sim::access_point_can_bind(ap, links));  // b's raised rate could load it past 279.9
  ap.bandwidth_mbps = 1e6;
  ap.latency_ms = 0.5;
  EXPECT_TRUE(sim::access_point_can_bind(ap, links));  // its latency is part of every route
}
