#pragma once
// The coordinator's timeline, engine-free: which of the scenario's own events each engine offers to
// the Rescheduler and when, periods, and the servers' failures and recoveries carried out at their
// times. The simulator's monitor actor (sim/scheduler_monitor.cpp) and the real coordinator's
// scheduler thread (hw/edge_server.cpp) both drive one CoordinatorLoop and carry out what it returns;
// they differ only in what they observe themselves (SelfObserved) and in how they wait.
//
// Units: seconds of run time (0 = the run's start) in both engines. No call blocks or advances time:
// the engine waits until next_event_s() (simulated or real time) and then calls advance_to.
//
// Ownership: the scenario, scheduler, estimator and bandwidth schedules must outlive the loop; the
// loop owns its Rescheduler.
#include <limits>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/scenario.hpp"
#include "sched/rescheduler.hpp"

namespace coinfer {

// What an engine learns by itself, and so offers as it observes it rather than at the scenario's
// times. The simulator observes nothing by itself (it knows the scenario's future); the real
// coordinator observes the start (its devices registered, or the start deadline passed), joins and
// leaves (registrations, disconnections), the rates of devices that do not move (their heartbeats),
// its own failure and recovery (the process itself is down then; started again, its first decision
// is the recovery), and the other servers' recoveries (a restarted server registers again: until
// then no device can reach it, however late its process was started).
struct SelfObserved {
  bool start = false;
  bool joins_and_leaves = false;
  bool fixed_bandwidth = false;    // bandwidth triggers of devices with no movement (mobility's rates stay timed)
  ServerIndex own_server;          // this server's failure and recovery are not timed (none: every server's are)
  bool server_recoveries = false;  // no server's recovery is timed (each is offered when it is observed)
};

// A server failing (up = false) or coming back, for the engine to carry out.
struct ServerChange {
  ServerIndex server;
  bool up = true;
};

class CoordinatorLoop {
 public:
  // Timed triggers: the scenario's events before `arrivals_end_s` (Rescheduler::scenario_events)
  // less what `self` observes, and periods (every scheduler.period_s until arrivals_end_s). Server
  // changes: every fail and recover event before `server_changes_until_s` (0: none; the real
  // runtime's servers fail as processes, killed by the testbed).
  CoordinatorLoop(const Scenario& scenario, Scheduler& scheduler, const Estimator& estimator, const std::vector<BandwidthSchedule>& bandwidth,
                  double arrivals_end_s, SelfObserved self, double server_changes_until_s);

  // The time of the next timed trigger, period or server change (+infinity when none is left).
  double next_event_s() const;
  // Offers every timed trigger due at or before t_s (in the scenario's order), then the period if
  // one is due (once, however many passed: the next is the first after t_s), and returns the server
  // changes due at or before t_s, for the engine to carry out before it decides.
  std::vector<ServerChange> advance_to(double t_s);
  // Drops what is due at or before t_s without offering it (a server started again after a failure:
  // what came before was its predecessor's).
  void skip_to(double t_s);

  // What the engine observed itself (SelfObserved), offered as it happens; true when it became a
  // pending trigger.
  bool offer(const Trigger& t) { return rescheduler_.offer(t); }
  bool has_pending() const { return rescheduler_.has_pending(); }
  // Decides on the pending triggers (Rescheduler::decide): the engine carries out the Decision (tells
  // Decision::changes, gives each server Decision::helpers_of and its Decision::batching, records).
  Decision decide(const SystemState& state) { return rescheduler_.decide(state); }

  const Rescheduler& rescheduler() const { return rescheduler_; }

 private:
  void rearm_period(double t_s);  // the first period after t_s, if before the end of arrivals

  Rescheduler rescheduler_;
  double arrivals_end_s_ = 0;
  std::vector<std::pair<double, Trigger>> timed_;
  size_t next_timed_ = 0;
  double next_period_ = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, ServerChange>> server_changes_;
  size_t next_change_ = 0;
};

// The timed triggers an engine observing `self` is offered: the scenario's events (periods aside)
// that it does not observe itself, in the scenario's order. Exposed for the conformance suite.
std::vector<std::pair<double, Trigger>> timed_triggers(const Scenario& s, const std::vector<BandwidthSchedule>& bandwidth, double arrivals_end_s,
                                                       const SelfObserved& self);

}  // namespace coinfer
