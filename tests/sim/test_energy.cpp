// Device energy: SimGrid's host energy plugin (idle_w when idle, busy_w when computing) over the
// measurement window, plus radio energy per byte sent or received.
#include <gtest/gtest.h>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
std::string powered(const std::string& strategy) {
  return "  - {id: d, type: testdev, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 8, latency_ms: 5}, "
         "strategy: " +
         strategy +
         ", workload: {arrival: trace, file: LUTDIR/arrivals.txt}, "
         "power: {idle_w: 2, busy_w: 5, radio_j_per_mb: 0.5}}\n";
}
}  // namespace

TEST(Energy, ComputeEnergyIsIdlePlusBusyTime) {
  SimSetup s;
  write_standard_luts(s);
  s.write_file("arrivals.txt", "# one input at t = 1 s\n1.0\n");
  RunResults r = s.run(scenario(powered("local"), "{window_ms: 0, max_size: 1}", 3, 0.5));
  ASSERT_EQ(r.requests.size(), 1u);
  // Window 0.5..3 s: 90 ms busy at 5 W, 2.41 s idle at 2 W -> 0.45 + 4.82 = 5.27 J; split, idle power
  // all along 2 W x 2.5 s = 5 J and computing adds (5 - 2) W x 0.09 s = 0.27 J.
  EXPECT_NEAR(r.devices[0].energy_compute_j, 0.27, 1e-6);
  EXPECT_NEAR(r.devices[0].energy_idle_j, 5.0, 1e-6);
  EXPECT_NEAR(r.devices[0].energy_radio_j, 0, 1e-12);
  EXPECT_NEAR(r.summary[0].energy_j_per_inference, 5.27, 1e-6);
}

TEST(Energy, RadioEnergyCountsBytesBothWays) {
  SimSetup s;
  write_standard_luts(s);
  s.write_file("arrivals.txt", "1.0\n");
  RunResults r = s.run(scenario(powered("offload"), "{window_ms: 0, max_size: 1}", 3, 0));
  // 12288 B up + 160 B down = 12448 B = 0.012448 MB x 0.5 J/MB = 0.006224 J; the device never
  // computes: 3 s x 2 W = 6 J, all idle.
  EXPECT_NEAR(r.devices[0].energy_radio_j, 0.006224, 1e-9);
  EXPECT_NEAR(r.devices[0].energy_compute_j, 0, 1e-12);
  EXPECT_NEAR(r.devices[0].energy_idle_j, 6.0, 1e-6);
  EXPECT_FALSE(r.devices[0].radio_states);
  EXPECT_NEAR(r.summary[0].energy_j_per_inference, 6.006224, 1e-6);
}

TEST(Energy, RadioWithPowerStatesByHand) {
  SimSetup s;
  write_standard_luts(s);
  s.write_file("arrivals.txt", "1.0\n");
  std::string dev = powered("offload");
  const std::string flat = "radio_j_per_mb: 0.5";
  dev.replace(dev.find(flat), flat.size(),
              "radio: {base_w: 1, up_w_per_mbps: 0.5, down_w_per_mbps: 0.25, tail_w: 0.6, tail_s: 2, idle_w: 0.1, promotion_w: 2, promotion_s: 0.5}");
  RunResults r = s.run(scenario(dev, "{window_ms: 0, max_size: 1}", 3, 0));
  ASSERT_EQ(r.requests.size(), 1u);
  // The upload runs 1.000-1.017388 s (5.1 ms + 12,288 B at 8 Mbit/s), the server 9 ms, the result
  // 1.026388-1.031648 s (5.1 ms + 160 B). Active 22.648 ms at 1 W; rate terms 0.098304 Mbit x 0.5 +
  // 0.00128 Mbit x 0.25 = 0.049472 J. Tail: the 9 ms between them and 1.031648-3 s (cut by the window's
  // end): 1.977352 s x 0.6 W = 1.1864112 J. Idle 0-1 s: 0.1 J. One promotion (the upload, from idle;
  // the result starts within the tail): 1 J.
  ASSERT_TRUE(r.devices[0].radio_states);
  EXPECT_NEAR(r.devices[0].radio.active_s, 0.022648, 1e-9);
  EXPECT_NEAR(r.devices[0].radio.active_j, 0.022648 + 0.049472, 1e-9);
  EXPECT_NEAR(r.devices[0].radio.tail_j, 1.1864112, 1e-9);
  EXPECT_NEAR(r.devices[0].radio.idle_j, 0.1, 1e-9);
  EXPECT_NEAR(r.devices[0].radio.promotion_j, 1, 1e-12);
  EXPECT_NEAR(r.devices[0].energy_radio_j, 0.07212 + 1.1864112 + 0.1 + 1, 1e-9);
  // Per inference: idle 6 J + radio 2.3585312 J over one inference.
  EXPECT_NEAR(r.summary[0].energy_j_per_inference, 6 + 2.3585312, 1e-6);
}
