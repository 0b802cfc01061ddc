// Radio power states (core/radio_energy.hpp): energies worked out by hand from the model's rule.
#include <gtest/gtest.h>

#include "core/radio_energy.hpp"
#include "core/record_energy.hpp"

namespace coinfer {
namespace {

// Round numbers so each term is checkable by hand: base 1 W, 0.5 W per Mbit/s up, 0.25 down, a 2 s tail
// at 0.6 W, 0.1 W idle, a promotion of 0.5 s at 2 W (1 J).
RadioStates hand_radio() {
  RadioStates m;
  m.base_w = 1;
  m.up_w_per_mbps = 0.5;
  m.down_w_per_mbps = 0.25;
  m.tail_w = 0.6;
  m.tail_s = 2;
  m.idle_w = 0.1;
  m.promotion_w = 2;
  m.promotion_s = 0.5;
  return m;
}

// Three transfers: A up 12-13 s (1e6 bytes = 8 Mbit), B down 14-14.5 s (0.5e6 bytes = 4 Mbit) inside
// A's tail, C up 20-21 s (2e6 bytes = 16 Mbit) 5.5 s after B (past the tail: a promotion).
void three_transfers(RadioEnergyMeter& m) {
  m.transfer_started(12);
  m.transfer_ended(12, 13, 1e6, true);
  m.transfer_started(14);
  m.transfer_ended(14, 14.5, 0.5e6, false);
  m.transfer_started(20);
  m.transfer_ended(20, 21, 2e6, true);
}

TEST(RadioEnergy, StatesOverTheWholeWindowByHand) {
  RadioEnergyMeter meter(hand_radio(), 10, 30);
  three_transfers(meter);
  const RadioEnergy e = meter.energy();
  // Active 1 + 0.5 + 1 = 2.5 s at 1 W, plus rate terms 8 x 0.5 + 4 x 0.25 + 16 x 0.5 = 13 J.
  EXPECT_NEAR(e.active_s, 2.5, 1e-12);
  EXPECT_NEAR(e.active_j, 2.5 + 13, 1e-12);
  // Tail: 13-14 (cut by B), 14.5-16.5, 21-23: 5 s at 0.6 W.
  EXPECT_NEAR(e.tail_s, 5, 1e-12);
  EXPECT_NEAR(e.tail_j, 3, 1e-12);
  // Idle: 10-12, 16.5-20, 23-30: 12.5 s at 0.1 W.
  EXPECT_NEAR(e.idle_j, 1.25, 1e-12);
  // Promotions: A (the first) and C, 1 J each; B starts within A's tail.
  EXPECT_NEAR(e.promotion_j, 2, 1e-12);
  EXPECT_NEAR(e.total_j(), 21.75, 1e-12);
}

TEST(RadioEnergy, WindowCutsSpansAndRateTermsByShare) {
  RadioEnergyMeter meter(hand_radio(), 12.5, 20.5);
  three_transfers(meter);
  const RadioEnergy e = meter.energy();
  // A: 0.5 of its 1 s inside (12.5-13): 0.5 s base, half its 4 J rate term; its promotion (at 12) is
  // outside. B: all of it (0.5 s, 1 J). C: 20-20.5 inside, half of 8 J; its promotion at 20 counts.
  EXPECT_NEAR(e.active_j, 1.5 + 2 + 1 + 4, 1e-12);
  EXPECT_NEAR(e.promotion_j, 1, 1e-12);
  // Tail 13-14 and 14.5-16.5 (3 s at 0.6); idle 16.5-20 (3.5 s at 0.1).
  EXPECT_NEAR(e.tail_j, 1.8, 1e-12);
  EXPECT_NEAR(e.idle_j, 0.35, 1e-12);
}

TEST(RadioEnergy, OverlappingTransfersPayTheBaseOnce) {
  RadioStates m;
  m.base_w = 1;
  RadioEnergyMeter meter(m, 0, 10);
  meter.transfer_started(0);
  meter.transfer_started(1);
  meter.transfer_ended(0, 2, 0, true);
  meter.transfer_ended(1, 3, 0, false);
  // The union 0-3 s, not 2 + 2.
  EXPECT_NEAR(meter.energy().active_j, 3, 1e-12);
  EXPECT_NEAR(meter.energy().active_s, 3, 1e-12);
}

TEST(RadioEnergy, NoTransferIsIdleAllAlong) {
  RadioEnergyMeter meter(hand_radio(), 5, 25);
  EXPECT_NEAR(meter.energy().total_j(), 2.0, 1e-12);  // 20 s x 0.1 W
  EXPECT_EQ(meter.energy().promotion_j, 0);
}

TEST(RadioEnergy, PerInferenceApproximationByHand) {
  const RadioStates m = hand_radio();
  // One inference per second, 0.2 s on the radio, two transfers: gaps of 0.4 s, all tail (0.6 W):
  // 0.48 J; base 0.2 J; rates 8 x 0.5 (1e6 up) + 2 x 0.25 (0.25e6 down) = 4.5 J.
  EXPECT_NEAR(radio_energy_per_inference(m, 1, 0.2, 1e6, 0.25e6, 2), 5.18, 1e-12);
  // One per 10 s: gaps of 4.9 s: 2 s tail (1.2 J) + 2.9 s idle (0.29 J) + a promotion (1 J), twice.
  EXPECT_NEAR(radio_energy_per_inference(m, 10, 0.2, 1e6, 0.25e6, 2), 0.2 + 4.5 + 2 * 2.49, 1e-12);
}

}  // namespace
}  // namespace coinfer

namespace coinfer {
namespace {

// Two requests of one device in the window [1, 2): a local one computing 1.0-1.09 s, an offloaded one
// uploading 12,288 B over 1.2-1.2174 s and receiving 160 B over 1.2264-1.2316 s (batch end to result).
std::vector<RequestRecord> two_requests() {
  RequestRecord local;
  local.t_created = local.t_device_start = 1.0;
  local.t_device_end = 1.09;
  local.t_result = 1.09;
  RequestRecord off;
  off.t_created = 1.2;
  off.t_uplink_end = 1.2174;
  off.t_batch_end = 1.2264;
  off.t_result = 1.2316;
  off.bytes_up = 12288;
  off.bytes_down = 160;
  return {local, off};
}

TEST(RecordEnergy, IdleComputeAndFlatRadioByHand) {
  const std::vector<RequestRecord> r = two_requests();
  PowerSpec p;
  p.idle_w = 2;
  p.busy_w = 5;
  p.radio_j_per_mb = 0.5;
  const WindowEnergy e = window_energy_from_records(p, {&r[0], &r[1]}, 1, 2);
  EXPECT_NEAR(e.idle_j, 2, 1e-12);          // 2 W x 1 s
  EXPECT_NEAR(e.compute_j, 0.27, 1e-12);    // 3 W x 0.09 s
  EXPECT_NEAR(e.radio_j, 0.006224, 1e-12);  // 12,448 B x 0.5 J/MB
}

TEST(RecordEnergy, RadioStatesOverTheRecordsTransfersByHand) {
  const std::vector<RequestRecord> r = two_requests();
  PowerSpec p;
  p.radio = hand_radio();
  // Idle 1-1.2 s (0.02 J); a promotion at 1.2 (1 J); active 17.4 + 5.2 ms (0.0226 J) and rates
  // 0.098304 x 0.5 + 0.00128 x 0.25 = 0.049472 J; tail 9 ms between them and 1.2316-2 s: 0.7774 s x 0.6.
  EXPECT_NEAR(window_energy_from_records(p, {&r[0], &r[1]}, 1, 2).radio_j, 0.02 + 1 + 0.0226 + 0.049472 + 0.7774 * 0.6, 1e-9);
}

}  // namespace
}  // namespace coinfer
