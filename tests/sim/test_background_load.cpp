// Devices whose free compute changes: events[].load slows a device's computations
// that start while the share is taken (core/background_load.hpp), and a load change beyond
// scheduler.load_threshold triggers a decision that sees it. Worked by hand on the fixture's test
// device (every stage 10 ms: local = 90 ms).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

TEST(BackgroundLoad, AComputationStartedUnderLoadTakesOneOverOneMinusTheShare) {
  // Local, closed loop: requests run 0-0.09, 0.09-0.18, ..., the twelfth 0.99-1.08 (started before the
  // load: 90 ms), then with half the processor taken from 1.0 s each takes 0.09 / (1 - 0.5) = 0.18 s:
  // 1.08-1.26, 1.26-1.44.
  SimSetup s;
  write_standard_luts(s);
  const RunResults r =
      s.run(scenario(device("a", "local"), "{window_ms: 0, max_size: 1}", 1.5, 0, 1, "events:\n  - {at_s: 1.0, device: a, load: 0.5}\n"));
  int checked = 0;
  for (const auto& q : r.requests)
    for (const auto& [start, end] : {std::pair{0.99, 1.08}, std::pair{1.08, 1.26}, std::pair{1.26, 1.44}})
      if (std::fabs(q.t_device_start - start) < 1e-9) {
        EXPECT_NEAR(q.t_device_end, end, kTol) << "started at " << start;
        ++checked;
      }
  EXPECT_EQ(checked, 3);
  ASSERT_FALSE(r.events.empty());
  EXPECT_EQ(r.events[0].kind, "load");
  EXPECT_DOUBLE_EQ(r.events[0].value, 0.5);
}

TEST(BackgroundLoad, ALoadChangeTriggersADecisionThatMovesWorkOffTheLoadedDevice) {
  // On a 1 Mbit/s, 5 ms link offloading costs 12,288 B / 125,000 B/s = 98.3 ms up + 9 ms + the result:
  // more than 90 ms locally, so hierarchical (objective latency) keeps a local. At 1 s 90 % of its
  // processor is taken: local becomes 900 ms, and the load trigger's decision offloads it.
  SimSetup s;
  write_standard_luts(s);
  const RunResults r = s.run(scenario(device("a", "local", "{arrival: closed_loop, in_flight: 1}", "{bandwidth_mbps: 1, latency_ms: 5}"),
                                      "{window_ms: 0, max_size: 1}", 3, 0, 1,
                                      "scheduler: {name: hierarchical, objective: latency}\n"
                                      "events:\n  - {at_s: 1.0, device: a, load: 0.9}\n"));
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_NE(r.decisions[0].scheme.find("a=local"), std::string::npos) << r.decisions[0].scheme;
  EXPECT_EQ(r.decisions[1].trigger, "load:a");
  EXPECT_NEAR(r.decisions[1].t_s, 1.0, kTol);
  EXPECT_NE(r.decisions[1].scheme.find("a=offload"), std::string::npos) << r.decisions[1].scheme;
}

TEST(BackgroundLoad, ChangesWithinTheThresholdDoNotTrigger) {
  // load_threshold 0.1 (the default): 0.05 at 0.5 s does not trigger; 0.3 at 1 s does (0.3 - 0 > 0.1).
  SimSetup s;
  write_standard_luts(s);
  const RunResults r = s.run(scenario(device("a", "local"), "{window_ms: 0, max_size: 1}", 2, 0, 1,
                                      "scheduler: {name: greedy}\nevents:\n  - {at_s: 0.5, device: a, load: 0.05}\n"
                                      "  - {at_s: 1.0, device: a, load: 0.3}\n"));
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[1].trigger, "load:a");
  EXPECT_NEAR(r.decisions[1].t_s, 1.0, kTol);
}
