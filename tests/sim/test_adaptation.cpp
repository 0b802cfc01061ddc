// Runtime adaptation: the scheduler monitor re-decides on triggers and the devices switch strategy
// through scheduling messages without losing a request.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

TEST(Adaptation, BandwidthDropMovesTheAffectedDeviceAndLosesNothing) {
  SimSetup s;
  write_standard_luts(s);  // device 90 ms whole model, server 9 ms
  const std::string devs = device("a", "offload", "{arrival: closed_loop, in_flight: 1}", "{bandwidth_mbps: 100, latency_ms: 1}") +
                           device("b", "offload", "{arrival: closed_loop, in_flight: 1}", "{bandwidth_mbps: 100, latency_ms: 1}");
  // At 1 s a's link falls to 0.05 Mbit/s: 12288 B would take 2 s up, so local (90 ms) is better.
  RunResults r = s.run(scenario(devs, "{window_ms: 0, max_size: 1}", 6, 0, 1,
                                "scheduler: {name: hierarchical, objective: latency}\n"
                                "events:\n  - {at_s: 1, device: a, bandwidth_mbps: 0.05}\n"));
  ASSERT_GE(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].trigger, "start");
  EXPECT_NEAR(r.decisions[1].t_s, 1.0, kTol);
  EXPECT_EQ(r.decisions[1].trigger, "bandwidth:a");
  EXPECT_GE(r.decisions[1].switched, 1);
  EXPECT_NE(r.decisions[1].scheme.find("a=local"), std::string::npos) << r.decisions[1].scheme;
  EXPECT_EQ(r.decisions[1].scheme.find("b=local"), std::string::npos) << r.decisions[1].scheme;
  // The request a had in flight at 1 s finishes under the old scheme (its upload now takes up to 2 s);
  // a's later requests run locally; b keeps using the server; every request completes.
  int a_local_after = 0, a_remote_after = 0, b_remote = 0;
  for (const auto& q : r.requests) {
    EXPECT_TRUE(q.done() && q.status == RequestRecord::Status::ok) << q.id;
    if (q.device == 0 && q.t_created > 3.5) (q.split == 9 ? a_local_after : a_remote_after)++;
    if (q.device == 1 && q.split < 9) ++b_remote;
  }
  EXPECT_GT(a_local_after, 10);
  EXPECT_EQ(a_remote_after, 0);
  EXPECT_GT(b_remote, 50);
  EXPECT_EQ(r.devices[0].strategy, "local");
}

TEST(Adaptation, JoinTriggersADecisionThatIncludesTheNewDevice) {
  SimSetup s;
  write_standard_luts(s);
  const std::string devs = device("a", "offload") + device("b", "offload");
  RunResults r =
      s.run(scenario(devs, "{window_ms: 0, max_size: 1}", 2, 0, 1, "scheduler: {name: greedy}\nevents:\n  - {at_s: 0.5, device: b, join: true}\n"));
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].scheme.find("b="), std::string::npos) << r.decisions[0].scheme;  // not yet joined
  EXPECT_EQ(r.decisions[1].trigger, "join:b");
  EXPECT_NE(r.decisions[1].scheme.find("b="), std::string::npos);
}

TEST(Adaptation, SmallBandwidthChangesBelowTheThresholdDoNotTrigger) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("a", "offload", "{arrival: closed_loop, in_flight: 1}", "{bandwidth_mbps: 100, latency_ms: 1}"),
                                "{window_ms: 0, max_size: 1}", 2, 0, 1,
                                "scheduler: {name: hierarchical, bandwidth_threshold_pct: 20}\n"
                                "events:\n  - {at_s: 0.5, device: a, bandwidth_mbps: 90}\n  - {at_s: 1.0, device: a, bandwidth_mbps: 50}\n"));
  ASSERT_EQ(r.decisions.size(), 2u);  // start, then 1.0 s (-50 %); 0.5 s (-10 %) does not trigger
  EXPECT_NEAR(r.decisions[1].t_s, 1.0, kTol);
}

TEST(Adaptation, ChargedDecisionTimeDelaysTheSchemeOnTheServer) {
  SimSetup s;
  write_standard_luts(s);
  // Inputs every 2 us (a trace) on a device whose scheduling message takes a known, tiny time: CM02
  // (no latency factors), 1-byte messages, zero device and access-point latency, so the message
  // from the server takes T = 0.1 ms (the server link's latency) + 1 B / 1000 Mbit/s. The decision
  // at t = 0 leaves the server only after its charged wall time, so the device switches at
  // wall_s + T exactly: every request created before then has the old strategy, the first one
  // created at or after it the new one. Without the charge the switch would come at T, wall_s
  // (tens of microseconds and more: several inputs) earlier.
  {
    std::ofstream trace(s.dir() + "/arrivals.txt");
    for (int k = 0; k < 2500; ++k) trace << k * 2e-6 << "\n";
  }
  const std::string dev =
      "  - {id: a, type: testdev, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 1000, latency_ms: 0}, "
      "strategy: local, workload: {arrival: trace, file: " +
      s.dir() + "/arrivals.txt}}\n";
  RunResults r = s.run(scenario(dev, "{window_ms: 0, max_size: 1}", 0.005, 0, 1,
                                "network_model: cm02\n"
                                "scheduler: {name: oracle, charge_decision_time: true, objective: latency, control_bytes: 1}\n"));
  ASSERT_EQ(r.decisions.size(), 1u);
  const double wall = r.decisions[0].wall_s;
  ASSERT_GT(wall, 0);
  ASSERT_EQ(r.decisions[0].scheme.find("a=local"), std::string::npos) << "the oracle should move a off local: " << r.decisions[0].scheme;
  const double switch_s = wall + 0.1e-3 + 8.0 / 1e9;
  int before_switch = 0;
  for (const auto& q : r.requests) {
    if (q.t_created < switch_s - 1e-9) {
      EXPECT_EQ(q.strategy, "local") << "request created at " << q.t_created << " s, switch expected at " << switch_s << " s";
      ++before_switch;
    } else if (q.t_created > switch_s + 1e-9) {
      EXPECT_NE(q.strategy, "local") << "request created at " << q.t_created << " s, switch expected at " << switch_s << " s";
    }
  }
  // At least the inputs in [0, T) and [T, wall + T) came before the switch.
  EXPECT_GE(before_switch, static_cast<int>((switch_s - 1e-9) / 2e-6));
}

TEST(Adaptation, IdleHelperTakesBatchesTheWorkersCannot) {
  SimSetup s;
  s.write_lut("testdev", 0.100);  // 0.9 s locally: the devices offload
  s.write_lut("testsrv", 0.010);  // 90 ms per input on the server's single worker: a queue builds
  s.write_lut("helper", 0.001);   // the idle device runs the whole model in 9 ms
  const std::string wl = "{arrival: closed_loop, in_flight: 1}";
  const std::string link = "{bandwidth_mbps: 100, latency_ms: 1}";
  std::string devs = device("a", "offload", wl, link) + device("b", "offload", wl, link) + device("c", "offload", wl, link) +
                     "  - {id: h, type: helper, model: dgcnn, dataset: modelnet40, link: " + link + ", workload: {arrival: none}}\n";
  RunResults with = s.run(scenario(devs, "{window_ms: 0, max_size: 1}", 3, 0, 1, "scheduler: {name: hierarchical, objective: latency}\n"));
  ASSERT_FALSE(with.decisions.empty());
  EXPECT_NE(with.decisions[0].scheme.find("helpers=[h]"), std::string::npos) << with.decisions[0].scheme;
  int helped = 0;
  for (const auto& q : with.requests) {
    EXPECT_TRUE(q.done() && q.status == RequestRecord::Status::ok) << q.id;
    EXPECT_NE(q.device, 3);  // the helper creates no requests
    if (q.helper == 3) {
      ++helped;
      EXPECT_NEAR(q.t_batch_end - q.t_batch_start, 0.009, kTol);  // the helper's LUT, batch of one
    } else if (q.split == 0) {
      EXPECT_NEAR(q.t_batch_end - q.t_batch_start, 0.090, kTol);
    }
  }
  EXPECT_GT(helped, 10);
}
