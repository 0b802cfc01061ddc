#pragma once
// The server-side system monitor (ACE-GNN Sec. III-D/E): decides a scheme at t = 0 and again on each
// trigger (a device joins or leaves; a device's bandwidth moved by more than the threshold since the
// last decision; optionally every period), with the very Scheduler objects the real runtime uses.
// Devices whose strategy changes get a scheduling message over the network; requests already created
// keep their strategy. The decision's wall-clock time is recorded and, if the scenario asks, charged
// to simulated time on the first server (an execution on one of its cores) before the messages leave.
#include <simgrid/s4u.hpp>

#include <deque>
#include <vector>

#include "core/run_results.hpp"
#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

struct SimRun;

class SchedulerMonitor {
 public:
  SchedulerMonitor(SimRun& run, Scheduler& scheduler, const AnalyticEstimator& estimator);
  void start();  // spawns the monitor actor (a daemon) on the first server's host
  // The state the scheduler sees now (also used before the run to validate the scheduler).
  SystemState snapshot(double now) const;
  const std::vector<DecisionRecord>& decisions() const { return decisions_; }

 private:
  struct Trigger {
    double t_s;
    std::string what;  // "start", "join:ID", "leave:ID", "bandwidth:ID" (candidate), "period"
    int device;        // for bandwidth candidates
  };
  void loop();
  void decide(const std::string& why);

  SimRun& run_;
  Scheduler& scheduler_;
  const AnalyticEstimator& estimator_;
  std::vector<Trigger> triggers_;
  std::vector<double> bandwidth_at_decision_;  // per device
  std::deque<Strategy> messages_;              // payloads of scheduling messages (stable addresses)
  std::vector<DecisionRecord> decisions_;
};

}  // namespace coinfer
