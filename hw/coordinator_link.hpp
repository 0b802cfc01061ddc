#pragma once
// A peer's link to its coordinator (a room of hw/server_context.hpp; hw/README.md "Several edge
// servers"): what this server's devices do (registrations, leaves, rates) goes to the coordinator as
// triggers in a report every 0.1 s (at once when a trigger waits), with this server's queue and its
// devices' last heartbeats; each scheme the coordinator sends is applied (devices told, helpers and
// batching set). Owns: the triggers not yet reported and each device's rate last reported. Torch-free.
#include <deque>
#include <vector>

#include "hw/server_context.hpp"

namespace coinfer::hw {

class CoordinatorLink {
 public:
  CoordinatorLink(ServerContext& ctx, const ServerRooms& rooms) : ctx_(ctx), rooms_(rooms), reported_mbps_(ctx.sc.devices.size(), 0) {}

  // --- the lock held ---
  // A trigger for the coordinator. At most kMaxEvents wait while it cannot be reached; then the
  // oldest go (said in the log).
  void report(const ServerLock::Held& held, const PeerEvent& e);
  void bandwidth(const ServerLock::Held& held, int device, double mbps);  // reported when it differs from the last

  // --- the lock not held ---
  // Connects to the coordinator, registers, then reports and applies each scheme it sends, until
  // stopped; reconnects after a loss (the coordinator may be killed and started again), announcing
  // its connected devices again. Its own thread.
  void run();

 private:
  PeerReport make_report(const ServerLock::Held& held);  // takes the pending events
  void apply_scheme(const PeerScheme& ps);

  static constexpr size_t kMaxEvents = 10000;
  ServerContext& ctx_;
  const ServerRooms& rooms_;
  // Guarded by the lock.
  std::deque<PeerEvent> events_;
  std::vector<double> reported_mbps_;  // per device: the bandwidth last reported to the coordinator
};

}  // namespace coinfer::hw
