// The testbed's journal merge is a pure function: per-device journals + decisions -> RunResults in
// the simulator's schema. Hand-built records; no processes, no root.
#include <gtest/gtest.h>

#include <cmath>

#include "hw/journal_merge.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {
RequestRecord rec(int device, double created, double result, const std::string& strategy, double up, double down) {
  RequestRecord r = test::request(device, created, result);
  r.id = 99;  // journals number per device; the merge renumbers
  r.strategy = strategy;
  r.bytes_up = up;
  r.bytes_down = down;
  return r;
}
}  // namespace

TEST(JournalMerge, RequestsInCreationOrderRenumberedWithBytesStrategiesAndSummary) {
  Scenario sc;
  sc.duration_s = 10;
  sc.warmup_s = 0;
  for (const char* id : {"a", "b"}) sc.devices.push_back(test::device_spec(id, 5, Strategy::local()));
  EventSpec e;
  e.at_s = 2.0;
  e.what = event::Bandwidth{"b", 1.0};
  sc.events.push_back(e);
  // a: two requests (the second under offload); b: one created between them, and one failed.
  std::vector<std::vector<RequestRecord>> journals(2);
  journals[0] = {rec(0, 1.0, 1.5, "local", 0, 0), rec(0, 3.0, 3.2, "offload", 100, 10)};
  journals[1] = {rec(1, 2.0, 2.1, "pp(3)", 50, 10)};
  RequestRecord failed = rec(1, 4.0, NAN, "pp(3)", 0, 0);
  failed.status = RequestRecord::Status::failed;
  failed.failure = "connection to the server lost";
  journals[1].push_back(failed);
  DecisionRecord d;
  d.trigger = "start";
  d.scheme = "a=offload b=pp(3) helpers=[]";
  RunResults r = hw::merge_journals(sc, journals, {d}, 12.5);
  ASSERT_EQ(r.requests.size(), 4u);
  EXPECT_DOUBLE_EQ(r.requests[0].t_created, 1.0);
  EXPECT_EQ(r.requests[1].device, 1);  // b's request at 2.0 s comes between a's two
  EXPECT_DOUBLE_EQ(r.requests[2].t_created, 3.0);
  for (size_t k = 0; k < r.requests.size(); ++k) EXPECT_EQ(r.requests[k].id, static_cast<std::int64_t>(k));
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_DOUBLE_EQ(r.devices[0].bytes_sent, 100);
  EXPECT_DOUBLE_EQ(r.devices[1].bytes_received, 10);
  EXPECT_EQ(r.devices[0].strategy, "offload");  // the last decision naming it (core/run_assembly.hpp, the simulator's rule)
  EXPECT_TRUE(std::isnan(r.devices[0].energy_compute_j));
  EXPECT_DOUBLE_EQ(r.end_s, 12.5);
  ASSERT_EQ(r.decisions.size(), 1u);
  ASSERT_EQ(r.events.size(), 2u);  // the scenario's event, then the end of arrivals at 10 s (as the simulator records)
  EXPECT_EQ(r.events[0].kind, "bandwidth");
  EXPECT_EQ(r.events[1].kind, "arrivals_end");
  EXPECT_DOUBLE_EQ(r.events[1].t_s, 10);
  // b's bandwidth schedule: 5 Mbit/s from 0, 1 Mbit/s from 2 s.
  // The values themselves (they were read from a destroyed schedule once, and came out as garbage).
  ASSERT_EQ(r.bandwidth.size(), 3u);
  EXPECT_EQ(r.bandwidth[0].device, 0);
  EXPECT_DOUBLE_EQ(r.bandwidth[0].t_s, 0);
  EXPECT_DOUBLE_EQ(r.bandwidth[0].mbps, 5);
  EXPECT_EQ(r.bandwidth[1].device, 1);
  EXPECT_DOUBLE_EQ(r.bandwidth[1].t_s, 0);
  EXPECT_DOUBLE_EQ(r.bandwidth[1].mbps, 5);
  EXPECT_EQ(r.bandwidth[2].device, 1);
  EXPECT_DOUBLE_EQ(r.bandwidth[2].t_s, 2);
  EXPECT_DOUBLE_EQ(r.bandwidth[2].mbps, 1);
  // Summary over the 10 s window: 3 completed, 1 failed.
  const MetricsSummary& total = r.summary.back();
  EXPECT_EQ(total.completed, 3);
  EXPECT_EQ(total.failed, 1);
  EXPECT_DOUBLE_EQ(total.throughput_rps, 0.3);
}

TEST(JournalMerge, EnergyFromPowerReadings) {
  // Readings 2 W at 0 s, 4 W at 1 s and 3 s; window [0.5, 2.5]: P(0.5) = 3 (between 2 and 4), then 4.
  // Trapezoids: (3 + 4) / 2 x 0.5 = 1.75, (4 + 4) / 2 x 1.5 = 6: 7.75 J.
  std::string why;
  EXPECT_NEAR(hw::energy_from_power({{0, 2}, {1, 4}, {3, 4}}, 0.5, 2.5, &why), 7.75, 1e-12);
  EXPECT_EQ(why, "");
  // A constant 5 W over 4 s, readings beyond the window's edges: 20 J.
  EXPECT_NEAR(hw::energy_from_power({{-0.5, 5}, {1, 5}, {2.5, 5}, {4.2, 5}}, 0, 4, &why), 20, 1e-12);
  // Not covered: NaN and why.
  EXPECT_TRUE(std::isnan(hw::energy_from_power({}, 0, 4, &why)));
  EXPECT_EQ(why, "no power readings");
  EXPECT_TRUE(std::isnan(hw::energy_from_power({{0, 1}, {5, 1}}, 0, 5, &why)));
  EXPECT_NE(why.find("a gap of 5.0 s"), std::string::npos) << why;
  EXPECT_TRUE(std::isnan(hw::energy_from_power({{3, 1}, {4, 1}}, 0, 4, &why)));
  EXPECT_NE(why.find("3.0 s after the window opens"), std::string::npos) << why;
}
