#pragma once
// The real server's scheduling (a room of hw/server_context.hpp): in the coordinating process, the
// coordinator (hw/coordinator.hpp: the coordinator loop's adapter, the start gate, the Rescheduler)
// fed what this process observes, its thread waiting in real time for triggers, and each decision
// carried out (devices told, peers sent the scheme, this server's helpers and batching set, the
// decisions journal written). In a peer, what its devices do goes to the coordinator instead
// (hw/coordinator_link.hpp). Owns: the scheduler and its estimator, the coordinator, which devices are
// present and what was last seen of each, the decisions journal. Torch-free.
#include <condition_variable>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "core/system_state.hpp"
#include "hw/coordinator.hpp"
#include "hw/device_sessions.hpp"
#include "hw/server_context.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer::hw {

class ServerScheduling {
 public:
  // Builds the scheduler (checking its size on the scenario) and the coordinator.
  ServerScheduling(ServerContext& ctx, const ServerRooms& rooms);
  ~ServerScheduling();
  // Opens the decisions journal (ServeOptions::decisions_out; appended to when recovering). Throws
  // InputError when it cannot be written.
  void open_journal();
  // The scheme before the first decision (DeviceSessions' start).
  FollowedScheme initial_scheme() const;
  const Scheduler& scheduler() const { return *scheduler_; }

  // --- the lock held ---
  // What this process's devices do. The coordinator folds the scenario's initial devices into the
  // start decision and offers later ones as joins; a peer reports them to its coordinator.
  void registered(const ServerLock::Held& held, int device);              // registered here (not moved here)
  void present(const ServerLock::Held& held, int device);                 // moved here by the scheme (no trigger)
  void left(const ServerLock::Held& held, int device);                    // went before the end of the arrivals
  void bandwidth(const ServerLock::Held& held, int device, double mbps);  // a heartbeat's rate
  void open_gate(const ServerLock::Held& held);                           // at the run's start: no device to wait for opens the start gate
  void peer_registered(const ServerLock::Held& held, int server);         // a peer server registered (the coordinator: maybe its recovery)
  const Rescheduler& rescheduler(const ServerLock::Held&) const { return coordination_->rescheduler(); }

  // --- the lock not held ---
  void scheduler_loop();  // the coordinator's thread, until stopped
  void wake_all();        // at shutdown

 private:
  void wake_if(bool pending) {  // an observation that became a pending trigger wakes the scheduler thread
    if (pending) sched_cv_.notify_all();
  }
  SystemState snapshot(const ServerLock::Held& held);
  void decide(const ServerLock::Held& held);

  ServerContext& ctx_;
  const ServerRooms& rooms_;
  std::unique_ptr<AnalyticEstimator> estimator_;
  std::unique_ptr<Scheduler> scheduler_;

  // Guarded by the lock.
  std::unique_ptr<Coordinator> coordination_;
  // Coordinator of several: per device, whether it is present (registered somewhere, not left) and
  // what was last observed of it.
  std::vector<bool> present_;
  std::vector<std::optional<DeviceObservation>> last_seen_;
  std::ofstream decisions_;
  std::condition_variable sched_cv_;
};

}  // namespace coinfer::hw
