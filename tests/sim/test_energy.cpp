// Device energy: SimGrid's host energy plugin (idle_w when idle, busy_w when computing) over the
// measurement window, plus radio energy per byte sent or received.
#include <gtest/gtest.h>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
std::string powered(const std::string& strategy) {
  return "  - {id: d, type: testdev, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 8, latency_ms: 5}, "
         "strategy: " + strategy + ", workload: {arrival: trace, file: LUTDIR/arrivals.txt}, "
         "power: {idle_w: 2, busy_w: 5, radio_j_per_mb: 0.5}}\n";
}
}  // namespace

TEST(Energy, ComputeEnergyIsIdlePlusBusyTime) {
  SimSetup s;
  write_standard_luts(s);
  s.write_file("arrivals.txt", "# one input at t = 1 s\n1.0\n");
  RunResults r = s.run(scenario(powered("local"), "{window_ms: 0, max_size: 1}", 3, 0.5));
  ASSERT_EQ(r.requests.size(), 1u);
  // Window 0.5..3 s: 90 ms busy at 5 W, 2.41 s idle at 2 W -> 0.45 + 4.82 = 5.27 J.
  EXPECT_NEAR(r.devices[0].energy_compute_j, 5.27, 1e-6);
  EXPECT_NEAR(r.devices[0].energy_radio_j, 0, 1e-12);
  EXPECT_NEAR(r.summary[0].energy_j_per_inference, 5.27, 1e-6);
}

TEST(Energy, RadioEnergyCountsBytesBothWays) {
  SimSetup s;
  write_standard_luts(s);
  s.write_file("arrivals.txt", "1.0\n");
  RunResults r = s.run(scenario(powered("offload"), "{window_ms: 0, max_size: 1}", 3, 0));
  // 12288 B up + 160 B down = 12448 B = 0.012448 MB x 0.5 J/MB = 0.006224 J; the device never
  // computes: 3 s x 2 W = 6 J.
  EXPECT_NEAR(r.devices[0].energy_radio_j, 0.006224, 1e-9);
  EXPECT_NEAR(r.devices[0].energy_compute_j, 6.0, 1e-6);
  EXPECT_NEAR(r.summary[0].energy_j_per_inference, 6.006224, 1e-6);
}
