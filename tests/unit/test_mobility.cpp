// Mobility (core/mobility.hpp): the path-loss rate, association, positions, the
// random waypoint and the expansion into link rates and handover events, with values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "core/mobility.hpp"
#include "core/scenario.hpp"
#include "sched/rescheduler.hpp"

using namespace coinfer;

TEST(Mobility, TheRateFollowsLogDistancePathLossAndShannon) {
  // The default radio: 20 MHz, 20 dBm, noise -90 dBm, PL(1 m) 40 dB, exponent 3, half of Shannon.
  const RadioModel r;
  // 100 m: PL = 40 + 30 x 2 = 100 dB; SNR = 20 - 100 + 90 = 10 dB = 10; 0.5 x 20 x log2(11) = 34.594 Mbit/s.
  EXPECT_NEAR(link_rate_mbps(r, 20, 100, 1e6), 10 * std::log2(11.0), 1e-9);
  // 1 km: PL = 130 dB; SNR = -20 dB = 0.01; 10 x log2(1.01) = 0.14355 Mbit/s.
  EXPECT_NEAR(link_rate_mbps(r, 20, 1000, 1e6), 10 * std::log2(1.01), 1e-9);
  // Closer than 1 m counts as 1 m (PL = 40 dB, SNR 70 dB: 232.5 Mbit/s), and the device's cap bounds it.
  EXPECT_NEAR(link_rate_mbps(r, 20, 0.2, 1e6), 10 * std::log2(1e7 + 1), 1e-6);
  EXPECT_DOUBLE_EQ(link_rate_mbps(r, 20, 0.2, 40), 40);
  // Far beyond any use the rate floors at kNoLinkMbps (the simulator cannot carry zero).
  EXPECT_DOUBLE_EQ(link_rate_mbps(r, 20, 1e7, 1e6), kNoLinkMbps);
}

TEST(Mobility, NearestAndStrongestAssociation) {
  // a at (0, 0) with the radio's 20 dBm, b at (60, 0) with 30 dBm; the device at (25, 0).
  MobilitySpec m;
  m.access_points = {AccessPointPlace{"a", 0, 0, 100, 0, {}}, AccessPointPlace{"b", 60, 0, 100, 30, {}}};
  EXPECT_EQ(associate(m, 25, 0), 0);  // nearest: 25 m against 35 m
  // strongest: a 20 - (40 + 30 log10 25) = -61.9 dBm, b 30 - (40 + 30 log10 35) = -56.3 dBm.
  m.association = MobilitySpec::Association::strongest;
  EXPECT_EQ(associate(m, 25, 0), 1);
  m.association = MobilitySpec::Association::nearest;
  m.access_points[0].range_m = 20;  // a does not reach 25 m
  EXPECT_EQ(associate(m, 25, 0), 1);
  EXPECT_EQ(associate(m, -500, 0), -1);  // no coverage
  m.access_points[0].range_m = 100;
  EXPECT_EQ(associate(m, 30, 0), 0);  // equidistant: the one listed first
}

TEST(Mobility, TracePositionsAreLinearBetweenRowsAndHeldOutside) {
  MovementSpec m;
  m.kind = MovementSpec::Kind::trace;
  m.trace = {{1, 0, 0}, {11, 100, -50}};
  EXPECT_DOUBLE_EQ(position_at(m, {}, 0).x_m, 0);     // before the first row: the first
  EXPECT_DOUBLE_EQ(position_at(m, {}, 3.5).x_m, 25);  // 2.5 s of 10 s: a quarter of the way
  EXPECT_DOUBLE_EQ(position_at(m, {}, 3.5).y_m, -12.5);
  EXPECT_DOUBLE_EQ(position_at(m, {}, 99).y_m, -50);  // after the last: the last
}

TEST(Mobility, RandomWaypointIsSeededPerDeviceAndStaysInItsBounds) {
  MovementSpec m;
  m.kind = MovementSpec::Kind::random_waypoint;
  m.area_w_m = 300;
  m.area_h_m = 100;
  m.speed_min_mps = 1;
  m.speed_max_mps = 3;
  m.pause_min_s = 0;
  m.pause_max_s = 5;
  const auto a = random_waypoint_legs(m, 7, 0, 600), again = random_waypoint_legs(m, 7, 0, 600), other = random_waypoint_legs(m, 7, 1, 600);
  ASSERT_GT(a.size(), 3u);
  EXPECT_EQ(a.size(), again.size());
  EXPECT_DOUBLE_EQ(a[2].x1, again[2].x1);
  EXPECT_NE(a[0].x0, other[0].x0);  // another device, another stream
  for (size_t k = 0; k < a.size(); ++k) {
    const WaypointLeg& l = a[k];
    for (double x : {l.x0, l.x1}) EXPECT_TRUE(x >= 0 && x <= 300);
    for (double y : {l.y0, l.y1}) EXPECT_TRUE(y >= 0 && y <= 100);
    const double speed = std::hypot(l.x1 - l.x0, l.y1 - l.y0) / (l.t1_s - l.t0_s);
    EXPECT_TRUE(speed >= 1 - 1e-9 && speed <= 3 + 1e-9) << k << " " << speed;
    if (k > 0) {
      EXPECT_DOUBLE_EQ(l.x0, a[k - 1].x1);              // it starts where the last leg ended
      EXPECT_TRUE(l.t0_s - a[k - 1].t1_s <= 5 + 1e-9);  // after a pause of at most 5 s
    }
  }
  EXPECT_GE(a.back().t0_s, 0);
  EXPECT_LT(a.back().t0_s, 600);
  const PositionPoint p = position_at(m, a, a[1].t0_s + (a[1].t1_s - a[1].t0_s) / 2);  // halfway along leg 1
  EXPECT_NEAR(p.x_m, (a[1].x0 + a[1].x1) / 2, 1e-9);
}

namespace {
// Access points a at x = 0 and b at x = 200 (range 150); device m walks from x = 0 to x = 200 over 2 s
// (a trace), its link capped at 100 Mbit/s; positions every 0.1 s, handovers 50 ms.
Scenario walking() {
  Scenario s;
  s.duration_s = 3;
  s.drain_s = 0;
  s.mobility.access_points = {AccessPointPlace{"a", 0, 0, 150, 0, {}}, AccessPointPlace{"b", 200, 0, 150, 0, {}}};
  s.mobility.step_s = 0.1;
  s.mobility.handover_ms = 50;
  DeviceSpec d;
  d.id = "m";
  d.link.bandwidth_mbps = 100;
  d.movement.kind = MovementSpec::Kind::trace;
  d.movement.trace = {{0, 0, 0}, {2, 200, 0}};
  s.devices.push_back(d);
  DeviceSpec still;  // no movement: untouched
  still.id = "still";
  still.link.bandwidth_mbps = 8;
  s.devices.push_back(still);
  return s;
}
}  // namespace

TEST(Mobility, ExpansionGivesTheRateOverTimeAndOneHandoverEvent) {
  Scenario s = walking();
  expand_mobility(s);
  // At x = 100 (t = 1.0) both are 100 m away: a (listed first) keeps it; at t = 1.1 (x = 110) b is
  // nearer: one handover, a -> b, at 1.1 s.
  ASSERT_EQ(s.events.size(), 1u);
  const EventSpec& h = s.events[0];
  ASSERT_TRUE(h.is<event::Handover>());
  EXPECT_EQ(h.device(), "m");
  EXPECT_EQ(h.as<event::Handover>()->from_access_point, "a");
  EXPECT_EQ(h.as<event::Handover>()->access_point, "b");
  EXPECT_NEAR(h.at_s, 1.1, 1e-9);
  const auto& tr = s.devices[0].link.trace;
  auto rate_at = [&](double t) {
    double r = 0;
    for (const auto& p : tr)
      if (p.t_s <= t + 1e-12) r = p.mbps;
    return r;
  };
  // t = 0..0.2 (x <= 20 m from a): above the 100 Mbit/s cap. t = 0.5: 50 m from a: PL = 40 + 30 log10 50
  // = 90.97 dB, SNR 19.03 dB = 79.98: 10 log2(80.98) = 63.39 Mbit/s.
  EXPECT_DOUBLE_EQ(rate_at(0), 100);
  EXPECT_NEAR(rate_at(0.5), 10 * std::log2(1 + std::pow(10, (20 - 40 - 30 * std::log10(50.0) + 90) / 10)), 1e-9);
  // The handover: nothing for 50 ms from 1.1 s, then b's rate at 90 m (the 1.1 s position) until 1.2 s.
  EXPECT_DOUBLE_EQ(rate_at(1.12), kNoLinkMbps);
  EXPECT_NEAR(rate_at(1.16), 10 * std::log2(1 + std::pow(10, (20 - 40 - 30 * std::log10(90.0) + 90) / 10)), 1e-9);
  // The device that does not move keeps its link as it was.
  EXPECT_TRUE(s.devices[1].link.trace.empty());
}

TEST(Mobility, AHandoverIsASchedulerTrigger) {
  Scenario s = walking();
  expand_mobility(s);
  const std::vector<BandwidthSchedule> schedules = {BandwidthSchedule(s.devices[0], s.events), BandwidthSchedule(s.devices[1], s.events)};
  int handovers = 0;
  for (const auto& [t, trig] : Rescheduler::scenario_events(s, schedules, s.duration_s))
    if (trig.is<trigger::Handover>()) {
      ++handovers;
      EXPECT_NEAR(t, 1.1, 1e-9);
      EXPECT_EQ(trig.device().value, 0);
      EXPECT_EQ(trig.describe(s), "handover:m");
    }
  EXPECT_EQ(handovers, 1);
}

TEST(Mobility, AMovingDeviceCannotAlsoHaveABandwidthTraceOrEvents) {
  Scenario s = walking();
  s.devices[0].link.trace = {{0, 5}};
  EXPECT_THROW(expand_mobility(s), InputError);
  s = walking();
  EventSpec e;
  e.what = event::Bandwidth{"m"};
  s.events.push_back(e);
  EXPECT_THROW(expand_mobility(s), InputError);
}

TEST(Mobility, ARandomWaypointInATinyAreaWalkedFastHasBoundedLegs) {
  // A 1 mm square at 1000 m/s without pauses: a leg takes about a microsecond, so a minute would need
  // tens of millions; the walk stops at the cap (expand_mobility: four per position sample) and stays.
  MovementSpec m;
  m.kind = MovementSpec::Kind::random_waypoint;
  m.area_w_m = m.area_h_m = 1e-3;
  m.speed_min_mps = m.speed_max_mps = 1000;
  const auto legs = random_waypoint_legs(m, 1, 0, 60, 100);
  ASSERT_EQ(legs.size(), 100u);
  const PositionPoint end = position_at(m, legs, 60);
  EXPECT_DOUBLE_EQ(end.x_m, legs.back().x1);
  EXPECT_DOUBLE_EQ(end.y_m, legs.back().y1);
}

TEST(Mobility, ADevicesHandoversAreWhatItsEngineCarriesOut) {
  // The walk's one handover (a -> b at 1.1 s) lasts handover_ms = 50 ms: it ends at 1.15 s. The device
  // that stays put has none. The failure text names both access points and the rule, and is
  // recognised (summary.json's requests_failed), another failure is not.
  Scenario s = walking();
  expand_mobility(s);
  const std::vector<DeviceHandover> h = handovers_of(s, "m");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_NEAR(h[0].at_s, 1.1, 1e-9);
  EXPECT_NEAR(h[0].ends_s, 1.15, 1e-9);
  EXPECT_EQ(h[0].from_access_point, "a");
  EXPECT_EQ(h[0].access_point, "b");
  EXPECT_TRUE(handovers_of(s, "still").empty());
  const std::string up = handover_failure(h[0], true);
  EXPECT_EQ(up, "handover from a to b at 1.1 s during its upload (mobility.mid_transfer: fail)");
  EXPECT_EQ(handover_failure(h[0], false), "handover from a to b at 1.1 s during its result's transfer (mobility.mid_transfer: fail)");
  EXPECT_TRUE(is_handover_failure(up));
  EXPECT_FALSE(is_handover_failure("server edge0 failed at 0.3 s"));
  EXPECT_STREQ(mid_transfer_name(MobilitySpec::MidTransfer::resend), "resend");
}

TEST(Mobility, AHandoverCatchesATransferOnTheLinkWhenItStarts) {
  // Handovers at 1.0 s and 2.0 s. A transfer on the link over [start, end) is caught by the first that
  // starts within it: [0.5, 1.0) ends as the first starts (not caught), [0.5, 1.0001) and [1.0, 1.2)
  // are caught by it, [1.2, 1.9) by none, [1.2, 2.5) by the second, [0.9, 2.5) by the first.
  const std::vector<DeviceHandover> h{{1.0, 1.05, "a", "b"}, {2.0, 2.05, "b", "a"}};
  EXPECT_EQ(handover_catching(h, 0.5, 1.0), nullptr);
  EXPECT_EQ(handover_catching(h, 0.5, 1.0001), &h[0]);
  EXPECT_EQ(handover_catching(h, 1.0, 1.2), &h[0]);
  EXPECT_EQ(handover_catching(h, 1.2, 1.9), nullptr);
  EXPECT_EQ(handover_catching(h, 1.2, 2.5), &h[1]);
  EXPECT_EQ(handover_catching(h, 0.9, 2.5), &h[0]);
  EXPECT_EQ(handover_catching({}, 0, 10), nullptr);
}

TEST(Mobility, HysteresisKeepsTheAccessPointUntilAnotherIsBetterByThatMuch) {
  // The walk from a to b (x = 100 t), nearest, path-loss exponent 3, hysteresis 3 dB: b must be nearer
  // by 30 log10(d_a / d_b) > 3 dB. At 1.1 s (110 m vs 90 m) that is 2.61 dB: a is kept; at 1.2 s
  // (120 vs 80) 5.28 dB: the handover is at 1.2 s instead of 1.1 s.
  Scenario s = walking();
  s.mobility.hysteresis_db = 3;
  expand_mobility(s);
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_NEAR(s.events[0].at_s, 1.2, 1e-9);
  // A device pacing across the cell edge, 95 m and 105 m from a every 0.1 s until 1 s: without
  // hysteresis ten handovers (a, b, a, ... at every step); with 2 dB none (30 log10(105 / 95) = 1.30 dB).
  Scenario pace = walking();
  pace.devices[0].movement.trace.clear();
  for (int k = 0; k <= 10; ++k) pace.devices[0].movement.trace.push_back({k * 0.1, k % 2 == 0 ? 95.0 : 105.0, 0});
  Scenario with = pace;
  expand_mobility(pace);
  EXPECT_EQ(pace.events.size(), 10u);
  with.mobility.hysteresis_db = 2;
  expand_mobility(with);
  EXPECT_EQ(with.events.size(), 0u);
  // strongest: received powers in dB, each access point's own transmit power counted. b at 23 dBm
  // (3 dB more than a) with 2 dB hysteresis: at 95 m from a (105 from b), b's received power is 23 -
  // PL(105) = 3 - 1.30 = 1.70 dB above a's: not enough, a is kept at every step; with 1 dB it switches.
  Scenario strong = pace;
  strong.events.clear();
  strong.mobility.association = MobilitySpec::Association::strongest;
  strong.mobility.access_points[1].tx_power_dbm = 23;
  EXPECT_EQ(associate_from(strong.mobility, 95, 0, 0), 1);  // no hysteresis: the best, b
  strong.mobility.hysteresis_db = 2;
  EXPECT_EQ(associate_from(strong.mobility, 95, 0, 0), 0);
  strong.mobility.hysteresis_db = 1;
  EXPECT_EQ(associate_from(strong.mobility, 95, 0, 0), 1);
}
