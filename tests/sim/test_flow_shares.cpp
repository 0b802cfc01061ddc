// coinfer's own transfer model (sim/flow_shares.hpp): first by hand, then against SimGrid itself on
// random platforms and transfers (one engine per process: each seed is its own test).
#include <gtest/gtest.h>

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/random_stream.hpp"
#include "sim/flow_shares.hpp"
#include "sim/platform_builder.hpp"

using namespace coinfer;
using coinfer::sim::FlowShares;

namespace {

// Runs `shares` from `now` until nothing is left; returns each tag's completion time.
std::map<std::uint64_t, double> run_out(FlowShares& shares) {
  std::map<std::uint64_t, double> done;
  std::vector<std::uint64_t> completed;
  for (double t = shares.next_event_s(); t != FlowShares::kNever; t = shares.next_event_s()) {
    completed.clear();
    shares.advance(t, completed);
    for (auto tag : completed) done[tag] = t;
  }
  return done;
}

}  // namespace

TEST(FlowShares, OneTransferWaitsItsLatencyThenSendsAtTheLinksRate) {
  FlowShares shares;
  const FlowShares::Link l = shares.add_link(1e6, 0.01);
  shares.start(0, &l, 1, 1e6, 7);
  // 10 ms of latency, then 1e6 B at 1e6 B/s.
  const auto done = run_out(shares);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_DOUBLE_EQ(done.at(7), 1.01);
}

TEST(FlowShares, TransfersOnOneLinkShareItInInverseProportionToTheirLatencies) {
  FlowShares shares;
  const FlowShares::Link a = shares.add_link(1e9, 0.01), b = shares.add_link(1e9, 0.03), s = shares.add_link(4e6, 0);
  const FlowShares::Link ra[] = {a, s}, rb[] = {b, s};
  shares.start(0, ra, 2, 1e6, 1);
  shares.start(0, rb, 2, 1e6, 2);
  // A sends alone at 4e6 B/s from 10 ms to 30 ms (80,000 B). Then the shared link's 4e6 B/s splits
  // 1/0.01 : 1/0.03 = 3 : 1: A at 3e6 finishes its 920,000 B at 0.03 + 0.30667 s; B, at 1e6 B/s
  // meanwhile, has sent 306,667 B and sends its other 693,333 B alone at 4e6 B/s: 0.17333 s more.
  const auto done = run_out(shares);
  EXPECT_NEAR(done.at(1), 0.03 + 920000 / 3e6, 1e-12);
  EXPECT_NEAR(done.at(2), 0.03 + 920000 / 3e6 + (1e6 - 920000 / 3.0) / 4e6, 1e-12);
}

TEST(FlowShares, ARouteWithoutLatencyWeighsOne) {
  FlowShares shares;
  const FlowShares::Link a = shares.add_link(1e9, 0), b = shares.add_link(1e9, 0.5), s = shares.add_link(3e6, 0);
  const FlowShares::Link ra[] = {a, s}, rb[] = {b, s};
  shares.start(0, rb, 2, 0, 2);  // nothing to send: done when its 0.5 s of latency have passed
  shares.start(0.5, rb, 2, 1e6, 3);
  shares.start(0.5, ra, 2, 1e6, 1);
  // After 0.5 s of latency, flow 3 (penalty 0.5, weight 2) and flow 1 (penalty 1, weight 1) share
  // 3e6 B/s: 2e6 and 1e6 from t = 1. Flow 1 alone at 3e6 from 0.5 to 1 (1.5e6 B, more than its 1e6): it
  // finishes at 0.5 + 1/3 before flow 3 starts sending.
  const auto done = run_out(shares);
  EXPECT_DOUBLE_EQ(done.at(2), 0.5);
  EXPECT_NEAR(done.at(1), 0.5 + 1e6 / 3e6, 1e-12);
  EXPECT_NEAR(done.at(3), 1.0 + 1e6 / 3e6, 1e-12);
}

TEST(FlowShares, TheWeightsDecideOnlyAmongTransfersTheSameLinkHolds) {
  FlowShares shares;
  // X (2e6) holds flow 1 only; the shared S (10e6) holds 1 and 2. Flow 1 cannot take more than X's
  // 2e6 whatever its weight, so flow 2 takes the 8e6 left on S.
  const FlowShares::Link x = shares.add_link(2e6, 0.001), y = shares.add_link(1e9, 0.1), s = shares.add_link(10e6, 0);
  const FlowShares::Link r1[] = {x, s}, r2[] = {y, s};
  const FlowShares::Flow f1 = shares.start(0, r1, 2, 1e9, 1), f2 = shares.start(0, r2, 2, 1e9, 2);
  std::vector<std::uint64_t> completed;
  shares.advance(shares.next_event_s(), completed);  // flow 1's latency
  shares.advance(shares.next_event_s(), completed);  // flow 2's
  shares.next_event_s();
  EXPECT_DOUBLE_EQ(shares.rate(f1), 2e6);
  EXPECT_DOUBLE_EQ(shares.rate(f2), 8e6);
  EXPECT_TRUE(completed.empty());
}

TEST(FlowShares, TheTcpWindowBoundsATransferByItsLatency) {
  FlowShares shares(1e4);  // TCP-gamma 10,000 B: at most 1e4 / (2 x 0.01) = 5e5 B/s on a 10 ms route
  const FlowShares::Link l = shares.add_link(1e6, 0.01);
  shares.start(0, &l, 1, 1e6, 1);
  EXPECT_DOUBLE_EQ(run_out(shares).at(1), 0.01 + 2.0);
}

TEST(FlowShares, ACapacityChangeUnderATransferChangesItsRateThere) {
  // 8 Mbit/s (1e6 B/s) until 0.5 s, then 4 Mbit/s: 5e5 B sent by 0.5 s, the other 5e5 at 5e5 B/s.
  const BandwidthSchedule sched({{0, 8}, {0.5, 4}});
  FlowShares shares;
  const FlowShares::Link l = shares.add_link(1e6, 0, &sched);
  shares.start(0, &l, 1, 1e6, 1);
  EXPECT_DOUBLE_EQ(run_out(shares).at(1), 1.5);
}

TEST(FlowShares, ACancelledTransferReportsWhatItHadNotSentAndFreesItsShare) {
  FlowShares shares;
  const FlowShares::Link l = shares.add_link(1e6, 0.01);
  const FlowShares::Flow a = shares.start(0, &l, 1, 1e6, 1);
  shares.start(0, &l, 1, 1e6, 2);
  std::vector<std::uint64_t> completed;
  shares.advance(shares.next_event_s(), completed);  // both latencies end at 10 ms: 5e5 B/s each
  shares.next_event_s();
  // At 0.25 s, a has sent 0.24 s x 5e5 B/s = 120,000 B; b, alone from then, sends its other 880,000 B
  // at 1e6 B/s.
  EXPECT_DOUBLE_EQ(shares.cancel(0.25, a), 880000);
  const auto done = run_out(shares);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_NEAR(done.at(2), 0.25 + 0.88, 1e-12);
  EXPECT_EQ(shares.running(), 0u);
}

TEST(FlowShares, ALinkTwiceInARouteCarriesTheTransferTwice) {
  FlowShares shares;
  // Device to device through the access point (2e6 B/s): it crosses it on the way up and down, so
  // it gets half of it. 1e6 B at 1e6 B/s, after the two crossings' latency (2 x 1 ms) and the
  // device links' (2 x 4 ms).
  const FlowShares::Link up = shares.add_link(1e9, 0.004), ap = shares.add_link(2e6, 0.001), down = shares.add_link(1e9, 0.004);
  const FlowShares::Link r[] = {up, ap, ap, down};
  shares.start(0, r, 4, 1e6, 1);
  EXPECT_NEAR(run_out(shares).at(1), 0.01 + 1.0, 1e-12);
}

// Five transfers between three devices, two pairs of them both ways: links d6 (4e6 B/s, 3 ms each
// way), d4 (10e6, 5 ms), d2 (11e6, 10 ms). SimGrid's solver, on such a set, gave d4's downlink 13.2e6
// B/s for its 9.8e6 (the conformance search below found it; Link::get_load, SimGrid 4.0). Here, once
// every latency has passed (15 ms), weighted max-min by hand (weight 1 / route latency):
//   d6 down holds B (d2->d6, 13 ms) and C (d4->d6, 8 ms), the lowest level: B = 4e6 x 8/21, C = 4e6 x 13/21;
//   d6 up holds A (d6->d4) alone: A = 4e6;
//   d4 down then has 10e6 - 4e6 left for E (d2->d4): E = 6e6 (d2 up would allow 11e6 - B);
//   d4 up has 10e6 - C for D (d4->d2).
TEST(FlowShares, TransfersBothWaysBetweenDevicesStayWithinEachLinksCapacity) {
  FlowShares shares;
  const FlowShares::Link d6u = shares.add_link(4e6, 0.003), d6d = shares.add_link(4e6, 0.003), d4u = shares.add_link(10e6, 0.005),
                         d4d = shares.add_link(10e6, 0.005), d2u = shares.add_link(11e6, 0.010), d2d = shares.add_link(11e6, 0.010);
  const FlowShares::Link ra[] = {d6u, d4d}, rb[] = {d2u, d6d}, rc[] = {d4u, d6d}, rd[] = {d4u, d2d}, re[] = {d2u, d4d};
  const FlowShares::Flow a = shares.start(0, ra, 2, 1e9, 1), b = shares.start(0, rb, 2, 1e9, 2), c = shares.start(0, rc, 2, 1e9, 3),
                         d = shares.start(0, rd, 2, 1e9, 4), e = shares.start(0, re, 2, 1e9, 5);
  std::vector<std::uint64_t> completed;
  while (shares.next_event_s() <= 0.0151) shares.advance(shares.next_event_s(), completed);
  ASSERT_TRUE(completed.empty());
  EXPECT_NEAR(shares.rate(a), 4e6, 1e-6);
  EXPECT_NEAR(shares.rate(b), 4e6 * 8 / 21, 1e-6);
  EXPECT_NEAR(shares.rate(c), 4e6 * 13 / 21, 1e-6);
  EXPECT_NEAR(shares.rate(d), 10e6 - 4e6 * 13 / 21, 1e-6);
  EXPECT_NEAR(shares.rate(e), 6e6, 1e-6);
}

// ---- against SimGrid ----

namespace {

namespace sg4 = simgrid::s4u;

struct Transfer {
  sim::Endpoint from, to;
  double start_s = 0;
  std::uint64_t bytes = 0;
  double cancel_s = -1;  // < 0: runs to completion
};

struct Outcome {
  double end_s = -1;  // completion, or cancellation
  double left = -1;   // bytes not sent when cancelled
};

// A random star platform (`seed`): 1-3 servers, 3-8 devices, each link's bandwidth and latency
// (sometimes none) drawn, with bandwidth steps on the device links if `steps`; the access point in
// the routes or not.
Scenario random_platform(std::uint64_t seed, bool with_steps) {
  RandomStream r(seed, StreamPurpose::test, 0);
  Scenario s;
  const int servers = 1 + static_cast<int>(r.next_unit() * 3), devices = 3 + static_cast<int>(r.next_unit() * 6);
  // A link of lowest + [0, span) Mbit/s, one time in five without latency, else [0, max_latency_ms).
  auto draw = [&r](LinkSpec& l, double lowest, double span, double max_latency_ms) {
    l.bandwidth_mbps = lowest + r.next_unit() * span;
    l.latency_ms = r.next_unit() < 0.2 ? 0 : r.next_unit() * max_latency_ms;
  };
  for (int j = 0; j < servers; ++j) {
    s.servers.emplace_back();
    s.servers.back().id = "s" + std::to_string(j);
    draw(s.servers.back().link, 5, 200, 5);
  }
  for (int i = 0; i < devices; ++i) {
    DeviceSpec d;
    d.id = "d" + std::to_string(i);
    draw(d.link, 2, 100, 10);
    s.devices.push_back(d);
    const int steps = with_steps ? static_cast<int>(r.next_unit() * 3) : 0;
    for (int k = 0; k < steps; ++k) {
      EventSpec e;
      e.at_s = 0.01 + r.next_unit() * 0.6;
      e.what = event::Bandwidth{d.id, 1 + r.next_unit() * 120};
      s.events.push_back(e);
    }
  }
  std::sort(s.events.begin(), s.events.end(), [](const EventSpec& a, const EventSpec& b) { return a.at_s < b.at_s; });
  const bool ap_binds = r.next_unit() < 0.5;
  s.access_point.bandwidth_mbps = ap_binds ? 10 + r.next_unit() * 150 : 1e6;
  s.access_point.latency_ms = ap_binds && r.next_unit() < 0.5 ? r.next_unit() * 2 : 0;
  return s;
}

// Random transfers (40-80; 0 B to 1 MB, many starting together, some cancelled): uploads and downloads
// between a device and a server, and if `between_devices` transfers from one device to another.
std::vector<Transfer> random_transfers(std::uint64_t seed, const Scenario& s, bool between_devices) {
  RandomStream r(seed, StreamPurpose::test, 1);
  std::vector<Transfer> t(40 + static_cast<size_t>(r.next_unit() * 40));
  const int servers = static_cast<int>(s.servers.size()), devices = static_cast<int>(s.devices.size());
  for (Transfer& x : t) {
    const double kind = r.next_unit();
    const int d = static_cast<int>(r.next_unit() * devices), j = static_cast<int>(r.next_unit() * servers);
    int d2 = static_cast<int>(r.next_unit() * (devices - 1));
    if (d2 >= d) ++d2;
    if (between_devices && kind < 0.2)
      x.from = {false, d}, x.to = {false, d2};
    else if (kind < 0.6)
      x.from = {false, d}, x.to = {true, j};
    else
      x.from = {true, j}, x.to = {false, d};
    x.start_s = r.next_unit() < 0.3 ? 0.0 : std::round(r.next_unit() * 40) * 0.01;  // many start together
    const double size = r.next_unit();
    x.bytes = size < 0.05 ? 0 : static_cast<std::uint64_t>(std::exp(std::log(100.0) + size * std::log(1e4)));  // 100 B to 1 MB
    if (r.next_unit() < 0.15) x.cancel_s = x.start_s + r.next_unit() * 0.2;
  }
  return t;
}

}  // namespace

class FlowSharesAgainstSimGrid : public ::testing::TestWithParam<int> {};

// The same platform (sim/platform_builder.cpp builds both) and the same transfers through SimGrid's
// CM02 as coinfer configures it and through FlowShares: every completion time within 1e-9 s (SimGrid's
// timing precision), every cancelled transfer's unsent bytes within 1e-3 B.
//
// Two kinds of case are left out of this comparison, because there SimGrid's own solver (3.32 and 4.0,
// lazy or full updates alike) gives a link more than its capacity, which FlowShares does not (the search
// found them; SimGrid's Link::get_load() above the link's bandwidth, or above its schedule's value):
//   - transfers between two devices both ways (FlowShares.TransfersBothWaysBetweenDevicesStayWithin...
//     has such a set): here only uploads and downloads;
//   - bandwidth steps (coinfer's NONLINEAR links): transfers whose latency ends got the link's peak
//     rather than its scheduled value until a later change re-solved it (three transfers at 2.6e6 B/s
//     each on a link scheduled at 3.37e6 B/s). Steps are searched below against the max-min conditions
//     instead, and tests/sim/test_bandwidth.cpp checks steps in mid-transfer through whole runs.
TEST_P(FlowSharesAgainstSimGrid, CompletionTimesAndUnsentBytesAgree) {
  const std::uint64_t seed = static_cast<std::uint64_t>(GetParam());
  const Scenario s = random_platform(seed, false);
  const std::vector<Transfer> transfers = random_transfers(seed, s, false);

  int argc = 1;
  char name[] = "flow_shares";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:critical");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e12");
  sim::Platform platform;
  sim::build_platform(s, platform);
  auto host = [&](sim::Endpoint e) { return sim::host_of(platform, e); };

  std::vector<Outcome> by_simgrid(transfers.size());
  std::vector<sg4::CommPtr> comms(transfers.size());
  for (size_t k = 0; k < transfers.size(); ++k) {
    sg4::Actor::create("t" + std::to_string(k), host(transfers[k].from), [&, k] {
      const Transfer& t = transfers[k];
      sg4::this_actor::sleep_until(t.start_s);
      comms[k] = sg4::Comm::sendto_init(host(t.from), host(t.to));
      comms[k]->set_payload_size(t.bytes);
      comms[k]->start();
      try {
        comms[k]->wait();
        by_simgrid[k].end_s = sg4::Engine::get_clock();
      } catch (const simgrid::Exception&) {  // cancelled: 3.32 reports a network failure, 4.0 a cancellation
      }
    });
    if (transfers[k].cancel_s >= 0)  // another actor cancels it then, if it is still on its way
      sg4::Actor::create("c" + std::to_string(k), host(transfers[k].from), [&, k] {
        sg4::this_actor::sleep_until(transfers[k].cancel_s);
        if (by_simgrid[k].end_s >= 0 || !comms[k]) return;
        by_simgrid[k].left = comms[k]->get_remaining();
        by_simgrid[k].end_s = sg4::Engine::get_clock();
        comms[k]->cancel();
      });
  }
  engine.run();

  // FlowShares on the same platform: the starts and cancellations in time order, each after what is due
  // at its time (a transfer ending then shares nothing with one starting then).
  FlowShares shares;
  const sim::FlowLinks links = sim::add_flow_links(s, platform, shares);
  std::vector<Outcome> ours(transfers.size());
  std::vector<FlowShares::Flow> flow(transfers.size(), -1);
  struct Action {
    double t;
    size_t k;
    bool cancel;
  };
  std::vector<Action> actions;
  for (size_t k = 0; k < transfers.size(); ++k) {
    actions.push_back({transfers[k].start_s, k, false});
    if (transfers[k].cancel_s >= 0) actions.push_back({transfers[k].cancel_s, k, true});
  }
  std::stable_sort(actions.begin(), actions.end(), [](const Action& a, const Action& b) { return a.t < b.t; });
  std::vector<std::uint64_t> completed;
  auto handle_due = [&](double until) {
    for (double t = shares.next_event_s(); t != FlowShares::kNever && t <= until; t = shares.next_event_s()) {
      completed.clear();
      shares.advance(t, completed);
      for (auto tag : completed) ours[tag].end_s = t;
    }
  };
  for (const Action& a : actions) {
    handle_due(a.t);
    if (!a.cancel) {
      FlowShares::Link route[FlowShares::kMaxRoute];
      const int n = sim::flow_route(links, transfers[a.k].from, transfers[a.k].to, route);
      flow[a.k] = shares.start(a.t, route, n, static_cast<double>(transfers[a.k].bytes), a.k);
    } else if (ours[a.k].end_s < 0) {
      ours[a.k].left = shares.cancel(a.t, flow[a.k]);
      ours[a.k].end_s = a.t;
    }
  }
  handle_due(FlowShares::kNever);
  int cancelled = 0;
  for (size_t k = 0; k < transfers.size(); ++k) {
    SCOPED_TRACE("transfer " + std::to_string(k) + " of " + std::to_string(transfers[k].bytes) + " B from " + (transfers[k].from.server ? "s" : "d") +
                 std::to_string(transfers[k].from.index) + " to " + (transfers[k].to.server ? "s" : "d") + std::to_string(transfers[k].to.index) +
                 " at " + std::to_string(transfers[k].start_s));
    EXPECT_NEAR(ours[k].end_s, by_simgrid[k].end_s, 1e-9);
    EXPECT_EQ(ours[k].left < 0, by_simgrid[k].left < 0);
    if (by_simgrid[k].left >= 0) {
      ++cancelled;
      EXPECT_NEAR(ours[k].left, by_simgrid[k].left, 1e-3);
    }
  }
  RecordProperty("cancelled", cancelled);
}

INSTANTIATE_TEST_SUITE_P(Seeds, FlowSharesAgainstSimGrid, ::testing::Range(1, 13));

// Weighted max-min fairness, checked by its definition on random platforms with bandwidth steps and
// every kind of transfer (no SimGrid): after every event, for every link, the rates of the transfers
// sending on it sum to at most its capacity then; and every sending transfer is either at its bound or
// crosses a saturated link on which no transfer has a larger rate x latency (its weighted share is the
// largest there). Those conditions have one solution, the weighted max-min allocation.
// Where coinfer carries the devices' transfers the platform has no device hosts (bench/RESULTS.md "Tenth
// pass": a host cost ~1.2 KB a device): SimGrid knows only the servers, a server's Endpoint still finds
// its host, and asking for a device's host is an internal error that says why, not a null host.
TEST(FlowShares, WithoutDeviceLinksTheDevicesAreNoSimGridHosts) {
  const Scenario s = random_platform(3, false);
  ASSERT_GE(s.devices.size(), 3u);
  int argc = 1;
  char name[] = "flow_shares";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:critical");
  sim::Platform platform;
  sim::build_platform(s, platform, false);
  EXPECT_TRUE(platform.device_hosts.empty());
  EXPECT_EQ(engine.get_host_count(), s.servers.size());  // the servers' hosts only
  EXPECT_EQ(sim::host_of(platform, sim::Endpoint{true, 0}), platform.server_hosts[0]);
  try {
    sim::host_of(platform, sim::Endpoint{false, 1});
    FAIL() << "a device's host was found on a platform without device hosts";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("device 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("devices have no hosts"), std::string::npos) << e.what();
  }
  // The links FlowShares carries them on are built all the same: an up and a down link per device.
  FlowShares shares;
  const sim::FlowLinks links = sim::add_flow_links(s, platform, shares);
  EXPECT_EQ(links.device_up.size(), s.devices.size());
  EXPECT_EQ(links.device_down.size(), s.devices.size());
}

TEST(FlowShares, EveryAllocationIsTheWeightedMaxMinOne) {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Scenario s = random_platform(seed, true);
    std::vector<Transfer> transfers = random_transfers(seed, s, true);
    sim::Platform platform;  // only its schedules: no SimGrid engine here
    for (const auto& d : s.devices) platform.device_bandwidth.emplace_back(d, s.events);
    for (const auto& sv : s.servers) platform.server_bandwidth.push_back(server_link_schedule(sv));
    platform.access_point_in_routes = sim::access_point_can_bind(s.access_point, platform.device_bandwidth);
    FlowShares shares;
    const sim::FlowLinks links = sim::add_flow_links(s, platform, shares);
    // Each link's capacity at t, latency and peak, as add_flow_links made them (in its order).
    struct LinkFacts {
      const BandwidthSchedule* schedule;
      double peak, latency;
    };
    std::vector<LinkFacts> facts;
    if (links.access_point >= 0) facts.push_back({nullptr, s.access_point.bandwidth_mbps * 1e6 / 8, s.access_point.latency_ms * 1e-3});
    for (size_t j = 0; j < s.servers.size(); ++j)
      for (int k = 0; k < 2; ++k)
        facts.push_back({&platform.server_bandwidth[j], platform.server_bandwidth[j].peak_mbps() * 1e6 / 8, s.servers[j].link.latency_ms * 1e-3});
    for (size_t i = 0; i < s.devices.size(); ++i)
      for (int k = 0; k < 2; ++k)
        facts.push_back({&platform.device_bandwidth[i], platform.device_bandwidth[i].peak_mbps() * 1e6 / 8, s.devices[i].link.latency_ms * 1e-3});
    auto capacity = [&](int l, double t) {
      return facts[static_cast<size_t>(l)].schedule ? facts[static_cast<size_t>(l)].schedule->bytes_per_s_at(t) : facts[static_cast<size_t>(l)].peak;
    };

    struct Running {
      FlowShares::Flow flow;
      std::vector<int> route;
      double penalty, bound, sending_from;
    };
    std::map<size_t, Running> running;
    std::vector<std::pair<double, size_t>> starts;
    for (size_t k = 0; k < transfers.size(); ++k) starts.push_back({transfers[k].start_s, k});
    std::stable_sort(starts.begin(), starts.end());
    std::vector<std::uint64_t> completed;
    auto check = [&](double t) {
      std::map<int, double> load;
      std::map<int, double> top;  // per link: the largest rate x penalty among its sending transfers
      for (const auto& [k, r] : running) {
        if (t < r.sending_from) continue;
        for (int l : r.route) {
          load[l] += shares.rate(r.flow);
          top[l] = std::max(top[l], shares.rate(r.flow) * r.penalty);
        }
      }
      for (const auto& [l, sum] : load) EXPECT_LE(sum, capacity(l, t) * (1 + 1e-9)) << "seed " << seed << " link " << l << " at " << t;
      for (const auto& [k, r] : running) {
        if (t < r.sending_from) continue;
        const double rate = shares.rate(r.flow);
        bool bottlenecked = rate >= r.bound * (1 - 1e-9);
        for (int l : r.route) bottlenecked = bottlenecked || (load[l] >= capacity(l, t) * (1 - 1e-9) && rate * r.penalty >= top[l] * (1 - 1e-9));
        EXPECT_TRUE(bottlenecked) << "seed " << seed << " transfer " << k << " at " << t << ": rate " << rate;
        ++checked;
      }
    };
    size_t next = 0;
    for (;;) {
      const double t_event = shares.next_event_s();
      const double t_start = next < starts.size() ? starts[next].first : FlowShares::kNever;
      if (t_event == FlowShares::kNever && t_start == FlowShares::kNever) break;
      if (t_event <= t_start) {
        completed.clear();
        shares.advance(t_event, completed);
        for (auto tag : completed) running.erase(tag);
      } else {
        const size_t k = starts[next++].second;
        FlowShares::Link route[FlowShares::kMaxRoute];
        const int n = sim::flow_route(links, transfers[k].from, transfers[k].to, route);
        Running r{shares.start(t_start, route, n, static_cast<double>(transfers[k].bytes), k), {}, 0, FlowShares::kNever, 0};
        double latency = 0;
        for (int h = 0; h < n; ++h) {
          r.route.push_back(route[h]);
          latency += facts[static_cast<size_t>(route[h])].latency;
          r.bound = std::min(r.bound, facts[static_cast<size_t>(route[h])].peak);
        }
        r.penalty = latency > 0 ? latency : 1.0;
        r.sending_from = t_start + latency;
        running[k] = r;
      }
      const double now = std::min(t_event, t_start);
      shares.next_event_s();  // the shares after what happened now
      check(now);
    }
    EXPECT_TRUE(running.empty());
  }
  EXPECT_GT(checked, 10000);
}
