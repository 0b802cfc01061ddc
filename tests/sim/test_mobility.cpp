// Mobility in the simulator (issue 36 item 2; core/mobility.hpp), timed by hand on the fixture
// (sim_fixture.hpp): device a offloads (closed loop, one in flight) over a link capped at 8 Mbit/s (1e6
// B/s) with 5 ms latency; it sits 10 m from access point p until 0.5 s, then walks to 10 m from q by
// 0.6 s (a trace). 10 m gives far more than the cap (PL = 70 dB, SNR 40 dB: 132.9 Mbit/s), so the link
// runs at 1e6 B/s except during the handover at 0.6 s (positions every 0.1 s): 1 kbit/s (125 B/s) over
// [0.6, 0.65) s. A request alone: up 17.388 ms (5.1 ms + 12,288 B / 1e6 B/s) + 9 ms + down 5.26 ms
// (5.1 ms + 160 B / 1e6 B/s) = 31.648 ms.
#include <gtest/gtest.h>

#include <string>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
std::string walking_scenario(SimSetup& s) {
  s.write_file("walk.csv", "t_s,x_m,y_m\n0,10,0\n0.5,10,0\n0.6,190,0\n");
  return "name: t\nseed: 1\nduration_s: 1\nwarmup_s: 0\nluts: [LUTDIR]\nservers:\n"
         "  - {id: srv, type: testsrv, workers: 1, batch: {window_ms: 0, max_size: 1}, link: {bandwidth_mbps: 1000, latency_ms: 0.1}}\n"
         "access_point: {bandwidth_mbps: 1000}\n"
         "mobility: {access_points: [{id: p, x_m: 0, y_m: 0, range_m: 150}, {id: q, x_m: 200, y_m: 0, range_m: 150}], handover_ms: 50, step_s: 0.1}\n"
         "devices:\n"
         "  - {id: a, type: testdev, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 8, latency_ms: 5}, strategy: offload, "
         "workload: {arrival: closed_loop, in_flight: 1}, movement: {trace: " + s.dir() + "/walk.csv}}\n";
}
}  // namespace

TEST(Mobility, AResultOnTheLinkDuringAHandoverWaitsForItAndArrives) {
  // Request 18 is created at 18 x 31.648 = 569.664 ms; its upload ends at 587.052 ms, the server's 9 ms
  // at 596.052 ms; its result's 5.1 ms latency ends at 601.152 ms, inside the handover: 125 B/s carry
  // 6.106 B of its 160 B by 650 ms (48.848 ms), the other 153.894 B take 0.153894 ms: it arrives at
  // 650.153894 ms (latency 80.489894 ms). Request 19 starts then and takes 31.648 ms again. The
  // handover is a decision trigger and an event.
  SimSetup s;
  write_standard_luts(s);
  const RunResults r = s.run(walking_scenario(s));
  ASSERT_GE(r.requests.size(), 21u);
  for (int k = 0; k < 18; ++k) EXPECT_NEAR(r.requests[static_cast<size_t>(k)].latency_s(), 0.031648, kTol) << k;
  const auto& caught = r.requests[18];
  EXPECT_NEAR(caught.t_created, 0.569664, kTol);
  EXPECT_TRUE(caught.done());
  EXPECT_NEAR(caught.latency_s(), 0.080489894, kTol);
  EXPECT_NEAR(r.requests[19].t_created, 0.650153894, kTol);
  EXPECT_NEAR(r.requests[19].latency_s(), 0.031648, kTol);
  int handovers = 0;
  for (const auto& e : r.events)
    if (e.kind == "handover") {
      ++handovers;
      EXPECT_NEAR(e.t_s, 0.6, 1e-9);
      EXPECT_EQ(e.device, "a");
      EXPECT_EQ(e.from_access_point, "p");
      EXPECT_EQ(e.access_point, "q");
    }
  EXPECT_EQ(handovers, 1);
  bool triggered = false;
  for (const auto& d : r.decisions) triggered = triggered || d.trigger.find("handover:a") != std::string::npos;
  EXPECT_TRUE(triggered);
}

TEST(Mobility, AnUploadCaughtByAHandoverWaitsForIt) {
  // Shift the walk so that an upload is on the link at 0.6 s: with the access points 5 ms further
  // (link latency 10 ms) a request takes 41.648 ms; request 14 is created at 583.072 ms, its 10.1 ms
  // latency ends at 593.172 ms, 6,828 B go by 600 ms, 6.25 B during the handover (125 B/s x 50 ms), the
  // other 5,453.75 B take 5.45375 ms from 650 ms: uploaded at 655.45375 ms, then 9 ms and 10.26 ms down:
  // done at 674.71375 ms (latency 91.64175 ms).
  SimSetup s;
  write_standard_luts(s);
  std::string yaml = walking_scenario(s);
  yaml.replace(yaml.find("latency_ms: 5}"), 14, "latency_ms: 10}");
  const RunResults r = s.run(yaml);
  ASSERT_GE(r.requests.size(), 16u);
  const auto& caught = r.requests[14];
  EXPECT_NEAR(caught.t_created, 14 * 0.041648, kTol);
  EXPECT_NEAR(caught.t_uplink_end, 0.65545375, kTol);
  EXPECT_NEAR(caught.latency_s(), 0.09164175, kTol);
}
