#pragma once
// The real coordinator's adapter of the coordinator loop (sched/coordinator_loop.hpp; the simulator's
// is sim/scheduler_monitor.cpp): what the scenario's first server (or a --coordinate-only process)
// observes — devices registering and disconnecting, the rates their heartbeats report, the start
// gate's deadline, its own restart after a failure, a failed peer server registering again — turned
// into the loop's triggers. The loop holds the rest (the scenario's timed triggers and periods). No
// sockets, threads or clock: EdgeServer calls it with its mutex held and the run time now (seconds,
// 0 = the run's start), and carries out each Decision; the conformance suite (tests/conformance)
// replays the simulator's worlds through it.
// Torch-free.
#include <optional>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/scenario.hpp"
#include "hw/registration.hpp"
#include "sched/coordinator_loop.hpp"

namespace coinfer::hw {

class Coordinator {
 public:
  struct Options {
    int server_index = 0;          // the process's server (the scenario's first, unless coordinate_only)
    bool coordinate_only = false;  // a process that only coordinates: every server's failure is timed
    bool several = false;          // coordinated across processes: the start waits for every server's devices
    bool recovering = false;       // started again after this server's failure (--recovering)
    double now_s = 0;              // run time at construction (a restart's)
    double start_deadline_s = 0;   // run time at which the start goes without devices that have not registered
  };
  // The scenario, scheduler, estimator and schedules must outlive this object.
  Coordinator(const Scenario& sc, Scheduler& scheduler, const Estimator& estimator, const std::vector<BandwidthSchedule>& schedules, Options options);

  // Each returns true when the observation became a pending trigger (wake the scheduler thread).
  // A device registered (not moved here): folded into the start while the start gate waits for it,
  // a join afterwards. With no device to wait for, registered(-1) opens the gate.
  bool registered(int device);
  bool left(int device);                    // disconnected before the end of arrivals
  bool bandwidth(int device, double mbps);  // a heartbeat's rate (the Rescheduler's threshold decides)
  // A server (not this process's) registered as a peer at run time now_s: its recovery when the
  // scenario failed it before now_s and recovers it later (the testbed starts it again at the
  // recovery's time; devices sent to it before it listens would fail). Other registrations: false.
  bool server_registered(int server, double now_s);
  // Time passes (now_s): the start deadline (returns the devices the start goes without, once, when
  // it passes before all registered), then the loop's timed triggers and periods due.
  std::optional<std::vector<int>> advance_to(double now_s);
  // The servers whose recovery is more than `grace_s` past its time without their registration
  // (each returned once): their devices stay where they are until it comes.
  std::vector<int> overdue_recoveries(double now_s, double grace_s);
  // When the next timed trigger or period is due (+infinity: none left).
  double next_event_s() const { return loop_.next_event_s(); }
  bool has_pending() const { return loop_.has_pending(); }
  Decision decide(const SystemState& state) { return loop_.decide(state); }
  const Rescheduler& rescheduler() const { return loop_.rescheduler(); }

 private:
  Trigger start_trigger() const;  // the run's start, or this server's recovery after a restart

  // A recovery of another server waiting for its registration.
  struct AwaitedRecovery {
    int server;
    double failed_at_s;    // its failure before the recovery: a registration before it is the start's
    double recovers_at_s;  // the scenario's time (the simulator's decision time)
    bool overdue_told = false;
  };

  Options opt_;
  CoordinatorLoop loop_;
  StartGate start_gate_;
  std::vector<AwaitedRecovery> awaited_;  // in the scenario's order
};

}  // namespace coinfer::hw
