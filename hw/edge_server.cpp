#include "hw/edge_server.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/bandwidth_schedule.hpp"
#include "core/cloud_handoff.hpp"
#include "core/server_failures.hpp"
#include "core/execution_time.hpp"
#include "core/helper_forwarding.hpp"
#include "core/server_loop.hpp"
#include "core/device_loop.hpp"
#include "core/server_timing.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/mobility.hpp"
#include "core/model_key.hpp"
#include "core/system_state.hpp"
#include "core/text_util.hpp"
#include "hw/auth.hpp"
#include "hw/batch_runner.hpp"
#include "hw/cloud_link.hpp"
#include "hw/compute_threads.hpp"
#include "hw/connection.hpp"
#include "hw/protocol.hpp"
#include "hw/registration.hpp"
#include "hw/runtime_scope.hpp"
#include "plumbing/atomic_dir.hpp"
#include "core/server_request_rules.hpp"
#include "hw/coordinator.hpp"
#include "hw/pending_request.hpp"
#include "io/decisions_jsonl.hpp"
#include "io/scenario_loader.hpp"
#include "models/model_runner.hpp"
#include "sched/scheduler_factory.hpp"

namespace coinfer::hw {

// One connected device (ACE-GNN Fig. 9's per-device handler).
struct Handler {
  int index = -1;  // in the scenario's devices (-1: an edge server connected to this server as its cloud)
  std::string id;
  std::unique_ptr<Connection> conn;
  std::thread reader;
  std::atomic<bool> alive{true};
  bool reader_done = false;  // under the server's mutex: read_loop has finished with this handler
  bool generates = true;
  DeviceStatus status;
  // The sizes of the last results sent to it (task id, payload bytes), which it may ask for again
  // after a handover (mobility.mid_transfer: resend): a resend request for anything else, or for more
  // bytes, is a protocol error. At most kRecentResults; guarded by recent_mutex.
  static constexpr size_t kRecentResults = 256;
  std::mutex recent_mutex;
  std::deque<std::pair<std::uint64_t, std::size_t>> recent_results;
};

namespace {
using Seconds = std::chrono::duration<double>;

// Requests forwarded to a helper, awaiting its result (keyed by the helper's task id). A batch
// forwarded whole is one task per request; the helper is free again when the last one returns.
struct Forwarded {
  std::shared_ptr<Handler> origin;
  std::uint64_t origin_task = 0;
  double t_received = 0, t_queued = 0;
  std::string helper;
  int helper_index = -1;
  std::uint64_t batch = 0;
};
}  // namespace

struct EdgeServer::Impl : ServerActions<Pending> {
  Scenario sc;
  ModelCatalog catalog;
  LutSet luts;
  ServeOptions opt;
  int server_index = 0;
  std::vector<ModelSpec> specs;                                            // per scenario device
  std::vector<BandwidthSchedule> schedules;                                // per scenario device
  std::vector<std::shared_ptr<const BandwidthSchedule>> shared_schedules;  // the same, for the connections' pacing (shape)
  // Per scenario device: its handovers where a transfer caught by one does not wait through it
  // (mobility.mid_transfer resend or fail; empty under wait).
  std::vector<std::vector<DeviceHandover>> handovers;
  // Uploads a handover caught under mid_transfer: resend, kept until their copy arrives (the device
  // sends one on our resend message): by (device index, task id); under mutex. At most
  // kMaxHeldUploads (then such an upload fails, saying so).
  static constexpr size_t kMaxHeldUploads = 4096;
  std::map<std::pair<int, std::uint64_t>, Pending> held_uploads;
  // This server's LUTs for its devices' models and its helpers' (core/server_timing.hpp, the simulator's
  // too); the testbed runs each device's model as named (binding 0).
  std::unique_ptr<ServerTiming> timing;
  std::unique_ptr<ServerRequestRules> rules;  // on `timing`
  std::unique_ptr<AnalyticEstimator> estimator;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Coordinator> coordination;  // the coordinator's loop, start gate and Rescheduler (under mutex)
  // The start decision waits for the scenario's initial devices (hw/registration.hpp); under mutex.
  static constexpr double kStartDeadlineS = 30;
  static constexpr double kRecoverDeadlineS = 10;  // run seconds after a restart (--recovering)
  std::unique_ptr<Listener> listener;

  // The server loop (core/server_loop.hpp: batching, forwarding, workers), the simulator's too, driven
  // on run time (seconds since the epoch); all under mutex.
  std::mutex mutex;  // guards the members and calls marked "under mutex" / "mutex held"
  std::condition_variable work_cv, sched_cv, timer_cv;
  // Requests the loop dropped past their deadline, with the result that says so; a worker sends them.
  std::deque<std::pair<Pending, ResultHeader>> dropped_replies;
  std::map<int, std::shared_ptr<Handler>> handlers;  // by device index (live registrations)
  // Closed handlers, until their reader has ended and no queued or forwarded work refers to them any
  // more; then reap_retired() joins the reader and frees the connection (its descriptor). Each once.
  std::vector<std::shared_ptr<Handler>> retired;
  BatchGroupIds group_ids;
  std::unique_ptr<ServerLoop<Pending>> loop;
  std::deque<std::pair<std::uint64_t, std::vector<Pending>>> to_run;  // started by the loop, for the worker threads
  std::map<std::uint64_t, Forwarded> forwarded;
  std::map<std::uint64_t, int> forwarded_batch_left;  // batch id -> requests not yet returned
  std::uint64_t next_forward_id = 1, next_forward_batch = 1;
  // Set once the arrivals have ended and no device of this server that creates inputs is still
  // connected: no work can come for helpers any more, so they are told they are not helpers and go.
  bool helpers_released = false;
  std::ofstream decisions;
  const std::atomic<bool>* stop = nullptr;

  // --- several servers (hw/README.md "Several edge servers") -------------------------------------
  // The scenario's first server is the coordinator: it holds the one Rescheduler, as the simulator's
  // monitor sits on the first server's host. Every other server is its peer: it reports its triggers
  // and observations (peer_report) and applies the scheme the coordinator sends (peer_scheme).
  bool coordinator = true;  // this process decides (the only server, or the first of several)
  bool several = false;     // the scenario has more than one server
  std::string my_address;   // where devices reach this server (host:port)
  // The scheme as this server follows it, per scenario device (under mutex): the coordinator's from its
  // Rescheduler after each decision, a peer's from the coordinator's last peer_scheme.
  std::vector<std::string> view_strategy;
  std::vector<bool> view_helper;
  std::vector<int> view_server;
  BatchSpec batching_now;                        // this server's (under mutex)
  std::map<std::string, std::string> addresses;  // server id -> host:port, as far as known (under mutex)
  // Coordinator: its peers, by server index (live), and those that ended, until their reader is joined.
  struct Peer {
    int index = -1;
    std::unique_ptr<Connection> conn;
    std::thread reader;
    bool reader_done = false;  // under mutex
    bool reported = false;     // under mutex: `last` holds a report
    PeerReport last;           // under mutex
  };
  std::map<int, std::shared_ptr<Peer>> peers;
  std::vector<std::shared_ptr<Peer>> ended_peers;
  // Peer: the triggers seen since the last report (under mutex; at most kMaxPeerEvents while the
  // coordinator cannot be reached, the oldest then go, said in the log).
  static constexpr size_t kMaxPeerEvents = 10000;
  std::deque<PeerEvent> peer_events;
  std::vector<double> reported_mbps;  // per device: the bandwidth last reported to the coordinator
  // Coordinator of several: per device, whether it is present (registered somewhere, not left) and
  // what was last observed of it (under mutex).
  std::vector<bool> present;
  std::vector<std::optional<DeviceObservation>> last_seen;

  // --- a cloud tier (hw/README.md "Cloud tier"; core/cloud_handoff.hpp) ---------------------------
  // At an edge with a cloud (servers[].cloud): the cloud's index, the link to it, and the requests
  // handed to it (by the link's id) with what the edge stamped, until their result or failure comes.
  int cloud_index = -1;
  // The scenario's server failures: a part passed on while the scenario says the cloud is down fails
  // at once with the cloud's reason, as in the simulator (the testbed kills it then).
  ServerAvailability availability;
  std::unique_ptr<CloudLink> cloud_link;
  struct AtCloud {
    std::shared_ptr<Handler> origin;
    std::uint64_t task = 0;
    ResultHeader edge;  // the edge's stamps
    double bytes = 0;   // the state sent to the cloud
  };
  std::map<std::uint64_t, AtCloud> at_cloud;  // under mutex
  std::uint64_t next_cloud_id = 1;            // under mutex
  // At a cloud: the edge servers connected to it (handlers with index -1; under mutex).
  std::vector<std::shared_ptr<Handler>> edges;

  double now() const { return unix_now() - opt.epoch_unix_s; }
  // Lines may quote what a peer, an edge or a device sent: control characters and invalid UTF-8 are
  // escaped (core/text_util.hpp printable), and a line is at most 20,000 bytes.
  void log(const std::string& raw) const {
    const std::string line = printable(raw, 20000);
    if (opt.log)
      opt.log(line);
    else
      log::info("serve", line);
  }
  // An observation that became a pending trigger wakes the scheduler thread (mutex held).
  void wake_if(bool pending) {
    if (pending) sched_cv.notify_all();
  }

  // --- connections -------------------------------------------------------------------------------
  void handshake(std::unique_ptr<Connection> conn, HandshakeGate::Ticket ticket) {
    const std::string peer = conn->peer();
    // The gate may close this connection (evicting a silent stranger) until the first frame arrives;
    // never once it is moved on or destroyed: disarmed before `conn` (a parameter) goes.
    struct Disarm {
      HandshakeGate& gate;
      HandshakeGate::Ticket t;
      ~Disarm() { gate.disarm(t); }
    } disarm{handshakes, ticket};
    try {
      const std::string nonce = random_nonce_hex();
      conn->send({MsgType::hello, 0, encode(Hello{kProtocolVersion, nonce})}, Seconds(5));
      auto f = conn->receive(Seconds(kRegistrationDeadlineS));
      handshakes.heard_from(ticket);  // it spoke (or the deadline passed): the gate leaves it alone from here
      handshakes.disarm(ticket);
      if (!f) throw ProtocolError("no registration within " + std::to_string(static_cast<int>(kRegistrationDeadlineS)) + " s");
      if (f->type != MsgType::register_ && f->type != MsgType::peer_register && f->type != MsgType::cloud_register)
        throw ProtocolError(std::string("expected register, got ") + to_string(f->type));
      if (f->type == MsgType::peer_register) return accept_peer(std::move(conn), decode_peer_registration(f->payload), nonce, peer);
      if (f->type == MsgType::cloud_register) return accept_edge(std::move(conn), decode_peer_registration(f->payload), nonce, peer);
      Registration r = decode_registration(f->payload);
      std::vector<int> servers_now;
      {
        std::lock_guard<std::mutex> lock(mutex);
        servers_now = view_server;
      }
      const RegistrationCheck check = check_registration(r, nonce, opt.secret, sc, server_index, &servers_now);
      if (check.other_server >= 0) return redirect(*conn, peer, r.device_id, check.other_server);
      if (opt.coordinate_only && check.accepted())
        return redirect(*conn, peer, r.device_id, server_index);  // served by the first server's own process
      if (!check.accepted()) return reject(*conn, peer, check.refusal);
      const int index = check.device_index;
      auto h = std::make_shared<Handler>();
      h->index = index;
      h->id = r.device_id;
      h->generates = r.generates;
      h->conn = std::move(conn);
      h->conn->set_max_payload(kDefaultMaxPayload);  // authenticated: tasks and results may be large
      apply_shaping(*h);
      Assignment a;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto old = handlers.find(index); old != handlers.end()) {  // a reconnection replaces the old one
          old->second->alive = false;
          old->second->conn->close();
          retire(old->second);
        }
        handlers[index] = h;
        a.strategy = view_strategy[static_cast<size_t>(index)];
        a.helper = view_helper[static_cast<size_t>(index)] && !helpers_released;
        a.epoch_unix_s = opt.epoch_unix_s;  // the device's journal is put on this time zero (hw/clock_sync.hpp)
        h->conn->send({MsgType::registered, 0, encode(a)}, Seconds(5));
        // A device the scheme moved here registers without a trigger (the simulator's move has none).
        if (!r.moved)
          device_registered(index);
        else if (coordinator)
          present[static_cast<size_t>(index)] = true;
      }
      log("device " + h->id + " registered from " + peer + " (" + a.strategy + ")");
      try {
        h->reader = std::thread([this, h] { read_loop(h); });
      } catch (const std::system_error& e) {  // no thread to be had: the device is told, and goes
        log("device " + h->id + " dropped: no thread for its connection (" + e.what() + ")");
        h->conn->close();
        std::lock_guard<std::mutex> lock(mutex);
        h->alive = false;
        h->reader_done = true;
        if (auto it = handlers.find(index); it != handlers.end() && it->second == h) {
          handlers.erase(it);
          if (!*stop && now() < sc.duration_s) device_left(index);
        }
        retire(h);
      }
    } catch (const ProtocolError& e) {
      // hw/README.md: a protocol error is answered with an error frame naming it, then the close.
      if (conn) reject(*conn, peer, std::string("registration protocol error: ") + e.what());
    } catch (const std::exception& e) {
      log("connection from " + peer + " closed during registration: " + e.what());
      if (conn) conn->close();
    }
  }

  // Handshakes run on their own threads, detached; at most 32 at once, each bounded by its
  // registration deadline. When all 32 are taken, the oldest one silent for 1 s is closed to make room
  // (strangers cannot hold the bound: hw/registration.hpp HandshakeGate); only when none is silent is
  // a connection refused with an error frame. Each thread's resources are reclaimed when it ends, and
  // shutdown waits for the running ones.
  static constexpr double kRegistrationDeadlineS = 3;  // hello -> registration: milliseconds for a real device
  HandshakeGate handshakes{32, 1.0};
  void start_handshake(std::unique_ptr<Connection> conn) {
    Connection* raw = conn.get();
    const HandshakeGate::Ticket ticket = handshakes.try_enter(unix_now(), [raw] { raw->close(); });
    if (ticket == 0) {
      const std::string peer = conn->peer();
      reject(*conn, peer, "too many registrations in progress (" + std::to_string(handshakes.limit()) + ", none silent); try again");
      return;
    }
    // The connection is handed over only once the thread exists: if it cannot be created, the
    // connection is still ours to refuse.
    auto slot = std::make_shared<std::unique_ptr<Connection>>(std::move(conn));
    try {
      std::thread([this, slot, ticket]() mutable {
        handshake(std::move(*slot), ticket);
        handshakes.leave(ticket);
      }).detach();
    } catch (const std::system_error& e) {
      handshakes.disarm(ticket);
      handshakes.leave(ticket);
      if (*slot) {
        const std::string peer = (*slot)->peer();
        reject(**slot, peer, std::string("server cannot take a connection now (") + e.what() + "); try again");
      }
    }
  }

  void retire(const std::shared_ptr<Handler>& h) {  // mutex held
    if (std::find(retired.begin(), retired.end(), h) == retired.end()) retired.push_back(h);
  }

  // Frees what retired handlers hold once nothing can use them (mutex held; joins a reader that has
  // already finished its work, so it does not wait on the network). Returns how many were freed.
  size_t reap_retired() {
    size_t freed = 0;
    for (auto it = retired.begin(); it != retired.end();) {
      std::shared_ptr<Handler>& h = *it;
      if (!h->reader_done) {
        ++it;
        continue;
      }
      if (h->reader.joinable()) h->reader.join();  // also releases the thread's own copy of h
      if (h.use_count() == 1) {                    // no queued task, forwarded task or map entry refers to it
        it = retired.erase(it);
        ++freed;
      } else {
        ++it;
      }
    }
    return freed;
  }

  void apply_shaping(Handler& h) const {
    const double latency = one_way_latency_s(sc, h.index);
    if (opt.shape)
      h.conn->set_shaping({0, latency, shared_schedules[static_cast<size_t>(h.index)], opt.epoch_unix_s});
    else if (opt.shape_latency)
      h.conn->set_shaping({0, latency, nullptr, 0});
  }

  // A device registered here (not moved here): the coordinator folds the scenario's initial devices
  // into the start decision and offers later ones as joins; a peer reports it (mutex held).
  void device_registered(int index) {
    if (!coordinator) return report(PeerEvent{PeerEvent::Kind::registered, index, 0});
    present[static_cast<size_t>(index)] = true;
    wake_if(coordination->registered(index));
  }
  // A device of this server went before the end of the arrivals (mutex held).
  void device_left(int index) {
    if (!coordinator) return report(PeerEvent{PeerEvent::Kind::leave, index, 0});
    present[static_cast<size_t>(index)] = false;
    wake_if(coordination->left(index));
  }
  void device_bandwidth(int index, double mbps) {  // mutex held
    if (coordinator) return wake_if(coordination->bandwidth(index, mbps));
    if (reported_mbps[static_cast<size_t>(index)] == mbps) return;  // the coordinator has it
    reported_mbps[static_cast<size_t>(index)] = mbps;
    report(PeerEvent{PeerEvent::Kind::bandwidth, index, mbps});
  }
  void report(const PeerEvent& e) {  // mutex held
    if (peer_events.size() >= kMaxPeerEvents) {
      peer_events.pop_front();
      log("the coordinator has not taken " + std::to_string(kMaxPeerEvents) + " triggers: the oldest is lost");
    }
    peer_events.push_back(e);
  }

  // A registration for a device the scheme has at another server: where to go instead, or (its
  // address not known yet) a close without an answer, so that the device tries again.
  void redirect(Connection& c, const std::string& peer, const std::string& device, int other) {
    std::string address;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto a = addresses.find(sc.servers[static_cast<size_t>(other)].id); a != addresses.end()) address = a->second;
    }
    if (address.empty()) {
      log_throttled("redirect", "device " + device + " from " + peer + " belongs to server " + sc.servers[static_cast<size_t>(other)].id +
                                    ", whose address is not known yet: closed, it will try again");
      c.close();
      return;
    }
    log_throttled("redirect", "device " + device + " from " + peer + " belongs to server " + sc.servers[static_cast<size_t>(other)].id +
                                  ": redirected to " + address);
    try {
      c.send({MsgType::redirect, 0, encode(Redirect{sc.servers[static_cast<size_t>(other)].id, address})}, Seconds(2));
    } catch (const std::exception&) {
    }
    c.close();
  }

  // Refusals, redirects and bad frames are what a stranger can cause: logged at a bounded rate.
  LogThrottle stranger_log{20, 10.0};
  void log_throttled(const std::string& kind, const std::string& line) {
    std::string note;
    if (stranger_log.allow(kind, now(), &note)) log(note + line);
  }
  void reject(Connection& c, const std::string& peer, const std::string& why) {
    log_throttled("refusal", "rejected " + peer + ": " + why);
    try {
      c.send({MsgType::error, 0, encode_error(why)}, Seconds(2));
    } catch (const std::exception&) {
    }
    c.close();
  }

  // The readers' common loop (a device's, a peer's, an edge's at its cloud): frames from `c` while the
  // server runs and `alive` (null: always) holds, until the other side errs or is silent for `silent_s`
  // (0: never). `before()` runs before each receive (at most `poll_s` apart); `on_frame` handles each
  // frame and throws ProtocolError for a bad one (answered with an error frame, then the close) or
  // ConnectionClosed to end. Returns why it ended; `c` is closed then. Blocks (its own thread).
  template <class Before, class OnFrame>
  std::string read_frames(Connection& c, const std::atomic<bool>* alive, double poll_s, double silent_s, Before before, OnFrame on_frame) {
    double last_heard = now();
    std::string why = "closed";
    try {
      while (!*stop && (!alive || *alive)) {
        before();
        auto f = c.receive(Seconds(poll_s));
        if (!f) {
          if (silent_s > 0 && now() - last_heard > silent_s) throw ConnectionClosed("silent for " + std::to_string(silent_s) + " s");
          continue;
        }
        last_heard = now();
        on_frame(*f);
      }
    } catch (const ProtocolError& e) {
      why = std::string("protocol error: ") + e.what();
      try {
        c.send({MsgType::error, 0, encode_error(e.what())}, Seconds(1));
      } catch (const std::exception&) {
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    c.close();
    return why;
  }

  void read_loop(std::shared_ptr<Handler> h) {
    const std::string why = read_frames(
        *h->conn, &h->alive, opt.heartbeat_s, 5 * opt.heartbeat_s, [&] { apply_shaping(*h); },
        [&](const Frame& f) {
          const double t_arrived = unix_now();  // t2 of a clock probe
          switch (f.type) {
            case MsgType::task:
              on_task(h, f);
              break;
            case MsgType::result:
              on_helper_result(h, f);
              break;
            case MsgType::resend:
              on_resend(h, f);
              break;
            case MsgType::heartbeat: {
              const DeviceStatus st = decode_status(f.payload);
              if (st.probe_t1 > 0) {  // answer at once: the time spent here is t3 - t2, excluded from the round trip
                ClockEcho e{st.probe_t1, t_arrived, 0};
                e.t3 = unix_now();
                h->conn->send({MsgType::heartbeat, 0, encode(e)}, Seconds(2));
              }
              on_status(h, st);
              break;
            }
            case MsgType::error:
              throw ConnectionClosed("device said: " + decode_error(f.payload));
            default:
              throw ProtocolError(std::string("unexpected ") + to_string(f.type) + " message from a device");
          }
        });
    std::lock_guard<std::mutex> lock(mutex);
    h->alive = false;
    h->reader_done = true;  // from here on only this lock is held: reap_retired() may join
    retire(h);
    // Work forwarded to this device as a helper is reported failed to its origin.
    for (auto f = forwarded.begin(); f != forwarded.end();)
      if (f->second.helper == h->id) {
        ResultHeader r;
        r.ok = false;
        r.error = "helper " + h->id + " disconnected";
        reply(f->second.origin, f->second.origin_task, r, "");
        forwarded_batch_left.erase(f->second.batch);
        f = forwarded.erase(f);
      } else {
        ++f;
      }
    loop->on_helper_done(h->index, now());
    work_cv.notify_all();
    auto it = handlers.find(h->index);
    if (it != handlers.end() && it->second == h) {
      handlers.erase(it);
      if (!*stop) {
        log("device " + h->id + " disconnected: " + why);
        // After the arrivals end devices finish and go: that is the run ending, not a scenario leave. A
        // device the scheme moved elsewhere closes this connection once its requests here are done.
        if (now() < sc.duration_s && view_server[static_cast<size_t>(h->index)] == server_index) device_left(h->index);
      }
      // Its queued tasks cannot be answered any more: the device records them failed itself.
      for (auto held = held_uploads.begin(); held != held_uploads.end();)
        held = held->second.origin == h ? held_uploads.erase(held) : std::next(held);
      const size_t dropped = loop->remove_if([&h](const Pending& p) { return p.origin == h; });
      if (dropped) log("dropped " + std::to_string(dropped) + " queued tasks of " + h->id);
    }
  }

  void on_task(const std::shared_ptr<Handler>& h, const Frame& f) {
    Pending p;
    p.origin = h;
    p.task = f.task_id;
    p.t_received = unix_now();
    TaskHeader th = unpack_task(f.payload, p.state_bytes);
    const int n = specs[h->index].num_stages();
    if (th.split < 0 || th.split >= n) throw ProtocolError("task split " + std::to_string(th.split) + " out of range 0.." + std::to_string(n - 1));
    if (th.cloud_split != 0 && (th.cloud_split <= th.split || th.cloud_split >= n))
      throw ProtocolError("task cloud_split " + std::to_string(th.cloud_split) + " out of range " + std::to_string(th.split + 1) + ".." +
                          std::to_string(n - 1));
    p.device = h->index;
    p.split = th.split;
    p.cloud_split = cloud_split_at_server(th.cloud_split, cloud_index >= 0);
    p.t_created = th.t_created;
    p.t_queued = unix_now();
    std::lock_guard<std::mutex> lock(mutex);
    // A handover on the device's link while this upload crossed it (core/mobility.hpp "mid_transfer"):
    // from its first byte leaving (the device's stamp) to its last arriving (now).
    const DeviceHandover* caught =
        handover_catching(handovers[static_cast<size_t>(h->index)], th.t_sent - opt.epoch_unix_s, p.t_received - opt.epoch_unix_s);
    const auto key = std::make_pair(h->index, f.task_id);
    if (th.copy) {  // the bytes of an upload caught before, again: go on with the first copy, kept here
      auto held = held_uploads.find(key);
      if (held == held_uploads.end()) throw ProtocolError("a copy of task " + std::to_string(f.task_id) + ", which no handover caught");
      if (caught) {  // caught again: once more
        ask_resend(*h, f.task_id, f.payload.size(), *caught);
        return;
      }
      const double received = p.t_received;
      p = std::move(held->second);
      held_uploads.erase(held);
      p.t_received = p.t_queued = received;
    } else if (caught) {
      if (sc.mobility.mid_transfer == MobilitySpec::MidTransfer::fail || held_uploads.size() >= kMaxHeldUploads) {
        ResultHeader r;
        r.ok = false;
        r.error = sc.mobility.mid_transfer == MobilitySpec::MidTransfer::fail
                      ? handover_failure(*caught, true)
                      : "a handover caught its upload and " + std::to_string(kMaxHeldUploads) + " caught uploads already wait for their copies";
        reply(h, f.task_id, r, "");  // no stamps: it was not received whole before the handover (the simulator's record)
        return;
      }
      held_uploads.emplace(key, std::move(p));
      ask_resend(*h, f.task_id, f.payload.size(), *caught);
      return;
    }
    const DeviceSpec& d = sc.devices[h->index];
    const int group = group_ids.id(edge_batch_group({d.model, d.dataset}, p.split, p.cloud_split));
    const auto added = loop->on_upload(std::move(p), group, now());
    if (added.sealed)
      work_cv.notify_all();
    else if (added.opened)
      timer_cv.notify_all();
  }

  void on_status(const std::shared_ptr<Handler>& h, const DeviceStatus& s) {
    std::lock_guard<std::mutex> lock(mutex);
    h->status = s;
    if (s.bandwidth_mbps > 0) device_bandwidth(h->index, s.bandwidth_mbps);
  }

  void on_helper_result(const std::shared_ptr<Handler>& helper, const Frame& f) {
    Forwarded fw;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = forwarded.find(f.task_id);
      if (it == forwarded.end()) throw ProtocolError("result for a task that was not forwarded to this device");
      fw = it->second;
      forwarded.erase(it);
      auto left = forwarded_batch_left.find(fw.batch);
      if (left != forwarded_batch_left.end() && --left->second == 0) {
        forwarded_batch_left.erase(left);
        loop->on_helper_done(helper->index, now());  // its whole batch is back
        work_cv.notify_all();
      }
    }
    std::string out;
    ResultHeader r = unpack_result(f.payload, out);
    r.helper = helper->id;
    r.t_received = fw.t_received;
    r.t_queued = fw.t_queued;
    reply(fw.origin, fw.origin_task, r, out);
  }

  // Asks device h for the bytes of `task` again once the handover that caught them ends (mutex held).
  void ask_resend(Handler& h, std::uint64_t task, size_t bytes, const DeviceHandover& caught) {
    log("a handover (" + caught.from_access_point + " to " + caught.access_point + " at " + format_double(caught.at_s) + " s) caught the upload of " +
        h.id + " task " + std::to_string(task) + ": asking for it again");
    try {
      h.conn->send({MsgType::resend, task, encode(ResendRequest{static_cast<std::int64_t>(bytes), opt.epoch_unix_s + caught.ends_s})}, Seconds(2));
    } catch (const std::exception& e) {
      log("resend request to " + h.id + " not delivered: " + e.what());
    }
  }

  // Device h asks for the bytes of a result again (a handover caught them): a copy of as many bytes
  // (filler: the device kept the first), not before the handover's end.
  void on_resend(const std::shared_ptr<Handler>& h, const Frame& f) {
    const ResendRequest q = decode_resend(f.payload);
    if (sc.mobility.mid_transfer != MobilitySpec::MidTransfer::resend)
      throw ProtocolError(std::string("resend request under mobility.mid_transfer: ") + mid_transfer_name(sc.mobility.mid_transfer));
    {
      std::lock_guard<std::mutex> lock(h->recent_mutex);
      const auto sent = std::find_if(h->recent_results.begin(), h->recent_results.end(), [&f](const auto& r) { return r.first == f.task_id; });
      if (sent == h->recent_results.end() || static_cast<std::size_t>(q.bytes) > sent->second)
        throw ProtocolError("resend request for task " + std::to_string(f.task_id) + " (" + std::to_string(q.bytes) +
                            " bytes): not one of the last results sent to this device, or more bytes than it had");
    }
    // Not before the handover ends; at most one handover later than now (the device's clock may be ahead).
    const double wait_s = std::min(q.not_before_unix_s - unix_now(), sc.mobility.handover_ms * 1e-3);
    if (wait_s > 0) std::this_thread::sleep_for(Seconds(wait_s));
    ResultHeader r;
    r.copy = true;
    r.t_sent = unix_now();
    const size_t head = pack_result(r, "").size();  // the copy's payload is as long as the first's
    const size_t filler = static_cast<size_t>(q.bytes) > head ? static_cast<size_t>(q.bytes) - head : 0;
    reply(h, f.task_id, r, incompressible_filler(filler, f.task_id));
  }

  void reply(const std::shared_ptr<Handler>& h, std::uint64_t task, const ResultHeader& header, const std::string& out) {
    if (!h->alive) return;
    try {
      ResultHeader r = header;
      if (r.t_sent == 0) r.t_sent = unix_now();  // where it starts crossing the device's link (core/mobility.hpp)
      std::string payload = pack_result(r, out);
      if (!r.copy && sc.mobility.mid_transfer == MobilitySpec::MidTransfer::resend) {
        std::lock_guard<std::mutex> lock(h->recent_mutex);
        if (h->recent_results.size() >= Handler::kRecentResults) h->recent_results.pop_front();
        h->recent_results.emplace_back(task, payload.size());
      }
      h->conn->send({MsgType::result, task, std::move(payload)});
    } catch (const std::exception& e) {
      log("result for " + h->id + " task " + std::to_string(task) + " not delivered: " + e.what());
    }
  }

  // --- batching, workers and forwarding ----------------------------------------------------------
  // Seals batches when their window ends (core/batch_queue.hpp), whether or not a worker is free.
  void batch_timer_loop() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!*stop) {
      const double due = loop->next_deadline_s();
      const double wait = std::min(0.1, std::max(0.0, due - now()));
      if (wait > 0) timer_cv.wait_for(lock, Seconds(wait));
      loop->on_timer(now());
      work_cv.notify_all();
      release_helpers_when_done();
    }
  }

  // Idle helpers serve forwarded work through the drain, as in the simulator, and stay until the
  // server releases them: once the arrivals have ended and none of this server's devices that create
  // inputs is connected (mutex held). A helper that went on its own at the end of the arrivals could
  // miss a batch forwarded at that moment, which would then fail.
  void release_helpers_when_done() {
    if (helpers_released || now() < sc.duration_s) return;
    for (const auto& kv : handlers)
      if (kv.second->alive && sc.devices[kv.first].workload.arrival != WorkloadSpec::Arrival::none) return;
    helpers_released = true;
    const std::vector<int> helpers = loop->helpers().helpers();
    loop->set_helpers({}, now());
    for (const auto& kv : handlers) {
      if (!view_helper[static_cast<size_t>(kv.first)]) continue;
      try {
        Assignment a;
        a.strategy = view_strategy[static_cast<size_t>(kv.first)];
        kv.second->conn->send({MsgType::scheduling, 0, encode(a)}, Seconds(2));
      } catch (const std::exception& e) {
        log("releasing helper " + kv.second->id + " failed: " + e.what());
      }
    }
    if (!helpers.empty()) log("arrivals ended and every device that creates inputs has gone: helpers released");
  }

  // --- the server loop's actions (core/server_loop.hpp), mutex held -------------------------------------
  // What the loop asks about requests: the server's rules (core/server_request_rules.hpp, the
  // simulator's too) on each request's facts.
  int priority(const Pending& p) const override { return rules->priority(facts(p)); }
  double drop_after_s(const Pending& p) const override { return rules->drop_after_s(facts(p)); }
  double seconds_alone(const Pending& p) const override { return rules->seconds_alone(facts(p)); }
  int batch_limit(const Pending& p) const override { return rules->batch_limit(facts(p)); }
  double expected_seconds(const std::vector<Pending>& batch) const override {
    return rules->expected_seconds(facts(batch.front()), static_cast<int>(batch.size()));
  }
  void drop(Pending p, double now_s) override {
    ResultHeader r;
    r.ok = false;
    r.dropped = true;
    r.error = rules->drop_reason(facts(p), now_s);
    r.t_received = p.t_received;
    r.t_queued = p.t_queued;
    dropped_replies.emplace_back(std::move(p), r);  // sent by a worker thread, outside the lock
  }
  ServerRequestFacts facts(const Pending& p) const { return request_facts(p, opt.epoch_unix_s); }

  // What this engine observes for a helper's time: the batch's input bytes as received, the helper's
  // bandwidth as it last reported it (the scenario's schedule before its first report).
  double helper_seconds(int helper, const std::vector<Pending>& batch) const override {
    double bytes = 0;
    for (const auto& p : batch) bytes += static_cast<double>(p.state_bytes.size());
    double mbps = schedules[helper].mbps_at(now());
    if (auto h = handlers.find(helper); h != handlers.end() && h->second->status.bandwidth_mbps > 0) mbps = h->second->status.bandwidth_mbps;
    return rules->helper_seconds(helper, facts(batch.front()), static_cast<int>(batch.size()), bytes, mbps_to_bytes_per_s(mbps));
  }

  bool helper_available(int helper) const override {
    auto it = handlers.find(helper);
    return it != handlers.end() && it->second->alive && !it->second->status.busy;
  }

  void start_batch(std::uint64_t token, std::vector<Pending> batch) override {
    to_run.emplace_back(token, std::move(batch));
    work_cv.notify_all();
  }

  // The batch goes whole to the helper: one task per request, each naming the batch and its size, so
  // that the helper runs them as one batch (the simulator's rule); the helper is free again when the
  // last result returns. A send that fails is reported to its origin, and the helper's connection is closed:
  // its reader then fails what it still holds and frees it (the loop is not re-entered from here).
  void forward(int helper_index, std::vector<Pending> batch) override {
    const std::shared_ptr<Handler> helper = handlers.at(helper_index);
    const std::uint64_t batch_id = next_forward_batch++;
    forwarded_batch_left[batch_id] = static_cast<int>(batch.size());
    for (Pending& p : batch) {
      const std::uint64_t id = next_forward_id++;
      forwarded[id] = {p.origin, p.task, p.t_received, p.t_queued, helper->id, helper_index, batch_id};
      TaskHeader th{p.split, p.origin->id, unix_now(), batch_id, static_cast<int>(batch.size())};
      try {
        helper->conn->send({MsgType::task, id, pack_task(th, p.state_bytes)});
      } catch (const std::exception& e) {
        forwarded.erase(id);
        ResultHeader r;
        r.ok = false;
        r.error = "forwarding to helper " + helper->id + " failed: " + e.what();
        reply(p.origin, p.task, r, "");
        if (--forwarded_batch_left[batch_id] == 0) forwarded_batch_left.erase(batch_id);
        helper->conn->close();
      }
    }
  }

  // --- worker threads ----------------------------------------------------------------------------
  void worker_loop(int worker) {
    set_compute_threads(opt.threads_per_worker);
    BatchRunner runner;  // a worker's own model copies
    while (!*stop) {
      std::uint64_t token = 0;
      std::vector<Pending> batch;
      std::deque<std::pair<Pending, ResultHeader>> drops;
      {
        std::unique_lock<std::mutex> lock(mutex);
        drops.swap(dropped_replies);
      }
      for (auto& [p, r] : drops) reply(p.origin, p.task, r, "");
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (to_run.empty()) {
          work_cv.wait_for(lock, Seconds(0.1));
          continue;
        }
        token = to_run.front().first;
        batch = std::move(to_run.front().second);
        to_run.pop_front();
      }
      run_batch(batch, runner);
      std::lock_guard<std::mutex> lock(mutex);
      loop->on_batch_done(token, now());
      work_cv.notify_all();
    }
  }

  void run_batch(std::vector<Pending>& batch, BatchRunner& runner) {
    const ModelSpec& spec = specs[static_cast<size_t>(batch.front().device)];
    ResultHeader r;
    r.batch_size = static_cast<int>(batch.size());
    r.t_batch_start = unix_now();
    std::vector<std::string> outputs(batch.size());
    std::string error;
    try {
      std::vector<const std::string*> states;
      for (auto& p : batch) states.push_back(&p.state_bytes);
      outputs = runner.run(spec, states, facts(batch.front()).end);  // where this server's part ends
    } catch (const std::exception& e) {
      error = e.what();
      log("batch of " + std::to_string(batch.size()) + " for " + spec.name + "/" + spec.dataset.name + " failed: " + error);
    }
    r.t_batch_end = unix_now();
    for (size_t i = 0; i < batch.size(); ++i) {
      ResultHeader ri = r;
      ri.t_received = batch[i].t_received;
      ri.t_queued = batch[i].t_queued;
      ri.ok = error.empty();
      ri.error = error;
      if (ri.ok && passes_to_cloud(batch[i].cloud_split, batch[i].at_cloud))
        pass_to_cloud(batch[i], ri, std::move(outputs[i]));
      else
        reply(batch[i].origin, batch[i].task, ri, outputs[i]);
    }
  }

  // --- a cloud tier (hw/README.md "Cloud tier"; the simulator's ServerActors::pass_to_cloud) ---------
  // Request p's edge part [k,m) ended (stamped in `edge`): its state at m goes to the cloud, which from
  // then on holds it. A cloud the scenario says is down now fails it at once with the cloud's reason.
  void pass_to_cloud(const Pending& p, const ResultHeader& edge, std::string state) {
    const double t = now();
    if (availability.any() && !availability.up_at(cloud_index, t + 0.25)) {
      ResultHeader r = edge;
      r.ok = false;
      r.error = server_down_reason(sc.servers[static_cast<size_t>(cloud_index)].id, availability.failed_at(cloud_index, t + 0.25));
      return reply(p.origin, p.task, r, "");
    }
    TaskHeader th;
    th.split = p.cloud_split;
    th.origin = sc.devices[static_cast<size_t>(p.device)].id;
    th.t_sent = unix_now();
    th.t_created = p.t_created;
    std::uint64_t id = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      id = next_cloud_id++;
      at_cloud[id] = AtCloud{p.origin, p.task, edge, static_cast<double>(state.size())};
    }
    cloud_link->submit(id, th, std::move(state));
  }

  // The cloud's answer for request `id` (or the link's failure): its device gets one result with the
  // edge's stamps and the cloud's (called on the link's threads, no lock held).
  void on_cloud_result(std::uint64_t id, const ResultHeader& cloud, std::string output) {
    AtCloud a;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = at_cloud.find(id);
      if (it == at_cloud.end()) return;
      a = std::move(it->second);
      at_cloud.erase(it);
    }
    ResultHeader r = a.edge;
    r.ok = cloud.ok;
    r.error = cloud.error;
    // Lost with a cloud the scenario fails now (the testbed killed it): the simulator's reason.
    const double t = now();
    if (!cloud.ok && cloud.t_queued == 0 && availability.any() && !availability.up_at(cloud_index, t + 0.25))
      r.error = server_failed_reason(sc.servers[static_cast<size_t>(cloud_index)].id, availability.failed_at(cloud_index, t + 0.25));
    r.dropped = cloud.dropped;
    const std::string& cloud_id = sc.servers[static_cast<size_t>(cloud_index)].id;
    r.cloud = cloud_id;
    r.cloud_bytes = a.bytes;
    if (cloud.t_queued > 0) {  // it reached the cloud (a failure before has no cloud stamps)
      r.t_cloud_queued = cloud.t_queued;
      if (!cloud.dropped) {
        r.t_cloud_batch_start = cloud.t_batch_start;
        r.t_cloud_batch_end = cloud.t_batch_end;
        r.cloud_batch_size = cloud.batch_size;
      }
    }
    r.t_sent = 0;
    reply(a.origin, a.task, r, output);
  }

  // At a cloud: an edge server whose servers[].cloud is this one registers (MsgType::cloud_register);
  // acknowledged with a heartbeat, then its task frames are cloud parts.
  void accept_edge(std::unique_ptr<Connection> conn, const PeerRegistration& r, const std::string& nonce, const std::string& from) {
    const PeerCheck check = check_cloud_registration(r, nonce, opt.secret, sc, server_index);
    if (!check.accepted()) return reject(*conn, from, check.refusal);
    auto h = std::make_shared<Handler>();
    h->index = -1;
    h->id = r.server_id;
    h->generates = false;
    h->conn = std::move(conn);
    h->conn->set_max_payload(kDefaultMaxPayload);
    h->conn->set_shaping(wan_shaping(check.server_index));
    h->conn->send({MsgType::heartbeat, 0, ""}, Seconds(5));
    log("edge server " + h->id + " connected from " + from + " (this server is its cloud)");
    std::lock_guard<std::mutex> lock(mutex);
    // One connection per edge (200 connections of one edge id were all kept): a new
    // one replaces the older, whose reader ends and drops what it queued.
    for (const auto& old : edges)
      if (old->id == h->id) {
        old->alive = false;
        old->conn->close();
        log("edge server " + h->id + ": its older connection closed (replaced by the new one)");
      }
    edges.push_back(h);
    h->reader = std::thread([this, h] { edge_read_loop(h); });
  }

  // The path between edge server `edge` and this server's cloud (or this cloud): the cloud's link,
  // paced in the middleware at its rate over time, and the one-way latency of both server links.
  Shaping wan_shaping(int edge) const {
    const int cloud = cloud_index >= 0 ? cloud_index : server_index;
    const ServerSpec& c = sc.servers[static_cast<size_t>(cloud)];
    Shaping s;
    s.latency_s = (c.link.latency_ms + sc.servers[static_cast<size_t>(edge)].link.latency_ms) * 1e-3;
    s.schedule = std::make_shared<const BandwidthSchedule>(server_link_schedule(c));
    s.epoch_unix_s = opt.epoch_unix_s;
    return s;
  }

  void edge_read_loop(std::shared_ptr<Handler> h) {
    const std::string why = read_frames(
        *h->conn, &h->alive, 0.5, kCloudSilenceS, [] {},
        [&](const Frame& f) {
          if (f.type == MsgType::heartbeat) return;
          if (f.type == MsgType::error) throw ConnectionClosed("edge server said: " + decode_error(f.payload));
          if (f.type != MsgType::task) throw ProtocolError(std::string("unexpected ") + to_string(f.type) + " message from an edge server");
          on_cloud_task(h, f);
        });
    std::lock_guard<std::mutex> lock(mutex);
    h->alive = false;
    h->reader_done = true;
    edges.erase(std::remove(edges.begin(), edges.end(), h), edges.end());
    retire(h);
    if (!*stop) log("edge server " + h->id + " disconnected: " + why);
    const size_t dropped = loop->remove_if([&h](const Pending& p) { return p.origin == h; });
    if (dropped) log("dropped " + std::to_string(dropped) + " queued cloud parts of " + h->id);
  }

  // A cloud part: stages [m,n) of device `origin`'s request, batched with any [m,n) of that model.
  void on_cloud_task(const std::shared_ptr<Handler>& h, const Frame& f) {
    Pending p;
    p.origin = h;
    p.task = f.task_id;
    p.at_cloud = true;
    p.t_received = unix_now();
    const TaskHeader th = unpack_task(f.payload, p.state_bytes);
    p.device = sc.device_index(th.origin);
    if (p.device < 0) throw ProtocolError("cloud part of unknown device '" + th.origin + "'");
    const int n = specs[static_cast<size_t>(p.device)].num_stages();
    if (th.split < 1 || th.split >= n)
      throw ProtocolError("cloud part split " + std::to_string(th.split) + " out of range 1.." + std::to_string(n - 1));
    p.split = th.split;
    p.t_created = th.t_created;
    p.t_queued = unix_now();
    const DeviceSpec& d = sc.devices[static_cast<size_t>(p.device)];
    std::lock_guard<std::mutex> lock(mutex);
    const int group = group_ids.id(cloud_batch_group({d.model, d.dataset}, p.split));
    const auto added = loop->on_upload(std::move(p), group, now());
    if (added.sealed)
      work_cv.notify_all();
    else if (added.opened)
      timer_cv.notify_all();
  }

  // --- scheduling --------------------------------------------------------------------------------
  // What this server observes (its devices' last heartbeats, its own queue); the snapshot itself is
  // the Rescheduler's, the simulator's too (mutex held).
  SystemState snapshot() {
    std::vector<std::optional<DeviceObservation>> devices(sc.devices.size());
    for (size_t i = 0; i < sc.devices.size(); ++i) {
      auto it = handlers.find(static_cast<int>(i));
      DeviceObservation o;
      o.connected = it != handlers.end() && it->second->alive;
      if (o.connected) {
        const DeviceStatus& s = it->second->status;
        o.link_bandwidth_mbps = s.bandwidth_mbps;
        o.queue_length = s.queue_length;
        o.unfinished = s.unfinished;
        o.busy = s.busy;
        o.completed = s.completed;
        o.latency_sum_s = s.latency_sum_s;
        o.generates = it->second->generates;
      }
      devices[i] = o;
    }
    std::vector<std::optional<ServerObservation>> servers(sc.servers.size());
    if (!opt.coordinate_only)  // else the first server reports as a peer
      servers[static_cast<size_t>(server_index)] =
          ServerObservation{loop->queued(), loop->busy_workers(), 0};  // no cloud: refused (hw/runtime_scope.hpp)
    // Several servers: what each peer last reported (every 0.1 s) of itself and of its devices; a
    // device connected at two servers (draining its old one after a move) is seen at its server now.
    for (const auto& [j, p] : peers) {
      if (!p->reported) continue;
      servers[static_cast<size_t>(j)] = ServerObservation{p->last.queue_length, p->last.busy_workers, 0};
      for (const PeerDevice& d : p->last.devices) {
        DeviceObservation& o = *devices[static_cast<size_t>(d.device)];
        if (o.connected && view_server[static_cast<size_t>(d.device)] != j) continue;
        o.connected = true;
        o.link_bandwidth_mbps = d.status.bandwidth_mbps;
        o.queue_length = d.status.queue_length;
        o.unfinished = d.status.unfinished;
        o.busy = d.status.busy;
        o.completed = d.status.completed;
        o.latency_sum_s = d.status.latency_sum_s;
        o.generates = d.generates;
      }
    }
    // Several servers: a device is present from its registration until it leaves (a leave trigger), as
    // in the simulator, whether or not a connection to it exists at this moment (its server may have
    // just been killed, and its devices are finding their new one): one not observed now is taken as
    // last seen.
    if (several)
      for (size_t i = 0; i < devices.size(); ++i) {
        if (devices[i]->connected) {
          last_seen[i] = devices[i];
        } else if (present[i]) {
          if (last_seen[i]) devices[i] = last_seen[i];
          devices[i]->connected = true;
          if (!last_seen[i]) devices[i]->generates = sc.devices[i].workload.arrival != WorkloadSpec::Arrival::none;
        }
      }
    // A moving device's rate is its schedule's now (its positions: what the simulator observes, and
    // what its next heartbeat will report), not its last heartbeat's.
    for (size_t i = 0; i < devices.size(); ++i)
      if (devices[i] && devices[i]->connected && sc.devices[i].movement.kind != MovementSpec::Kind::none)
        devices[i]->link_bandwidth_mbps = schedules[i].mbps_at(now());
    return coordination->rescheduler().snapshot(now(), devices, servers);
  }

  // --- the scheme as this server follows it (mutex held) -------------------------------------------
  // Tells each device connected here that belongs here (by the scheme before) and whose strategy,
  // helper role or server differs now; then takes the new scheme as its own. A device moved to a
  // server whose address is not known yet is told its strategy only, and stays (logged).
  void follow_scheme(const std::vector<std::string>& strategy, const std::vector<bool>& helper, const std::vector<int>& server) {
    for (size_t i = 0; i < strategy.size(); ++i) {
      const bool changed = strategy[i] != view_strategy[i] || helper[i] != view_helper[i] || server[i] != view_server[i];
      const bool was_mine = view_server[i] == server_index;
      auto it = handlers.find(static_cast<int>(i));
      if (changed && was_mine && it != handlers.end()) {  // the others are told at their registration
        Assignment a;
        a.strategy = strategy[i];
        a.helper = helper[i] && !helpers_released;
        if (server[i] != server_index) {
          const std::string& id = sc.servers[static_cast<size_t>(server[i])].id;
          if (auto addr = addresses.find(id); addr != addresses.end()) {
            a.server = id;
            a.address = addr->second;
          } else {
            log("device " + it->second->id + " moved to server " + id + ", whose address is not known yet: it stays here");
          }
        }
        try {
          it->second->conn->send({MsgType::scheduling, 0, encode(a)}, Seconds(2));
        } catch (const std::exception& e) {
          log("scheduling message to " + it->second->id + " failed: " + e.what());
        }
      }
      view_strategy[i] = strategy[i];
      view_helper[i] = helper[i];
      view_server[i] = server[i];
    }
  }
  void set_batching_now(const BatchSpec& spec) {  // mutex held
    if (spec == batching_now) return;
    batching_now = spec;
    loop->set_batching(spec, now());
    timer_cv.notify_all();  // a window may now end sooner than the timer waits for
    log("batching now " + spec.to_string());
  }

  // --- the coordinator's peers -----------------------------------------------------------------------
  // The whole scheme for peer j (mutex held).
  PeerScheme scheme_for(int j) const {
    PeerScheme ps;
    ps.strategies = view_strategy;
    ps.helpers = view_helper;
    ps.servers = view_server;
    for (size_t i = 0; i < sc.devices.size(); ++i)  // each peer releases its helpers itself at the end of the arrivals
      if (view_helper[i] && sc.devices[i].server == sc.servers[static_cast<size_t>(j)].id) ps.server_helpers.push_back(static_cast<int>(i));
    const BatchSpec& b = coordination->rescheduler().batching(j);
    ps.batch_window_ms = b.window_ms;
    ps.batch_max_size = b.max_size;
    ps.addresses = addresses;
    return ps;
  }
  void send_schemes() {  // mutex held
    for (const auto& [j, p] : peers) {
      try {
        p->conn->send({MsgType::peer_scheme, 0, encode(scheme_for(j))}, Seconds(2));
      } catch (const std::exception& e) {
        log("scheme for server " + sc.servers[static_cast<size_t>(j)].id + " not delivered: " + e.what());
      }
    }
  }

  void accept_peer(std::unique_ptr<Connection> conn, const PeerRegistration& r, const std::string& nonce, const std::string& from) {
    const PeerCheck check = check_peer_registration(r, nonce, opt.secret, sc, server_index, opt.coordinate_only, coordinator);
    if (!check.accepted()) return reject(*conn, from, check.refusal);
    auto p = std::make_shared<Peer>();
    p->index = check.server_index;
    p->conn = std::move(conn);
    p->conn->set_max_payload(kDefaultMaxPayload);  // authenticated: reports may be large
    std::lock_guard<std::mutex> lock(mutex);
    if (auto old = peers.find(p->index); old != peers.end()) {  // started again: the new one replaces it
      old->second->conn->close();
      ended_peers.push_back(old->second);
    }
    peers[p->index] = p;
    addresses[r.server_id] = r.address;
    log("server " + r.server_id + " registered from " + from + " as a peer (devices reach it at " + r.address + ")");
    send_schemes();  // every peer learns the new address
    try {
      p->reader = std::thread([this, p] { peer_read_loop(p); });
    } catch (const std::system_error& e) {
      log("server " + r.server_id + " dropped: no thread for its connection (" + e.what() + ")");
      p->conn->close();
      p->reader_done = true;
      peers.erase(p->index);
      ended_peers.push_back(p);
    }
  }

  void peer_read_loop(std::shared_ptr<Peer> p) {
    const std::string& id = sc.servers[static_cast<size_t>(p->index)].id;
    const std::string why = read_frames(
        *p->conn, nullptr, 0.5, 5 * opt.heartbeat_s, [] {},
        [&](const Frame& f) {
          if (f.type == MsgType::error) throw ConnectionClosed("it said: " + decode_error(f.payload));
          if (f.type != MsgType::peer_report) throw ProtocolError(std::string("unexpected ") + to_string(f.type) + " message from a peer server");
          PeerReport rep = decode_peer_report(f.payload);  // bounds of every field: hw/protocol.cpp
          // A report covers 0.1 s: a few events per device at most (100,000 events made a
          // 1.5 MB trigger string).
          if (rep.events.size() > 4 * sc.devices.size() + 64 || rep.devices.size() > sc.devices.size())
            throw ProtocolError("peer_report: " + std::to_string(rep.events.size()) + " events and " + std::to_string(rep.devices.size()) +
                                " devices for a scenario of " + std::to_string(sc.devices.size()) + " devices");
          for (const PeerEvent& e : rep.events)
            if (e.device < 0 || static_cast<size_t>(e.device) >= sc.devices.size()) throw ProtocolError("peer_report: device index out of range");
          for (const PeerDevice& d : rep.devices)
            if (d.device < 0 || static_cast<size_t>(d.device) >= sc.devices.size()) throw ProtocolError("peer_report: device index out of range");
          std::lock_guard<std::mutex> lock(mutex);
          // A peer speaks for the devices the scheme gives it, no other (a leave of another server's
          // device was a leave trigger). A device the scheme just moved away may still be reported by its
          // old server until that server has the new scheme: ignored, as the simulator's move has no leave.
          const auto others = [&](int device) { return view_server[static_cast<size_t>(device)] != p->index; };
          size_t ignored = 0;
          rep.events.erase(std::remove_if(rep.events.begin(), rep.events.end(), [&](const PeerEvent& e) { return others(e.device) && ++ignored; }),
                           rep.events.end());
          rep.devices.erase(
              std::remove_if(rep.devices.begin(), rep.devices.end(), [&](const PeerDevice& d) { return others(d.device) && ++ignored; }),
              rep.devices.end());
          if (ignored > 0)
            log_throttled("peer-report",
                          "peer server " + id + " reported " + std::to_string(ignored) + " devices that the scheme gives another server: ignored");
          for (const PeerEvent& e : rep.events) {
            if (e.kind == PeerEvent::Kind::registered)
              device_registered(e.device);
            else if (e.kind == PeerEvent::Kind::leave)
              device_left(e.device);
            else
              wake_if(coordination->bandwidth(e.device, e.bandwidth_mbps));
          }
          rep.events.clear();
          p->last = std::move(rep);
          p->reported = true;
        });
    std::lock_guard<std::mutex> lock(mutex);
    p->reader_done = true;
    if (auto it = peers.find(p->index); it != peers.end() && it->second == p) {
      peers.erase(it);
      ended_peers.push_back(p);
      if (!*stop) log("peer server " + id + " disconnected: " + why + " (its devices are not observed until it registers again)");
    }
  }

  void reap_peers() {  // mutex held; joins readers that have finished
    for (auto it = ended_peers.begin(); it != ended_peers.end();) {
      if ((*it)->reader_done) {
        if ((*it)->reader.joinable()) (*it)->reader.join();
        it = ended_peers.erase(it);
      } else {
        ++it;
      }
    }
  }

  // --- a peer's side: reports to the coordinator, applies its scheme --------------------------------
  PeerReport make_report() {  // mutex held; takes the pending events
    PeerReport r;
    r.events.assign(peer_events.begin(), peer_events.end());
    peer_events.clear();
    r.queue_length = loop->queued();
    r.busy_workers = loop->busy_workers();
    for (const auto& [i, h] : handlers)
      if (h->alive) r.devices.push_back(PeerDevice{i, h->generates, h->status});
    return r;
  }

  void apply_scheme(const PeerScheme& ps) {
    const size_t n = sc.devices.size();
    if (ps.strategies.size() != n)
      throw ProtocolError("peer_scheme for " + std::to_string(ps.strategies.size()) + " devices; the scenario has " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      try {
        parse_strategy(ps.strategies[i]);
      } catch (const std::exception& e) {
        throw ProtocolError("peer_scheme: strategy of device " + sc.devices[i].id + ": " + e.what());
      }
      if (ps.servers[i] < 0 || static_cast<size_t>(ps.servers[i]) >= sc.servers.size()) throw ProtocolError("peer_scheme: server index out of range");
    }
    for (int h : ps.server_helpers)
      if (h < 0 || static_cast<size_t>(h) >= n || sc.devices[static_cast<size_t>(h)].server != sc.servers[static_cast<size_t>(server_index)].id)
        throw ProtocolError("peer_scheme: a helper that is not one of this server's devices");
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [id, a] : ps.addresses)
      if (sc.server_index(id) >= 0) addresses[id] = a;
    follow_scheme(ps.strategies, ps.helpers, ps.servers);
    loop->set_helpers(helpers_released ? std::vector<int>{} : ps.server_helpers, now());
    set_batching_now(BatchSpec{ps.batch_window_ms, ps.batch_max_size});
    work_cv.notify_all();
  }

  // Connects to the coordinator, registers, then reports every 0.1 s (at once when a trigger waits)
  // and applies each scheme it sends, until stopped; reconnects after a loss (the coordinator may be
  // killed and started again), announcing its connected devices again.
  void peer_loop() {
    double backoff = 0.2;
    bool first = true;
    while (!*stop) {
      std::unique_ptr<Connection> c;
      try {
        const auto [host, port] = split_address(opt.coordinator, "--coordinator");
        c = Connection::connect(host, port, Seconds(3));
        auto hello = c->receive(Seconds(5));
        if (!hello || hello->type != MsgType::hello) throw ConnectionClosed("no hello from the coordinator");
        const Hello h = decode_hello(hello->payload);
        const std::string& me = sc.servers[static_cast<size_t>(server_index)].id;
        c->send({MsgType::peer_register, 0, encode(PeerRegistration{me, my_address, hmac_sha256_hex(opt.secret, h.nonce + "server:" + me)})},
                Seconds(5));
        c->set_max_payload(kDefaultMaxPayload);
        log("registered with the coordinator at " + opt.coordinator);
        backoff = 0.2;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (!first)  // a coordinator started again knows none of them
            for (const auto& [i, hd] : handlers)
              if (hd->alive) peer_events.push_front(PeerEvent{PeerEvent::Kind::registered, i, 0});
          first = false;
        }
        double next_report = 0;
        while (!*stop) {
          if (auto f = c->receive(Seconds(0.02))) {
            if (f->type == MsgType::peer_scheme)
              apply_scheme(decode_peer_scheme(f->payload));
            else if (f->type == MsgType::error)
              throw ConnectionClosed("the coordinator said: " + decode_error(f->payload));
            else
              throw ProtocolError(std::string("unexpected ") + to_string(f->type) + " message from the coordinator");
          }
          std::optional<PeerReport> rep;
          {
            std::lock_guard<std::mutex> lock(mutex);
            if (!peer_events.empty() || now() >= next_report) rep = make_report();
          }
          if (rep) {
            c->send({MsgType::peer_report, 0, encode(*rep)}, Seconds(2));
            next_report = now() + 0.1;
          }
        }
      } catch (const std::exception& e) {
        if (*stop) break;
        // A bad message from the coordinator is answered with an error frame naming it, then the close
        // (hw/README.md "Wire protocol"), as every other receiver does.
        if (c && dynamic_cast<const ProtocolError*>(&e) != nullptr) {
          try {
            c->send({MsgType::error, 0, encode_error(std::string("protocol error: ") + e.what())}, Seconds(2));
          } catch (const std::exception&) {
          }
        }
        log("coordinator at " + opt.coordinator + ": " + e.what() + "; trying again in " + format_double(backoff) + " s");
        if (c) c->close();
        std::this_thread::sleep_for(Seconds(backoff));
        backoff = std::min(2.0, backoff * 2);
      }
    }
  }

  // Carries out a decision of the shared Rescheduler (sched/rescheduler.hpp): only devices whose
  // strategy or helper role changed get a scheduling message (mutex held).
  void decide() {
    Decision d = coordination->decide(snapshot());
    // The devices connected here are told what changed for them (Decision::changes are exactly the
    // devices whose strategy, helper role or server changed); the peers get the whole scheme and tell
    // theirs.
    std::vector<std::string> strategy(sc.devices.size());
    std::vector<bool> helper(sc.devices.size());
    std::vector<int> server(sc.devices.size());
    for (size_t i = 0; i < sc.devices.size(); ++i) {
      strategy[i] = coordination->rescheduler().strategy(static_cast<int>(i)).to_string();
      helper[i] = coordination->rescheduler().is_helper(static_cast<int>(i));
      server[i] = coordination->rescheduler().server(static_cast<int>(i));
    }
    follow_scheme(strategy, helper, server);
    send_schemes();
    if (!opt.coordinate_only) {  // else the first server's own process takes its part from its scheme
      // Helpers (once told): each serves its own server (Decision::helpers_of, the simulator's rule too,
      // in the same order); none once released at the end of arrivals.
      loop->set_helpers(helpers_released ? std::vector<int>{} : d.helpers_of(sc, sc.servers[server_index].id), now());
      // Batching: this server applies the rule the scheme gave it now (the simulator does the same).
      for (const auto& [j, spec] : d.batching)
        if (j == server_index) set_batching_now(spec);
    }
    work_cv.notify_all();
    log("decision (" + d.record.trigger + "): " + d.record.scheme + ", " + std::to_string(d.record.switched) + " switched");
    if (decisions.is_open()) {
      decisions << decision_to_json(d.record) << "\n";
      decisions.flush();
    }
  }

  void scheduler_loop() {
    std::unique_lock<std::mutex> lock(mutex);
    // The coordinator (hw/coordinator.hpp) holds the start gate and, in its loop, the scenario's timed
    // triggers and periods (the simulator's too); this thread waits for them in real time.
    while (!*stop) {
      if (const auto went_without = coordination->advance_to(now())) {
        std::string missing;
        for (int i : *went_without) missing += " " + sc.devices[static_cast<size_t>(i)].id;
        log("starting without devices that have not registered:" + missing);
      }
      if (!coordination->has_pending()) {
        sched_cv.wait_for(lock, Seconds(std::min(0.2, std::max(0.0, coordination->next_event_s() - now()))));
        continue;
      }
      // Gather triggers arriving together (e.g. several devices registering) into one decision.
      lock.unlock();
      std::this_thread::sleep_for(Seconds(0.02));
      lock.lock();
      try {
        decide();
      } catch (const std::exception& e) {
        // A scheduler that fails keeps the current scheme; the server goes on serving.
        log(std::string("scheduler failed, keeping the current scheme: ") + e.what());
      }
    }
  }
};

EdgeServer::EdgeServer(Scenario scenario, ModelCatalog catalog, LutSet luts, ServeOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.sc = std::move(scenario);
  impl.catalog = std::move(catalog);
  impl.luts = std::move(luts);
  impl.opt = std::move(options);
  if (impl.opt.server_id.empty()) impl.opt.server_id = impl.sc.servers.at(0).id;
  impl.server_index = impl.sc.server_index(impl.opt.server_id);
  if (impl.server_index < 0)
    throw InputError(SourceLocation{impl.sc.file, 0, 0}, "servers", "no server '" + impl.opt.server_id + "' in the scenario");
  // Every LUT entry the scenario's scheduler and strategies may need, checked before serving: a gap
  // found later would stop the scheduler mid-run.
  check_scenario_against(impl.sc, impl.catalog, impl.luts, scheduler_traits(impl.sc.scheduler.name));
  check_real_runtime_scope(impl.sc);
  for (const auto& e : impl.sc.events)  // the testbed kills and restarts this process at their times
    if (e.kind == EventSpec::Kind::server_fail) {
      if (!impl.opt.recovering)
        log::info("server",
                  "server failures: `coinfer testbed` kills this process at each fail event and starts it again (--recovering) "
                  "at the recover; under `coinfer serve` alone nothing fails by itself");
      break;
    }
  for (const auto& e : impl.sc.events)  // the scheduler sees loads at their times; the testbed applies them
    if (e.kind == EventSpec::Kind::load) {
      log::info("server",
                "load events: the scheduler sees each at its time; `coinfer testbed` applies them to the device processes' CPU "
                "caps, real boards under `coinfer serve` must carry that load themselves");
      break;
    }
  ModelSpecs specs;
  const ServerSpec& me = impl.sc.servers[impl.server_index];
  for (const auto& d : impl.sc.devices) {
    impl.specs.push_back(impl.catalog.instantiate(d.model, d.dataset));
    specs.emplace(ModelKey{d.model, d.dataset}, impl.specs.back());
    impl.schedules.emplace_back(d, impl.sc.events);
    impl.shared_schedules.push_back(std::make_shared<const BandwidthSchedule>(impl.schedules.back()));
    impl.handovers.push_back(impl.sc.mobility.mid_transfer == MobilitySpec::MidTransfer::wait ? std::vector<DeviceHandover>{}
                                                                                              : handovers_of(impl.sc, d.id));
    if (d.server == me.id) models::check_realisable(impl.specs.back());  // the server must be able to realise every model it serves
  }
  impl.timing = std::make_unique<ServerTiming>(impl.sc, impl.server_index, impl.luts, ServerTiming::named_models(impl.sc));
  impl.rules = std::make_unique<ServerRequestRules>(impl.sc, impl.server_index, *impl.timing);
  impl.loop = std::make_unique<ServerLoop<Pending>>(me.batch, me.workers, impl);
  impl.estimator = make_estimator(impl.sc, impl.luts, std::move(specs));
  impl.scheduler = make_scheduler(impl.sc, *impl.estimator);
  check_scheduler_size(impl.sc, *impl.estimator, *impl.scheduler, scenario_state(impl.sc, 0));
  // Coordinated across processes: several servers, or one whose scheduler runs in a process of its own
  // (a coordinator with --coordinate-only, the server its peer with --coordinator; the testbed does so
  // when the server fails, so that the failure is decided on as in the simulator).
  impl.several = impl.sc.servers.size() > 1 || impl.opt.coordinate_only || !impl.opt.coordinator.empty();
  if (impl.opt.epoch_unix_s <= 0) impl.opt.epoch_unix_s = unix_now();
  // The coordinator (hw/coordinator.hpp; only the coordinating process uses it, every process keeps its
  // Rescheduler's view). After a failure, the devices present now make up the first decision, given
  // 10 s to come back.
  {
    Coordinator::Options o;
    o.server_index = impl.server_index;
    o.coordinate_only = impl.opt.coordinate_only;
    o.several = impl.several;
    o.recovering = impl.opt.recovering;
    o.now_s = impl.opt.recovering ? std::max(0.0, impl.now()) : 0;
    o.start_deadline_s = impl.opt.recovering ? o.now_s + Impl::kRecoverDeadlineS : Impl::kStartDeadlineS;
    impl.coordination = std::make_unique<Coordinator>(impl.sc, *impl.scheduler, *impl.estimator, impl.schedules, o);
  }
  // The first server coordinates unless told where the coordinator is (a coordinator that only
  // coordinates runs beside it: --coordinate-only).
  impl.coordinator = impl.opt.coordinate_only || (impl.server_index == 0 && impl.opt.coordinator.empty());
  if (impl.opt.coordinate_only && impl.server_index != 0)
    throw InputError(
        SourceLocation{impl.sc.file, 0, 0}, "--coordinate-only",
        "a coordinator that only coordinates stands for the scenario's first server (" + impl.sc.servers.front().id + "): drop --server");
  if (impl.opt.coordinate_only && !impl.opt.coordinator.empty())
    throw InputError(SourceLocation{impl.sc.file, 0, 0}, "--coordinator",
                     "a coordinator (--coordinate-only) has no coordinator of its own: drop one");
  if (!impl.coordinator && impl.opt.coordinator.empty())
    throw InputError(SourceLocation{impl.sc.file, 0, 0}, "--coordinator",
                     "server " + me.id + " is not the scenario's first server: give --coordinator HOST:PORT, where " + impl.sc.servers.front().id +
                         " (which holds the scheduler) listens");
  if (!impl.coordinator) try {
      split_address(impl.opt.coordinator, "--coordinator");
    } catch (const ProtocolError& e) {
      throw InputError(SourceLocation{impl.sc.file, 0, 0}, "--coordinator", e.what());
    }
  for (size_t i = 0; i < impl.sc.devices.size(); ++i) {
    impl.view_strategy.push_back(impl.coordination->rescheduler().strategy(static_cast<int>(i)).to_string());
    impl.view_helper.push_back(impl.coordination->rescheduler().is_helper(static_cast<int>(i)));
    impl.view_server.push_back(impl.coordination->rescheduler().server(static_cast<int>(i)));
  }
  impl.reported_mbps.assign(impl.sc.devices.size(), 0);
  impl.present.assign(impl.sc.devices.size(), false);
  impl.last_seen.assign(impl.sc.devices.size(), std::nullopt);
  impl.batching_now = me.batch;
  impl.availability = ServerAvailability(impl.sc);
  impl.cloud_index = me.cloud.empty() ? -1 : impl.sc.server_index(me.cloud);
  if (!impl.opt.decisions_out.empty()) {
    impl.decisions.open(impl.opt.decisions_out, impl.opt.recovering ? std::ios::app : std::ios::trunc);
    if (!impl.decisions) throw InputError(SourceLocation{impl.opt.decisions_out, 0, 0}, "--decisions-out", "cannot write this file");
  }
  // Until a peer has authenticated, a frame may carry at most a registration (hw/README.md).
  impl.listener = std::make_unique<Listener>(impl.opt.bind, impl.opt.port, kMaxUnauthenticatedPayload);
  impl.my_address = impl.opt.advertise.empty() ? impl.opt.bind + ":" + std::to_string(impl.listener->port()) : impl.opt.advertise;
  if (impl.several) {
    if (impl.opt.advertise.empty() && impl.opt.bind == "0.0.0.0" && !impl.opt.coordinate_only)
      throw InputError(SourceLocation{impl.sc.file, 0, 0}, "--advertise",
                       "the scenario has several servers: give --advertise HOST:PORT, where devices moved to this server reach it "
                       "(it listens on every address)");
    try {
      // A coordinator that only coordinates tells no device where it is (the first server's own process
      // does): its bind address, 0.0.0.0 in a namespace, is no address to check.
      if (!(impl.opt.coordinate_only && impl.opt.advertise.empty())) split_address(impl.my_address, "--advertise");
    } catch (const ProtocolError& e) {
      throw InputError(SourceLocation{impl.sc.file, 0, 0}, "--advertise", e.what());
    }
    if (!impl.opt.coordinate_only) impl.addresses[me.id] = impl.my_address;  // else the first server's own process says
  }
  if (impl.cloud_index >= 0 && !impl.opt.coordinate_only) {
    CloudLink::Options o;
    o.edge_id = me.id;
    o.edge_address = impl.my_address;
    o.cloud_id = me.cloud;
    o.secret = impl.opt.secret;
    o.shaping = impl.wan_shaping(impl.server_index);
    Impl* self = &impl;
    o.address = [self] {  // as the coordinator's last scheme gave it
      std::lock_guard<std::mutex> lock(self->mutex);
      auto a = self->addresses.find(self->sc.servers[static_cast<size_t>(self->cloud_index)].id);
      return a == self->addresses.end() ? std::string() : a->second;
    };
    impl.cloud_link = std::make_unique<CloudLink>(
        o, [self](std::uint64_t id, const ResultHeader& h, std::string out) { self->on_cloud_result(id, h, std::move(out)); },
        [self](const std::string& line) { self->log(line); });
  }
  if (!impl.opt.port_file.empty()) write_text_atomic(impl.opt.port_file, std::to_string(impl.listener->port()) + "\n");
}

EdgeServer::~EdgeServer() = default;

int EdgeServer::port() const { return impl_->listener->port(); }

void EdgeServer::run(const std::atomic<bool>& stop) {
  Impl& impl = *impl_;
  impl.stop = &stop;
  if (impl.opt.coordinate_only)
    impl.log("coordinating the " + std::to_string(impl.sc.servers.size()) + " servers of scenario " + impl.sc.name + " on " + impl.opt.bind + ":" +
             std::to_string(port()) + " (scheduler " + impl.scheduler->name() + ")");
  else
    impl.log("serving " + impl.sc.servers[impl.server_index].id + " of scenario " + impl.sc.name + " on " + impl.opt.bind + ":" +
             std::to_string(port()) + " (" + std::to_string(impl.sc.servers[impl.server_index].workers) + " workers, " +
             (impl.coordinator ? "scheduler " + impl.scheduler->name() : "the scheme of coordinator " + impl.opt.coordinator) +
             (impl.several ? ", devices reach it at " + impl.my_address : std::string()) + ")");
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    if (impl.coordinator) impl.wake_if(impl.coordination->registered(-1));  // no device to wait for
  }
  std::vector<std::thread> threads;
  if (!impl.opt.coordinate_only)
    for (int w = 0; w < impl.sc.servers[impl.server_index].workers; ++w) threads.emplace_back([&impl, w] { impl.worker_loop(w); });
  if (impl.coordinator)
    threads.emplace_back([&impl] { impl.scheduler_loop(); });
  else
    threads.emplace_back([&impl] { impl.peer_loop(); });
  threads.emplace_back([&impl] { impl.batch_timer_loop(); });
  bool starved = false;  // out of descriptors: logged once per episode
  while (!stop) {
    std::unique_ptr<Connection> c;
    try {
      c = impl.listener->accept(Seconds(0.2));
    } catch (const std::exception& e) {
      impl.log(std::string("accepting a connection failed: ") + e.what());
      std::this_thread::sleep_for(Seconds(0.2));
    }
    if (impl.listener->out_of_descriptors() != starved) {
      starved = !starved;
      impl.log(starved ? "out of file descriptors: new connections wait until some close"
                       : "file descriptors available again: accepting connections");
    }
    if (c) impl.start_handshake(std::move(c));
    std::lock_guard<std::mutex> lock(impl.mutex);
    impl.reap_retired();
    impl.reap_peers();
  }
  impl.listener->close();
  impl.handshakes.wait_idle();
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    for (auto& [i, h] : impl.handlers) h->conn->close();
    for (auto& h : impl.edges) h->conn->close();
    for (auto& [j, p] : impl.peers) p->conn->close();
    impl.work_cv.notify_all();
    impl.sched_cv.notify_all();
    impl.timer_cv.notify_all();
  }
  for (auto& t : threads) t.join();
  if (impl.cloud_link) impl.cloud_link->close();  // what the cloud still holds fails ("the edge server is stopping")
  std::set<std::shared_ptr<Handler>> all;
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    for (auto& [i, h] : impl.handlers) all.insert(h);
    for (auto& h : impl.retired) all.insert(h);
    for (auto& h : impl.edges) all.insert(h);
  }
  for (auto& h : all) {
    h->conn->close();
    if (h->reader.joinable()) h->reader.join();
  }
  std::vector<std::shared_ptr<Impl::Peer>> peers;
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    for (auto& [j, p] : impl.peers) peers.push_back(p);
    peers.insert(peers.end(), impl.ended_peers.begin(), impl.ended_peers.end());
  }
  for (auto& p : peers) {
    p->conn->close();
    if (p->reader.joinable()) p->reader.join();
  }
  impl.log("stopped");
}

}  // namespace coinfer::hw
