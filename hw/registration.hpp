#pragma once
// The server's side of a device registration (hw/README.md, "Wire protocol"), without sockets:
// whether a Registration answers the challenge and names a device this server serves, and how many
// handshakes may run at once. Torch-free (coinfer_net).
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
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
RegistrationCheck check_registration(const Registration& r, const std::string& nonce, const std::string& secret, const Scenario& sc, int server_index,
                                     const std::vector<int>* servers_now = nullptr);

// A peer server's registration with the coordinator (several servers): accepted when the HMAC of
// (nonce + "server:" + id) matches and the id names a server of the scenario other than the
// coordinator's own (`coordinator_index`). Returns the peer's server index, or throws nothing and
// sets `refusal`.
struct PeerCheck {
  int server_index = -1;
  std::string refusal;
  bool accepted() const { return refusal.empty(); }
};
// A coordinator that only coordinates (`coordinate_only`) takes the first server as a peer too. A
// process that does not coordinate (`coordinates` false: a peer, the first server's own process
// beside a --coordinate-only coordinator included) takes no peer at all (such a peer
// answered peer_register with a scheme and then redirected devices to the stranger's address).
PeerCheck check_peer_registration(const PeerRegistration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                  int coordinator_index, bool coordinate_only, bool coordinates);
// An edge server registering with its cloud (MsgType::cloud_register): the HMAC is over nonce + "edge:"
// + its id (a device's or a peer's does not pass), and the scenario must name this server
// (`cloud_index`) as that edge's servers[].cloud.
PeerCheck check_cloud_registration(const PeerRegistration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                   int cloud_index);

// At most `limit` handshakes at once, and strangers cannot hold them (32 silent
// connections re-opened every 10 s made every device's registration fail). A handshake enters with
// a way to close its connection; once its first frame arrived (heard_from) it cannot be evicted. When
// the gate is full, the oldest handshake that has been silent for at least `silent_evict_s` is closed
// (its thread then ends and leaves) and the newcomer takes its place; only when none is that silent
// is the newcomer refused (the caller answers it with an error frame). A legitimate peer sends its
// registration within milliseconds of the hello, so the bound is held only by those who talk.
// Shutdown waits for the running ones. Thread-safe; `close` is called under the gate's lock, never
// after disarm() or leave() of that ticket returned.
class HandshakeGate {
 public:
  using Ticket = std::uint64_t;  // 0: not admitted
  explicit HandshakeGate(int limit, double silent_evict_s = 1.0) : limit_(limit), silent_evict_s_(silent_evict_s) {}
  // Admits a handshake that began at `now_s` (any clock, seconds), evicting a silent one if full.
  Ticket try_enter(double now_s, std::function<void()> close);
  void heard_from(Ticket t);  // its first frame arrived: no longer evictable
  void disarm(Ticket t);      // its connection is going away: never close it (idempotent)
  void leave(Ticket t);
  void wait_idle();
  int limit() const { return limit_; }
  long long evicted() const;  // handshakes closed to make room, so far
  long long refused() const;  // newcomers refused, so far

 private:
  struct Entry {
    double since_s = 0;
    bool heard = false, evicted = false;
    std::function<void()> close;
  };
  int limit_;
  double silent_evict_s_;
  Ticket next_ = 1;
  std::map<Ticket, Entry> entries_;
  int counted_ = 0;  // entries not evicted: what the limit bounds
  long long evicted_ = 0, refused_ = 0;
  mutable std::mutex m_;
  std::condition_variable cv_;
};

// A device following redirects (a server redirecting to itself drew 54,566
// registrations in 10 s, and a device still ran 27 s past its run's end). Each redirect since the
// last registration waits longer before it is followed (0, then 0.05 s doubling up to 2 s). A
// redirect to an address already redirected to since then is a loop: the guard says so (the device
// asks the coordinator next, which knows the scheme), and the kMaxLoops-th loop is an error
// (RedirectLoop) naming the addresses. A failed connection starts the chain of addresses again (the
// scheme may be changing: a server down, its devices moved), but not the count of loops. The caller
// also stops at its run's end. Not thread-safe (the device's registration loop owns it).
struct RedirectLoop : std::runtime_error {
  using std::runtime_error::runtime_error;
};
class RedirectGuard {
 public:
  static constexpr int kMaxLoops = 5;
  // A redirect to `address`: the seconds to wait before following it; throws RedirectLoop.
  double on_redirect(const std::string& address);
  bool looped() const { return looped_; }       // the last redirect closed a loop
  void on_registered();                         // a registration succeeded: everything starts again
  void on_unreachable();                        // a connection failed: the chain of addresses starts again
  int redirects() const { return redirects_; }  // since the last registration

 private:
  std::vector<std::string> chain_;
  int redirects_ = 0, loops_ = 0;
  bool looped_ = false;
};

// Log lines that a stranger can cause (refusals, redirects, bad frames) at a bounded rate: at most
// `burst` per `period_s` per kind; the rest are counted, and the first line of a kind after a period
// with suppressed ones says how many were left out. Thread-safe. (A silent connection flood logged
// 505k lines, 43 MB, in 25 s.)
class LogThrottle {
 public:
  explicit LogThrottle(int burst = 20, double period_s = 10.0) : burst_(burst), period_s_(period_s) {}
  // Whether to write a line of `kind` at `now_s`; `note` receives "(N more KIND lines left out in the
  // last P s) " when lines were suppressed before this one, else "".
  bool allow(const std::string& kind, double now_s, std::string* note = nullptr);
  long long suppressed(const std::string& kind) const;  // in total

 private:
  struct Kind {
    double window_start_s = -1e300;
    int in_window = 0;
    long long pending = 0, total = 0;
  };
  int burst_;
  double period_s_;
  std::map<std::string, Kind> kinds_;
  mutable std::mutex m_;
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
