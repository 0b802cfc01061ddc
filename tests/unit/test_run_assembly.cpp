// Result assembly shared by the simulator and the merge of real journals (core/run_assembly.hpp).
// Expected values worked out by hand from the small scenario below.
#include <gtest/gtest.h>

#include <cmath>

#include "core/run_assembly.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

// Two devices: a (40 Mbit/s, strategy local), b (10 Mbit/s, offload); a leaves at 2 s; b's bandwidth
// drops to 5 Mbit/s at 5 s; arrivals end at 5 s.
Scenario small() {
  Scenario s;
  s.duration_s = 5;
  s.drain_s = 30;
  s.devices = {test::device_spec("a", 40, Strategy::local()), test::device_spec("b", 10, Strategy::offload())};
  EventSpec bw;
  bw.at_s = 5, bw.what = event::Bandwidth{"b", 5};
  EventSpec leave;
  leave.at_s = 2, leave.what = event::Leave{"a"};
  s.events = {bw, leave};
  return s;
}

}  // namespace

TEST(RunAssembly, EventsInTimeOrderWithTheEndOfArrivalsAfterEqualTimes) {
  const auto ev = scenario_event_records(small());
  ASSERT_EQ(ev.size(), 3u);
  // leave at 2 first; at 5 the scenario's bandwidth event keeps its place before arrivals_end.
  EXPECT_EQ(ev[0].kind, "leave");
  EXPECT_EQ(ev[0].device, "a");
  EXPECT_EQ(ev[1].kind, "bandwidth");
  EXPECT_DOUBLE_EQ(ev[1].value, 5);
  EXPECT_EQ(ev[2].kind, "arrivals_end");
  EXPECT_DOUBLE_EQ(ev[2].t_s, 5);
}

// Every join is an event: b joins by its own join_at_s (3 s), c by an events[] join (4 s, which also
// set its join_at_s: listed once), a from the start (no join). In time order: leave a (2), join b (3),
// join c (4), bandwidth (5), arrivals_end (5).
TEST(RunAssembly, EveryJoinIsListedOnceWhetherByJoinAtOrByAnEvent) {
  Scenario s = small();
  s.devices[1].join_at_s = 3;
  DeviceSpec c = s.devices[0];
  c.id = "c";
  c.join_at_s = 4;
  s.devices.push_back(c);
  EventSpec join;
  join.at_s = 4, join.what = event::Join{"c"};
  s.events.push_back(join);
  const auto ev = scenario_event_records(s);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[1].kind, "join");
  EXPECT_EQ(ev[1].device, "b");
  EXPECT_DOUBLE_EQ(ev[1].t_s, 3);
  EXPECT_EQ(ev[2].kind, "join");
  EXPECT_EQ(ev[2].device, "c");
  EXPECT_EQ(ev[3].kind, "bandwidth");
  EXPECT_EQ(ev[4].kind, "arrivals_end");
}

TEST(RunAssembly, BandwidthSamplesAreEachDevicesChangePointsUpToTheEnd) {
  // a: 40 from 0. b: 10 from 0, 5 from 5. Cut at 4 s: b's drop is after the end.
  auto at4 = bandwidth_samples(small(), 4);
  ASSERT_EQ(at4.size(), 2u);
  EXPECT_EQ(at4[0].device, 0);
  EXPECT_DOUBLE_EQ(at4[0].mbps, 40);
  EXPECT_EQ(at4[1].device, 1);
  EXPECT_DOUBLE_EQ(at4[1].mbps, 10);
  auto at6 = bandwidth_samples(small(), 6);
  ASSERT_EQ(at6.size(), 3u);
  EXPECT_DOUBLE_EQ(at6[2].t_s, 5);
  EXPECT_DOUBLE_EQ(at6[2].mbps, 5);
}

TEST(RunAssembly, TheStrategyAtTheEndIsTheLastDecisionNamingTheDevice) {
  const Scenario s = small();
  std::vector<DecisionRecord> d(2);
  d[0].scheme = "a=pp(2) b=local helpers=[]";
  d[1].scheme = "b=pp(3) helpers=[a]";  // a left: the last decision does not name it
  EXPECT_EQ(strategy_at_end(s, d, 0), "pp(2)");
  EXPECT_EQ(strategy_at_end(s, d, 1), "pp(3)");
  EXPECT_EQ(strategy_at_end(s, {}, 1), "offload");  // no decision: the scenario's
}

TEST(RunAssembly, TheServerAtTheEndIsTheLastDecisionMovingTheDevice) {
  // Device a moved to e2 then back to e1 (a later scheme names it again); b moved once and the last
  // decision leaves it out (it stays); without a move, the scenario's binding.
  const Scenario s = small();
  std::vector<DecisionRecord> d(3);
  d[0].scheme = "a=offload b=offload helpers=[] servers=[a:e2,b:e3]";
  d[1].scheme = "a=offload b=offload helpers=[] batching=[e1:5ms/2] servers=[a:e1]";
  d[2].scheme = "a=local b=offload helpers=[]";
  EXPECT_EQ(server_at_end(s, d, 0), "e1");
  EXPECT_EQ(server_at_end(s, d, 1), "e3");
  EXPECT_EQ(server_at_end(s, {}, 1), s.devices[1].server);
  RunResults r;
  r.devices.resize(2);
  r.decisions = d;
  record_final_choices(s, r);
  EXPECT_EQ(r.devices[0].server, "e1");
  EXPECT_EQ(r.devices[0].strategy, "local");
  EXPECT_EQ(r.devices[1].server, "e3");
}

TEST(RunAssembly, TheDrainFailureSaysWhereTheRequestWas) {
  RequestRecord r;
  r.t_created = 1;
  r.t_device_start = 1;
  EXPECT_EQ(drain_failure_text(r, 30), "not finished 30 s after arrivals ended (drain_s): computing on the device");
  r.t_device_end = 1.5;
  EXPECT_EQ(drain_failure_text(r, 30), "not finished 30 s after arrivals ended (drain_s): on the uplink or waiting for it");
  r.t_queued = 2;
  EXPECT_EQ(drain_failure_text(r, 2.5), "not finished 2.5 s after arrivals ended (drain_s): queued at the server");
  r.t_batch_start = 3;
  r.helper = 1;
  EXPECT_EQ(drain_failure_text(r, 30), "not finished 30 s after arrivals ended (drain_s): running on an idle helper device");
}

TEST(RunAssembly, ServerBusyTimeIsTheUnionOfItsBatchesInTheWindowAndItsEnergyTheHostRule) {
  // Window [1, 5): warm-up 1 s, arrivals end at 5 s. Server e0: idle 20 W, busy 120 W; e1 states no
  // power. Batches on e0 (two workers), as request records:
  //   [0.5, 1.5)  two requests of one batch (one created before warm-up): 0.5 s inside the window
  //   [2.0, 3.0)  and, overlapping on the other worker, [2.5, 3.5): union [2.0, 3.5) = 1.5 s
  //   [4.5, 6.0)  runs past the end: 0.5 s inside
  //   [3.6, 3.9)  computed by a helper device, not the server: not counted
  // busy = 0.5 + 1.5 + 0.5 = 2.5 s; energy = 20 x 4 + (120 - 20) x 2.5 = 330 J. Batches started in the
  // window: [2.0, 3.0), [2.5, 3.5), [4.5, 6.0) = 3. Requests created in the window and completed on it:
  // the second of the first batch (created 1.2), and the three others = 4 (the one created at 0.4 is
  // in warm-up; the helper's is not the server's).
  Scenario s = small();
  s.warmup_s = 1;
  ServerSpec e0, e1;
  e0.id = "e0", e0.type = "gpu", e0.idle_w = 20, e0.busy_w = 120;
  e1.id = "e1", e1.type = "cpu";
  s.servers = {e0, e1};
  const auto rec = [](double created, double a, double b, int helper = -1) {
    RequestRecord r;
    r.server = 0;
    r.t_created = created;
    r.t_batch_start = a;
    r.t_batch_end = b;
    r.t_result = b + 0.1;
    r.helper = helper;
    return r;
  };
  const std::vector<RequestRecord> records = {rec(0.4, 0.5, 1.5), rec(1.2, 0.5, 1.5), rec(1.9, 2.0, 3.0),
                                              rec(2.4, 2.5, 3.5), rec(4.4, 4.5, 6.0), rec(3.5, 3.6, 3.9, 1)};
  const auto out = server_results(s, records);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, "e0");
  EXPECT_NEAR(out[0].busy_s, 2.5, 1e-12);
  EXPECT_NEAR(out[0].energy_j, 330, 1e-9);
  EXPECT_EQ(out[0].batches, 3);
  EXPECT_EQ(out[0].requests, 4);
  EXPECT_EQ(out[1].busy_s, 0);
  EXPECT_TRUE(std::isnan(out[1].energy_j));  // no power stated
}
