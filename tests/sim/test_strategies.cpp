// Single-device timing, strategy by strategy. Platform (see sim_fixture.hpp): device link 1e6 B/s with
// 5 ms latency, access point 125e6 B/s with 0 latency, server link 125e6 B/s with 0.1 ms latency, CM02
// (transfer = sum of latencies + bytes / bottleneck bandwidth). Device stages 10 ms each, server
// stages 1 ms each (9 stages).
#include <gtest/gtest.h>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
// Uplink: 5.1 ms of latency + bytes / 1e6 B/s (the device link is the bottleneck).
double up(double bytes) { return 0.0051 + bytes / 1e6; }
// Downlink: 0.1 ms + 5 ms latency, 160 B / 1e6 B/s.
const double kDown = 0.0051 + kResultBytes / 1e6;

}  // namespace

TEST(Strategies, LocalLatencyIsTheDeviceLut) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("d", "local")));
  // 9 stages x 10 ms = 90 ms each, back to back: requests created at 0, 0.09, ... < 1 s -> 12 requests.
  ASSERT_EQ(r.requests.size(), 12u);
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const auto& q = r.requests[i];
    EXPECT_NEAR(q.t_created, 0.09 * i, kTol);
    EXPECT_NEAR(q.latency_s(), 0.090, kTol);
    EXPECT_EQ(q.server, -1);
    EXPECT_EQ(q.bytes_up, 0);
  }
  EXPECT_EQ(r.summary.back().completed, 12);
}

TEST(Strategies, OffloadLatencyIsUplinkPlusServerPlusDownlink) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("d", "offload")));
  // up(12288 B) = 5.1 + 12.288 ms; server [0,9) = 9 ms; down = 5.1 + 0.16 ms -> 31.648 ms.
  const double expected = up(kRawBytes) + 0.009 + kDown;
  EXPECT_NEAR(expected, 0.031648, 1e-12);
  ASSERT_GT(r.requests.size(), 5u);
  for (const auto& q : r.requests) {
    if (!q.done()) continue;
    EXPECT_NEAR(q.latency_s(), expected, kTol);
    EXPECT_NEAR(q.t_uplink_end - q.t_created, up(kRawBytes), kTol);
    EXPECT_NEAR(q.t_batch_end - q.t_batch_start, 0.009, kTol);
    EXPECT_EQ(q.batch_size, 1);
    EXPECT_DOUBLE_EQ(q.bytes_up, kRawBytes);
    EXPECT_DOUBLE_EQ(q.bytes_down, kResultBytes);
  }
}

TEST(Strategies, PipelineSplitLatencyAddsBothSides) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("d", "pp(6)")));  // in_flight 1: pure latency
  // device [0,6) = 60 ms; up(8192 B) = 13.292 ms; server [6,9) = 3 ms; down = 5.26 ms -> 81.552 ms.
  const double expected = 0.060 + up(kPooledBytes) + 0.003 + kDown;
  ASSERT_GT(r.requests.size(), 5u);
  for (const auto& q : r.requests) {
    if (!q.done()) continue;
    EXPECT_NEAR(q.latency_s(), expected, kTol);
    EXPECT_NEAR(q.t_device_end - q.t_device_start, 0.060, kTol);
    EXPECT_EQ(q.split, 6);
  }
}

TEST(Strategies, PipelineThroughputIsOneOverTheSlowestStage) {
  SimSetup s;
  s.write_lut("testdev", 0.002);  // device [0,6) = 12 ms
  s.write_lut("testsrv", 0.040);  // server [6,9) = 120 ms: the bottleneck
  // in_flight 4 keeps the server busy; up = 13.292 ms, down = 5.26 ms are shorter than 120 ms.
  RunResults r = s.run(scenario(device("d", "pp(6)", "{arrival: closed_loop, in_flight: 4}"), "{window_ms: 0, max_size: 1}", 5));
  std::vector<double> ends;
  for (const auto& q : r.requests)
    if (q.done()) ends.push_back(q.t_result);
  std::sort(ends.begin(), ends.end());
  ASSERT_GT(ends.size(), 20u);
  // Steady state: one result every 120 ms exactly.
  for (size_t i = 5; i < ends.size(); ++i) EXPECT_NEAR(ends[i] - ends[i - 1], 0.120, kTol) << i;
  // And the device works on input i+1 while input i is on the server: overlapping lifetimes.
  EXPECT_LT(r.requests[1].t_device_start, r.requests[0].t_batch_end);
}

TEST(Strategies, DeviceBottleneckPipelineRunsAtDeviceRate) {
  SimSetup s;
  s.write_lut("testdev", 0.010);  // device [0,6) = 60 ms: the bottleneck
  s.write_lut("testsrv", 0.001);
  RunResults r = s.run(scenario(device("d", "pp(6)", "{arrival: closed_loop}"), "{window_ms: 0, max_size: 1}", 3));  // default in_flight 2
  std::vector<double> ends;
  for (const auto& q : r.requests)
    if (q.done()) ends.push_back(q.t_result);
  ASSERT_GT(ends.size(), 10u);
  for (size_t i = 3; i < ends.size(); ++i) EXPECT_NEAR(ends[i] - ends[i - 1], 0.060, kTol) << i;
}

TEST(Strategies, DataParallelSendsEachInputToWhicheverSideIsFree) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("d", "data_parallel", "{arrival: closed_loop}")));
  ASSERT_GT(r.requests.size(), 4u);
  // t=0, both free: the server path is estimated at 5.1*2 ms + (12288+160) B / 1e6 B/s + 9 ms = 31.6 ms
  // (without the server link's 0.1 ms latencies), less than 90 ms locally -> request 0 to the server.
  EXPECT_EQ(r.requests[0].split, 0);
  EXPECT_NEAR(r.requests[0].latency_s(), 0.031648, kTol);
  // Request 1, created at once, finds the server path busy and runs whole on the device.
  EXPECT_EQ(r.requests[1].split, 9);
  EXPECT_NEAR(r.requests[1].t_created, 0, kTol);
  EXPECT_NEAR(r.requests[1].latency_s(), 0.090, kTol);
  // Request 2 is created when request 0 returns and goes to the (free) server.
  EXPECT_NEAR(r.requests[2].t_created, 0.031648, kTol);
  EXPECT_EQ(r.requests[2].split, 0);
  long long local = 0, remote = 0;
  for (const auto& q : r.requests) (q.split == 9 ? local : remote)++;
  EXPECT_GT(local, 5);
  EXPECT_GT(remote, 20);
}

TEST(Strategies, LeaveStopsArrivalsAndJoinStartsThem) {
  SimSetup s;
  write_standard_luts(s);
  std::string devs = device("a", "local") + device("b", "local");
  RunResults r = s.run(scenario(devs, "{window_ms: 0, max_size: 1}", 1, 0, 1,
                                "events:\n  - {at_s: 0.5, device: a, leave: true}\n  - {at_s: 0.3, device: b, join: true}\n"));
  for (const auto& q : r.requests) {
    if (q.device == 0) {
      EXPECT_LT(q.t_created, 0.5);
    }
    if (q.device == 1) {
      EXPECT_GE(q.t_created, 0.3 - kTol);
    }
    EXPECT_TRUE(q.done());
  }
  // a: created at 0, 0.09, ..., 0.45 -> 6; b: 0.3 .. 0.93 -> 8.
  EXPECT_EQ(r.summary[0].completed, 6);
  EXPECT_EQ(r.summary[1].completed, 8);
}

TEST(Strategies, PoissonArrivalsAreReproducibleAndRoughlyAtRate) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("d", "offload", "{arrival: poisson, rate_per_s: 10}"), "{window_ms: 0, max_size: 1}", 30));
  // 300 expected arrivals; a Poisson count stays within +-4 sigma (about 70) of it.
  EXPECT_NEAR(static_cast<double>(r.requests.size()), 300, 70);
  for (const auto& q : r.requests) EXPECT_TRUE(q.done());
}
