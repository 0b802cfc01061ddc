// Mobility in the simulator (core/mobility.hpp), timed by hand on the fixture
// (sim_fixture.hpp): device a offloads (closed loop, one in flight) over a link capped at 8 Mbit/s (1e6
// B/s) with 5 ms latency; it sits 10 m from access point p until 0.5 s, then walks to 10 m from q by
// 0.6 s (a trace). 10 m gives far more than the cap (PL = 70 dB, SNR 40 dB: 132.9 Mbit/s), so the link
// runs at 1e6 B/s except during the handover at 0.6 s (positions every 0.1 s): 1 kbit/s (125 B/s) over
// [0.6, 0.65) s. A request alone: up 17.388 ms (5.1 ms + 12,288 B / 1e6 B/s) + 9 ms + down 5.26 ms
// (5.1 ms + 160 B / 1e6 B/s) = 31.648 ms.
#include <gtest/gtest.h>

#include <cmath>
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
         "workload: {arrival: closed_loop, in_flight: 1}, movement: {trace: " +
         s.dir() + "/walk.csv}}\n";
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

// mobility.mid_transfer (core/mobility.hpp): what a handover does to the transfer it catches.
namespace {
std::string with_rule(std::string yaml, const std::string& rule, bool far) {
  if (far) yaml.replace(yaml.find("latency_ms: 5}"), 14, "latency_ms: 10}");
  yaml.replace(yaml.find("handover_ms: 50"), 15, "handover_ms: 50, mid_transfer: " + rule);
  return yaml;
}
}  // namespace

TEST(Mobility, AnUploadCaughtByAHandoverIsResentWhenItEnds) {
  // As in AnUploadCaughtByAHandoverWaitsForIt, request 14 (created at 583.072 ms) is uploading at
  // 0.6 s: its 10.1 ms latency ended at 593.172 ms and 6,828 B went by 600 ms, now lost. It starts
  // again at 650 ms, whole: 10.1 ms + 12,288 B / 1e6 B/s = 22.388 ms, uploaded at 672.388 ms, then
  // 9 ms and 10.26 ms down: done at 691.648 ms (latency 108.576 ms), one resend recorded. The radio
  // sent the lost 6,828 B too. Request 15 then takes 41.648 ms on the restored link.
  SimSetup s;
  write_standard_luts(s);
  const RunResults r = s.run(with_rule(walking_scenario(s), "resend", true));
  ASSERT_GE(r.requests.size(), 16u);
  const auto& caught = r.requests[14];
  EXPECT_NEAR(caught.t_created, 0.583072, kTol);
  EXPECT_NEAR(caught.t_uplink_end, 0.672388, kTol);
  EXPECT_NEAR(caught.latency_s(), 0.108576, kTol);
  EXPECT_EQ(caught.resends, 1);
  EXPECT_EQ(caught.status, RequestRecord::Status::ok);
  EXPECT_NEAR(r.requests[15].t_created, 0.691648, kTol);
  EXPECT_NEAR(r.requests[15].latency_s(), 0.041648, kTol);
  double uploaded = 0;
  for (const auto& q : r.requests) {
    if (q.id != 14) EXPECT_EQ(q.resends, 0) << q.id;
    if (!std::isnan(q.t_uplink_end)) uploaded += q.bytes_up;
  }
  EXPECT_NEAR(r.devices[0].bytes_sent - uploaded, 6828, 1e-3);
}

TEST(Mobility, AnUploadCaughtByAHandoverFailsWithItsReason) {
  // Request 14 fails at 600 ms. Request 15 is created then (one in flight) and uploads through the
  // handover: 10.1 ms latency to 610.1 ms, 39.9 ms x 125 B/s = 4.9875 B by 650 ms, the other
  // 12,283.0125 B in 12.2830125 ms: uploaded at 662.2830125 ms, done at 681.5430125 ms (81.5430125 ms).
  SimSetup s;
  write_standard_luts(s);
  const RunResults r = s.run(with_rule(walking_scenario(s), "fail", true));
  ASSERT_GE(r.requests.size(), 16u);
  const auto& caught = r.requests[14];
  EXPECT_EQ(caught.status, RequestRecord::Status::failed);
  EXPECT_EQ(caught.failure, "handover from p to q at 0.6 s during its upload (mobility.mid_transfer: fail)");
  EXPECT_TRUE(std::isnan(caught.t_uplink_end));
  EXPECT_NEAR(r.requests[15].t_created, 0.6, kTol);
  EXPECT_NEAR(r.requests[15].t_uplink_end, 0.6622830125, kTol);
  EXPECT_NEAR(r.requests[15].latency_s(), 0.0815430125, kTol);
  EXPECT_EQ(r.requests[15].status, RequestRecord::Status::ok);
}

TEST(Mobility, AResultCaughtByAHandoverIsResentWhenItEnds) {
  // Request 18's result leaves the server at 596.052 ms and is still in its 5.1 ms latency at 0.6 s
  // (nothing received). It is sent again at 650 ms: 5.1 ms + 160 B / 1e6 B/s, arriving at 655.26 ms
  // (latency 85.596 ms, one resend); request 19 starts then and takes 31.648 ms.
  SimSetup s;
  write_standard_luts(s);
  const RunResults r = s.run(with_rule(walking_scenario(s), "resend", false));
  ASSERT_GE(r.requests.size(), 20u);
  const auto& caught = r.requests[18];
  EXPECT_NEAR(caught.t_batch_end, 0.596052, kTol);
  EXPECT_NEAR(caught.latency_s(), 0.085596, kTol);
  EXPECT_EQ(caught.resends, 1);
  EXPECT_NEAR(r.requests[19].t_created, 0.65526, kTol);
  EXPECT_NEAR(r.requests[19].latency_s(), 0.031648, kTol);
}

TEST(Mobility, AResultCaughtByAHandoverFailsWithItsReason) {
  // Request 18 fails at 600 ms with its result on the link; request 19 is created then and uploads
  // through the handover: 5.1 ms latency to 605.1 ms, 44.9 ms x 125 B/s = 5.6125 B by 650 ms, the rest
  // (12,282.3875 B) in 12.2823875 ms: 662.2823875 ms, + 9 ms + 5.26 ms = 676.5423875 ms (76.5423875 ms).
  SimSetup s;
  write_standard_luts(s);
  const RunResults r = s.run(with_rule(walking_scenario(s), "fail", false));
  ASSERT_GE(r.requests.size(), 20u);
  const auto& caught = r.requests[18];
  EXPECT_EQ(caught.status, RequestRecord::Status::failed);
  EXPECT_EQ(caught.failure, "handover from p to q at 0.6 s during its result's transfer (mobility.mid_transfer: fail)");
  EXPECT_NEAR(r.requests[19].t_created, 0.6, kTol);
  EXPECT_NEAR(r.requests[19].latency_s(), 0.0765423875, kTol);
}
