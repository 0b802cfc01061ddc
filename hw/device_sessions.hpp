#pragma once
// The real server's devices (a room of hw/server_context.hpp): each registered device's handler and
// its reader thread (tasks, heartbeats, a helper's results, resend requests), the uploads a handover
// caught until their copy comes, the connections that ended until nothing refers to them, and the scheme
// as this server follows it (each device's strategy, helper role and server, and where the servers
// are), which it tells the devices connected here when it changes. Torch-free.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/mobility.hpp"
#include "sched/rescheduler.hpp"
#include "hw/pending_request.hpp"
#include "hw/server_context.hpp"

namespace coinfer::hw {

// The scheme as this server follows it, per scenario device: the coordinator's from its Rescheduler
// after each decision, a peer's from the coordinator's last peer_scheme.
struct FollowedScheme {
  std::vector<std::string> strategy;
  std::vector<bool> helper;
  std::vector<int> server;
  std::map<std::string, std::string> addresses;  // server id -> host:port, as far as known
};

class DeviceSessions {
 public:
  // `start`: the scheme before the first decision (every device's strategy, helper role and server).
  DeviceSessions(ServerContext& ctx, const ServerRooms& rooms, FollowedScheme start);

  // --- the lock not held ---
  // A device's registration (read by the handshake; `nonce` its challenge): checked, then served
  // here (its reader thread started), redirected to its server, or refused. `conn` is taken once
  // the device is accepted (left as is otherwise). Blocks on the connection (a handshake thread).
  void admit(std::unique_ptr<Connection>& conn, const Registration& r, const std::string& nonce, const std::string& peer);

  // --- the lock held ---
  std::shared_ptr<Handler> handler(const ServerLock::Held&, int device) const;  // its live registration, or null
  // What this server observes of each scenario device (connected here or not; its last heartbeat).
  std::vector<std::optional<DeviceObservation>> observe(const ServerLock::Held&) const;
  // The devices connected here now, with their last heartbeats (a peer's report), in index order.
  std::vector<PeerDevice> connected(const ServerLock::Held&) const;
  const FollowedScheme& scheme(const ServerLock::Held&) const { return scheme_; }
  void learn_address(const ServerLock::Held&, const std::string& server_id, const std::string& address) { scheme_.addresses[server_id] = address; }
  std::string address_of(const ServerLock::Held&, const std::string& server_id) const;  // "" not known yet
  // Tells each device connected here that belongs here (by the scheme before) and whose strategy,
  // helper role or server differs now; then takes the new scheme as its own. A device moved to a
  // server whose address is not known yet is told its strategy only, and stays (logged).
  void follow_scheme(const ServerLock::Held& held, const std::vector<std::string>& strategy, const std::vector<bool>& helper,
                     const std::vector<int>& server);
  // Idle helpers serve forwarded work through the drain, as in the simulator, and stay until the
  // server releases them: once the arrivals have ended and none of this server's devices that create
  // inputs is connected. A helper that went on its own at the end of the arrivals could miss a batch
  // forwarded at that moment, which would then fail.
  void release_helpers_when_done(const ServerLock::Held& held);
  // A connection that ended (a device's or an edge's): freed by reap_retired once its reader has
  // ended and no queued or forwarded work refers to it any more (joins a reader that has already
  // finished its work, so it does not wait on the network). Each once. Returns how many were freed.
  void retire(const ServerLock::Held&, const std::shared_ptr<Handler>& h);
  size_t reap_retired(const ServerLock::Held&);
  // Shutdown: closes every device connection; then every handler there was, for their readers' joins.
  void close_all(const ServerLock::Held&);
  std::vector<std::shared_ptr<Handler>> every_handler(const ServerLock::Held&) const;

 private:
  void redirect(Connection& c, const std::string& peer, const std::string& device, int other);
  void read_loop(std::shared_ptr<Handler> h);  // its thread
  void on_task(const std::shared_ptr<Handler>& h, const Frame& f);
  void on_status(const std::shared_ptr<Handler>& h, const DeviceStatus& s);
  void on_resend(const std::shared_ptr<Handler>& h, const Frame& f);
  void ask_resend(Handler& h, std::uint64_t task, size_t bytes, const DeviceHandover& caught);
  void ended(const ServerLock::Held& held, const std::shared_ptr<Handler>& h, const std::string& why);

  ServerContext& ctx_;
  const ServerRooms& rooms_;
  // Per scenario device: its handovers where a transfer caught by one does not wait through it
  // (mobility.mid_transfer resend or fail; empty under wait). Fixed.
  std::vector<std::vector<DeviceHandover>> handovers_;

  // Guarded by the lock.
  std::map<int, std::shared_ptr<Handler>> handlers_;  // by device index (live registrations)
  std::vector<std::shared_ptr<Handler>> retired_;
  // Uploads a handover caught under mid_transfer: resend, kept until their copy arrives (the device
  // sends one on our resend message): by (device index, task id). At most kMaxHeldUploads (then such
  // an upload fails, saying so).
  static constexpr size_t kMaxHeldUploads = 4096;
  std::map<std::pair<int, std::uint64_t>, Pending> held_uploads_;
  FollowedScheme scheme_;
};

}  // namespace coinfer::hw
