#pragma once
// The real server's cloud tier (a room of hw/server_context.hpp; hw/README.md "Cloud tier";
// core/cloud_handoff.hpp). At an edge with a cloud (servers[].cloud): the link to it and the requests
// handed to it until their result or failure comes back. At a cloud: the edge servers connected to it,
// whose tasks are cloud parts [m,n). Owns: the link, the requests at the cloud, the connected edges.
// Torch-free.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/server_failures.hpp"
#include "hw/cloud_link.hpp"
#include "hw/pending_request.hpp"
#include "hw/server_context.hpp"

namespace coinfer::hw {

class CloudTier {
 public:
  CloudTier(ServerContext& ctx, const ServerRooms& rooms);
  ~CloudTier();
  bool has_cloud() const { return cloud_index_ >= 0; }  // this edge passes parts on to a cloud (fixed)

  // --- the lock not held ---
  // Connects the link to this edge's cloud (nothing without one; a coordinator that only coordinates
  // has none). Once this server's address is known.
  void start_link();
  // Request p's edge part [k,m) ended (stamped in `edge`): its state at m goes to the cloud, which from
  // then on holds it. A cloud the scenario says is down now fails it at once with the cloud's reason.
  void pass_to_cloud(const Pending& p, const ResultHeader& edge, std::string state);
  // At a cloud: an edge server whose servers[].cloud is this one registers (MsgType::cloud_register);
  // acknowledged with a heartbeat, then its task frames are cloud parts. Blocks on the connection.
  void accept_edge(std::unique_ptr<Connection> conn, const PeerRegistration& r, const std::string& nonce, const std::string& from);
  void close_link();  // at shutdown: what the cloud still holds fails ("the edge server is stopping")

  // --- the lock held ---
  void close_all(const ServerLock::Held&);  // shutdown: every edge's connection
  std::vector<std::shared_ptr<Handler>> edges(const ServerLock::Held&) const { return edges_; }

 private:
  struct AtCloud {
    std::shared_ptr<Handler> origin;
    std::uint64_t task = 0;
    ResultHeader edge;  // the edge's stamps
    double bytes = 0;   // the state sent to the cloud
  };
  void on_cloud_result(std::uint64_t id, const ResultHeader& cloud, std::string output);  // the link's threads
  Shaping wan_shaping(int edge) const;
  void edge_read_loop(std::shared_ptr<Handler> h);  // its thread
  void on_cloud_task(const std::shared_ptr<Handler>& h, const Frame& f);

  ServerContext& ctx_;
  const ServerRooms& rooms_;
  // Fixed: the cloud's index (-1: none), and the scenario's server failures (a part passed on while the
  // scenario says the cloud is down fails at once with the cloud's reason, as in the simulator; the
  // testbed kills it then).
  int cloud_index_ = -1;
  ServerAvailability availability_;
  std::unique_ptr<CloudLink> link_;  // its own lock

  // Guarded by the lock.
  std::map<std::uint64_t, AtCloud> at_cloud_;
  std::uint64_t next_cloud_id_ = 1;
  std::vector<std::shared_ptr<Handler>> edges_;  // at a cloud: handlers with index -1
};

}  // namespace coinfer::hw
