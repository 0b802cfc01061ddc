#pragma once
// The server's side of a device registration (hw/README.md, "Wire protocol"), without sockets:
// whether a Registration answers the challenge and names a device this server serves, and how many
// handshakes may run at once. Torch-free (coinfer_net).
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "hw/protocol.hpp"

namespace coinfer::hw {

struct RegistrationCheck {
  int device_index = -1;  // in the scenario's devices, when accepted
  std::string refusal;    // why not (sent to the device in an error frame); empty = accepted
  // Refused only because the device is another server's now (scenario index): a redirect to that
  // server answers it (several servers); -1 otherwise.
  int other_server = -1;
  bool accepted() const { return refusal.empty(); }
};

// Accepted when the HMAC of (nonce + device id) under `secret` matches (compared in constant time),
// the device is in the scenario, belongs to server `server_index`, and registered with the type,
// model and dataset the scenario gives it. Which server a device belongs to: `servers_now` (per
// scenario device, the scheme's server now) where given, else the scenario's binding.
RegistrationCheck check_registration(const Registration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                     int server_index, const std::vector<int>* servers_now = nullptr);

// A peer server's registration with the coordinator (several servers): accepted when the HMAC of
// (nonce + "server:" + id) matches and the id names a server of the scenario other than the
// coordinator's own (`coordinator_index`). Returns the peer's server index, or throws nothing and
// sets `refusal`.
struct PeerCheck {
  int server_index = -1;
  std::string refusal;
  bool accepted() const { return refusal.empty(); }
};
// A coordinator that only coordinates (`coordinate_only`) takes the first server as a peer too.
PeerCheck check_peer_registration(const PeerRegistration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                  int coordinator_index, bool coordinate_only = false);
// An edge server registering with its cloud (MsgType::cloud_register): the HMAC is over nonce + "edge:"
// + its id (a device's or a peer's does not pass), and the scenario must name this server
// (`cloud_index`) as that edge's servers[].cloud.
PeerCheck check_cloud_registration(const PeerRegistration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                   int cloud_index);

// At most `limit` handshakes at once: a connection beyond that is refused (the caller answers it
// with an error frame); shutdown waits for the running ones. Thread-safe.
class HandshakeGate {
 public:
  explicit HandshakeGate(int limit) : limit_(limit) {}
  bool try_enter();
  void leave();
  void wait_idle();
  int limit() const { return limit_; }

 private:
  int limit_;
  int running_ = 0;
  std::mutex m_;
  std::condition_variable cv_;
};

// The start decision of the real runtime. The simulator decides at time 0 with every device the
// scenario has from the start; the real server learns of them one registration at a time. So the
// start trigger waits until every device of this server with join_at_s == 0 has registered (their
// registrations are folded into it: no join trigger each), or until the deadline passes with some
// still missing (then it starts without them and they join later). Not thread-safe (the server
// calls it under its lock).
class StartGate {
 public:
  // The devices of `server_index` (-1: of every server, the coordinator of several) present at run time
  // `now_s` (joined by then, not left) make up the start; the gate opens when all have registered or
  // at run time `deadline_s`.
  StartGate(const Scenario& sc, int server_index, double deadline_s, double now_s = 0);
  // A device registered at time now_s: true when it completes the start set (offer start now).
  // Whether it counts as a join: joins_after_start() below.
  bool registered(int device);
  // Time passes without registrations: true once, when the deadline passes before everyone came.
  bool deadline_passed(double now_s);
  bool started() const { return started_; }
  // Whether a registration of `device` should be offered as a join trigger (after the start, or a
  // device the scenario lets join later).
  bool is_join(int device) const;
  const std::vector<int>& missing() const { return waiting_; }

 private:
  std::vector<int> waiting_;  // initial devices not registered yet
  std::vector<int> initial_;
  double deadline_s_;
  bool started_ = false;
};

}  // namespace coinfer::hw
