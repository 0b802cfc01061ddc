#pragma once
// The server-side system monitor (ACE-GNN Sec. III-D/E) as a SimGrid actor: the simulator's adapter of
// the engine-free coordinator loop (sched/coordinator_loop.hpp, which the real coordinator's scheduler
// thread drives too). It waits in simulated time for the loop's next event (the scenario's own: start,
// joins, leaves, bandwidth changes, loads, handovers, server failures, periods), carries out the
// servers' failures and recoveries it returns, and carries out each decision: a scheduling message of scheduler.control_bytes
// to every device whose strategy changed (requests already created keep theirs), and the helpers to
// each server. The decision's wall-clock time is recorded and, if the scenario asks, charged to
// simulated time on the first server (an execution on one of its cores) before the messages leave.
#include <simgrid/s4u.hpp>

#include <deque>
#include <functional>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/run_results.hpp"
#include "sched/coordinator_loop.hpp"
#include "sim/messages.hpp"
#include "sim/observation.hpp"

namespace coinfer::sim {

struct MonitorSlice {
  const Scenario* scenario = nullptr;
  simgrid::s4u::Host* host = nullptr;                         // the first server's (its messages come from there)
  std::vector<const ObservedDevice*> devices;                 // per scenario device
  std::vector<ObservedServer*> servers;                       // per scenario server
  std::vector<DeviceInbox*> control;                          // per scenario device: where its scheduling messages go
  std::function<void()> stop_devices;                         // ends every device's activities (a failed scheduler)
  const std::vector<BandwidthSchedule>* bandwidth = nullptr;  // per scenario device (the links' true rates)
  double arrivals_end_s = 0;
  // Servers failing and recovering (core/server_failures.hpp): the monitor carries each out at its time
  // (until hard_end_s, the drain's end) before it offers the trigger, through this (server index, up).
  std::function<void(int, bool)> set_server_up;
  // Why device i cannot run strategy st on server j (empty: it can): a scheme that moves a device to
  // a server whose type has no table for its model is the scheduler's failure, not a silent zero.
  std::function<std::string(int, int, const Strategy&)> move_problem;
  double hard_end_s = 0;
};

class SchedulerMonitor {
 public:
  SchedulerMonitor(MonitorSlice slice, Scheduler& scheduler, const Estimator& estimator);
  void start();  // spawns the monitor actor (a daemon)
  // The state the scheduler sees at `now` (also used before the run to validate the scheduler).
  SystemState snapshot(double now) const;
  const std::vector<DecisionRecord>& decisions() const { return decisions_; }
  // Why the scheduler could not decide (a SchedulerFailure: another process died, hung or answered
  // garbage), "" when it always could. The monitor then ends the simulation (every device stopped,
  // every other actor killed) and run_simulation reports this instead of results.
  const std::string& failure() const { return failure_; }

 private:
  void loop();
  void decide();

  MonitorSlice s_;
  CoordinatorLoop loop_;
  std::deque<ControlMessage> messages_;  // payloads of scheduling messages (stable addresses)
  std::vector<DecisionRecord> decisions_;
  std::string failure_;
};

}  // namespace coinfer::sim
