// Conformance of the two engines' coordinator adapters (sched/coordinator_loop.hpp): a world runs in
// the simulator (sim/scheduler_monitor.cpp, which offers every trigger at the scenario's time); its
// decisions (time, trigger, scheme) are then replayed through the real coordinator's adapter
// (hw/coordinator.hpp, what EdgeServer's scheduler thread drives) with a fake clock and no transport,
// fed what the real coordinator observes itself and when: every initial device registering at the
// start, later ones at their joins, disconnections at their leaves, fixed devices' heartbeats
// reporting their new rates, a failed server registering again at its recovery's time (the testbed
// starts it then; in real time it registers a little later, and the decision follows it). Both must decide at the same times on the same triggers, and (the
// worlds' schedulers depend on no queue) choose the same schemes.
//
// The worlds: joins, a leave, bandwidth changes, a background load and periods on one server; a
// device handed over between two servers' access points (mobility: its rates and the handover timed
// in both engines); a server failing and recovering. The mutation check at the end plants one drift
// on the real side (a disconnection noticed one heartbeat late) and expects the comparison to fail.
//
// What the replay cannot show: the order of triggers of one instant when an observed one (a join, a
// fixed device's rate) and a timed one (a load, a handover) coincide; the worlds avoid such instants
// (in real time they do not happen).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/scenario_binding.hpp"
#include "core/text_util.hpp"
#include "hw/coordinator.hpp"
#include "sched/scheduler_factory.hpp"
#include "tests/conformance/conformance_world.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {

using Timeline = std::vector<std::string>;  // "t trigger -> scheme" per decision

Timeline simulated(const RunResults& r) {
  Timeline out;
  for (const DecisionRecord& d : r.decisions) out.push_back(format_double(d.t_s) + " " + d.trigger + " -> " + d.scheme);
  return out;
}

struct Drift {
  double leave_late_s = 0;    // a disconnection noticed this much later than it happened
  double recover_late_s = 0;  // a failed server registering again this much after its recovery's time
};

// What the real coordinator observes, in time order: (t, kind, device, rate).
struct Observation {
  double t;
  enum Kind { registered, left, bandwidth, server_registered } kind;
  int device;  // the server's index for server_registered
  double mbps;
};

Timeline replayed(const Scenario& sc, const ModelCatalog& models, const LutSet& luts, const Drift& drift = {}) {
  std::vector<BandwidthSchedule> schedules;
  for (const DeviceSpec& d : sc.devices) schedules.emplace_back(d, sc.events);
  std::vector<Observation> obs;
  for (size_t i = 0; i < sc.devices.size(); ++i) {
    const DeviceSpec& d = sc.devices[i];
    const int di = static_cast<int>(i);
    obs.push_back({std::max(0.0, d.join_at_s), Observation::registered, di, 0});
    if (d.leave_at_s < sc.duration_s) obs.push_back({d.leave_at_s + drift.leave_late_s, Observation::left, di, 0});
    if (d.movement.kind == MovementSpec::Kind::none)  // a moving device's rates are timed (the loop's)
      for (const auto& p : schedules[i].points())
        if (p.t_s > 0 && p.t_s < sc.duration_s) obs.push_back({p.t_s, Observation::bandwidth, di, p.mbps});
  }
  for (const EventSpec& e : sc.events)
    if (e.is<event::ServerRecover>() && e.at_s < sc.duration_s)
      obs.push_back({e.at_s + drift.recover_late_s, Observation::server_registered, sc.server_index(e.server()), 0});
  std::stable_sort(obs.begin(), obs.end(), [](const Observation& a, const Observation& b) { return a.t < b.t; });

  auto estimator = make_estimator(sc, luts, scenario_model_specs(sc, models));
  auto scheduler = make_scheduler(sc, *estimator);
  hw::Coordinator::Options o;
  // A scenario whose first server fails runs its scheduler in a process of its own (the testbed's
  // --coordinate-only), as the real runtime does.
  for (const EventSpec& e : sc.events) o.coordinate_only |= e.is<event::ServerFail>() && e.server() == sc.servers.front().id;
  o.several = sc.servers.size() > 1 || o.coordinate_only;
  o.start_deadline_s = 30;
  hw::Coordinator c(sc, *scheduler, *estimator, schedules, o);

  Timeline out;
  size_t k = 0;
  const double never = std::numeric_limits<double>::infinity();
  for (double t; std::isfinite(t = std::min(k < obs.size() ? obs[k].t : never, c.next_event_s()));) {
    for (; k < obs.size() && obs[k].t == t; ++k) {
      const Observation& x = obs[k];
      if (x.kind == Observation::registered)
        c.registered(x.device);
      else if (x.kind == Observation::left)
        c.left(x.device);
      else if (x.kind == Observation::server_registered)
        c.server_registered(x.device, t);
      else
        c.bandwidth(x.device, x.mbps);
    }
    c.advance_to(t);
    if (!c.has_pending()) continue;
    // What the real coordinator observes of each device at t: connected between its join and leave,
    // the rate its heartbeats report (the simulator's observation of the link's true rate).
    std::vector<std::optional<DeviceObservation>> devices(sc.devices.size());
    for (size_t i = 0; i < sc.devices.size(); ++i) {
      DeviceObservation d;
      d.connected = t >= sc.devices[i].join_at_s && t < sc.devices[i].leave_at_s;
      d.generates = sc.devices[i].workload.arrival != WorkloadSpec::Arrival::none;
      d.link_bandwidth_mbps = schedules[i].mbps_at(t);
      devices[i] = d;
    }
    const Decision d = c.decide(c.rescheduler().snapshot(t, devices, {}));
    out.push_back(format_double(d.record.t_s) + " " + d.record.trigger + " -> " + d.record.scheme);
  }
  return out;
}

// One run in the simulator and its replays (a simulation runs once per process: SimGrid 3.32 keeps
// its network model).
struct World : LoadedWorld {
  Timeline sim;
  Timeline real(const Drift& drift = {}) const { return replayed(scenario, models, luts, drift); }
};

World simulate(SimSetup& s, const std::string& yaml_or_path, const std::vector<std::string>& sets = {}) {
  World w{load_world(s, yaml_or_path, sets), {}};
  w.sim = simulated(sim::run_simulation(w.scenario, w.models, w.luts));
  return w;
}

size_t count(const Timeline& t, const std::string& what) {
  return static_cast<size_t>(std::count_if(t.begin(), t.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; }));
}

const std::string kShipped = std::string(COINFER_SOURCE_DIR) + "/scenarios/";

}  // namespace

TEST(CoordinatorConformance, JoinsLeavesRatesLoadsAndPeriodsOnOneServer) {
  SimSetup s;
  write_standard_luts(s);
  const std::string wl = "{arrival: poisson, rate_per_s: 20}";
  const World w =
      simulate(s, scenario(device("a", "offload", wl) + device("b", "pp(3)", wl) + device("c", "local", wl), "{window_ms: 0, max_size: 1}", 3, 0, 1,
                           "scheduler: {name: greedy, period_s: 0.7}\n"
                           "events:\n"
                           "  - {at_s: 0.45, device: b, join: true}\n"
                           "  - {at_s: 0.9, device: a, bandwidth_mbps: 0.5}\n"
                           "  - {at_s: 1.25, device: c, load: 0.6}\n"
                           "  - {at_s: 1.6, device: a, bandwidth_mbps: 8}\n"
                           "  - {at_s: 2.3, device: c, leave: true}\n"));
  // By hand: start at 0, join:b at 0.45, periods at 0.7, 1.4, 2.1 (2.8 too: before the 3 s end),
  // bandwidth:a at 0.9 and 1.6 (each moves > 20 %), load:c at 1.25 (0.6 > 0.1), leave:c at 2.3.
  ASSERT_EQ(w.sim.size(), 10u) << testing::PrintToString(w.sim);
  EXPECT_EQ(w.real(), w.sim);
}

TEST(CoordinatorConformance, AHandoverBetweenTwoServersAccessPoints) {
  SimSetup s;
  const World w = simulate(s, kShipped + "servers/walk_two_servers.yaml", {"scheduler.period_s=2"});
  EXPECT_GT(count(w.sim, "handover:car0"), 0u) << "the world does not hand a device over";
  EXPECT_EQ(w.real(), w.sim);
}

TEST(CoordinatorConformance, AServerFailsAndRecovers) {
  SimSetup s;
  const World w = simulate(s, kShipped + "servers/failover_two_servers.yaml");
  EXPECT_EQ(count(w.sim, "fail:edge1"), 1u);
  EXPECT_EQ(count(w.sim, "recover:edge1"), 1u);
  EXPECT_EQ(w.real(), w.sim);
  // The real coordinator decides the recovery when the server registers again, not at its time:
  // one that registers 0.3 s late moves the decision (same trigger, later time).
  Drift late;
  late.recover_late_s = 0.3;
  const Timeline t = w.real(late);
  ASSERT_EQ(t.size(), w.sim.size());
  EXPECT_NE(t, w.sim);
  EXPECT_EQ(count(t, "recover:edge1"), 1u);
}

// The mutation check: the real side notices a disconnection one heartbeat (0.1 s) late. The
// comparison must fail.
TEST(CoordinatorConformance, APlantedDriftIsCaught) {
  SimSetup s;
  write_standard_luts(s);
  const std::string y = scenario(device("a", "offload") + device("b", "local"), "{window_ms: 0, max_size: 1}", 2, 0, 1,
                                 "scheduler: {name: greedy}\nevents:\n  - {at_s: 1.1, device: b, leave: true}\n");
  const World w = simulate(s, y);
  EXPECT_EQ(w.real(), w.sim);  // without the drift: the same decisions
  Drift drift;
  drift.leave_late_s = 0.1;
  EXPECT_NE(w.real(drift), w.sim);  // with it: a decision at another time
}

// The real coordinator's view of a failed server: its registration at the start is not a recovery;
// one after its failure (4 s here) is, once; one that never comes is reported once, `grace` after the
// recovery's time (6 s), and its recovery is then never timed.
TEST(CoordinatorConformance, ARecoveryIsDecidedWhenTheFailedServerRegistersAgain) {
  SimSetup s;
  const LoadedWorld w = load_world(s, kShipped + "servers/failover_two_servers.yaml");
  const Scenario& sc = w.scenario;
  std::vector<BandwidthSchedule> schedules;
  for (const DeviceSpec& d : sc.devices) schedules.emplace_back(d, sc.events);
  auto estimator = make_estimator(sc, w.luts, scenario_model_specs(sc, w.models));
  auto scheduler = make_scheduler(sc, *estimator);
  hw::Coordinator::Options o;
  o.several = true;
  {
    hw::Coordinator c(sc, *scheduler, *estimator, schedules, o);
    EXPECT_FALSE(c.server_registered(1, 0.5));  // edge1 at the start: no trigger
    EXPECT_FALSE(c.has_pending());
    EXPECT_TRUE(c.server_registered(1, 6.4));  // after its failure at 4 s: its recovery
    EXPECT_TRUE(c.has_pending());
    EXPECT_FALSE(c.server_registered(1, 7));  // again (a reconnection): nothing more
    EXPECT_TRUE(c.overdue_recoveries(30, 10).empty());
  }
  hw::Coordinator never(sc, *scheduler, *estimator, schedules, o);
  never.advance_to(15.9);
  EXPECT_TRUE(never.overdue_recoveries(15.9, 10).empty());
  EXPECT_EQ(never.overdue_recoveries(16.1, 10), std::vector<int>{1});
  EXPECT_TRUE(never.overdue_recoveries(20, 10).empty());  // said once
}
