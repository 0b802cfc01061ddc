#pragma once
// The coordinator's peers (a room of hw/server_context.hpp; hw/README.md "Several edge servers"):
// every other server of the scenario registers here, reports every 0.1 s what it observes (its queue,
// its devices, their triggers) and is sent the whole scheme after each decision. Owns: the live peers
// by server index and those that ended until their reader is joined. Torch-free.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sched/rescheduler.hpp"
#include "hw/server_context.hpp"

namespace coinfer::hw {

class PeerServers {
 public:
  PeerServers(ServerContext& ctx, const ServerRooms& rooms) : ctx_(ctx), rooms_(rooms) {}

  // --- the lock not held ---
  // A peer's registration (read by the handshake; `nonce` its challenge): checked, then its reader
  // thread started (a peer started again replaces the old one), or refused. Blocks on the connection.
  void accept(std::unique_ptr<Connection> conn, const PeerRegistration& r, const std::string& nonce, const std::string& from);

  // --- the lock held ---
  // Sends every peer the whole scheme now (each one's part of it).
  void send_schemes(const ServerLock::Held& held);
  // Adds what each peer last reported of itself and of its devices to a snapshot's observations; a
  // device connected at two servers (draining its old one after a move) is seen at its server now.
  void observe(const ServerLock::Held& held, std::vector<std::optional<DeviceObservation>>& devices,
               std::vector<std::optional<ServerObservation>>& servers) const;
  void reap(const ServerLock::Held&);  // joins the readers that have finished
  // Shutdown: closes every peer connection; then every peer there was, for the readers' joins.
  void close_all(const ServerLock::Held&);
  void join_all();  // the lock not held

 private:
  struct Peer {
    int index = -1;
    std::unique_ptr<Connection> conn;
    std::thread reader;
    bool reader_done = false;  // guarded by the lock
    bool reported = false;     // guarded by the lock: `last` holds a report
    PeerReport last;           // guarded by the lock
  };
  void read_loop(std::shared_ptr<Peer> p);  // its thread
  void on_report(const ServerLock::Held& held, Peer& p, PeerReport rep);
  PeerScheme scheme_for(const ServerLock::Held& held, int j) const;

  ServerContext& ctx_;
  const ServerRooms& rooms_;
  // Guarded by the lock.
  std::map<int, std::shared_ptr<Peer>> peers_;
  std::vector<std::shared_ptr<Peer>> ended_;
};

}  // namespace coinfer::hw
