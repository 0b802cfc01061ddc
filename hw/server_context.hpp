#pragma once
// The real edge server's common ground (hw/edge_server.cpp and its rooms): the scenario and options as
// fixed at construction, the run's clock, the log, the server's one lock, and what every room does
// with a connection (read its frames, refuse it, send a device a result). Torch-free.
//
// The rooms, each a class that owns its state (hw/README.md "The real server's rooms"):
//   ServerWork       (hw/server_work.hpp)       the server loop: batching, workers, helpers' work
//   DeviceSessions   (hw/device_sessions.hpp)   connected devices and the scheme as this server follows it
//   ServerScheduling (hw/server_scheduling.hpp) the coordinator: triggers, snapshot, decisions
//   PeerServers      (hw/peer_servers.hpp)      the coordinator's peers (several servers)
//   CoordinatorLink  (hw/coordinator_link.hpp)  a peer's link to its coordinator
//   CloudTier        (hw/cloud_tier.hpp)        the link to this edge's cloud, and a cloud's edges
//
// Locking rule: one mutex (ServerLock) guards every room's state. It is a type, not a comment: a
// room's state is reachable only through its methods, and each method that reads or writes it takes a
// `const ServerLock::Held&`, which exists only while the lock is held. A method without one takes the
// lock itself when it needs it (and must not be called with it held). What a connection's reader
// thread alone touches (a Handler's connection) and Handler::recent_results (its own mutex) are outside
// the rule.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "core/scenario.hpp"
#include "hw/connection.hpp"
#include "hw/edge_server.hpp"
#include "hw/protocol.hpp"
#include "hw/registration.hpp"
#include "hw/runtime_lock.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::hw {

// One connected device (ACE-GNN Fig. 9's per-device handler), or at a cloud one connected edge server.
struct Handler {
  int index = -1;  // in the scenario's devices (-1: an edge server connected to this server as its cloud)
  std::string id;
  std::unique_ptr<Connection> conn;
  std::thread reader;
  std::atomic<bool> alive{true};
  bool reader_done = false;  // guarded by the server's lock: its reader has finished with this handler
  bool generates = true;
  DeviceStatus status;  // guarded by the server's lock
  // The sizes of the last results sent to it (task id, payload bytes), which it may ask for again
  // after a handover (mobility.mid_transfer: resend): a resend request for anything else, or for more
  // bytes, is a protocol error. At most kRecentResults; guarded by recent_mutex.
  static constexpr size_t kRecentResults = 256;
  std::mutex recent_mutex;
  std::deque<std::pair<std::uint64_t, std::size_t>> recent_results;
};

// The server's one lock (see the rule above).
using ServerLock = RuntimeLock;

struct ServerContext {
  // Fixed at construction (read by any thread without the lock).
  Scenario sc;
  ModelCatalog catalog;
  LutSet luts;
  ServeOptions opt;
  int server_index = 0;
  std::vector<ModelSpec> specs;                                            // per scenario device
  std::vector<BandwidthSchedule> schedules;                                // per scenario device
  std::vector<std::shared_ptr<const BandwidthSchedule>> shared_schedules;  // the same, for the connections' pacing (shape)
  // The scenario's first server is the coordinator: it holds the one Rescheduler, as the simulator's
  // monitor sits on the first server's host. Every other server is its peer (hw/README.md "Several
  // edge servers").
  bool coordinator = true;                  // this process decides (the only server, or the first of several)
  bool several = false;                     // coordinated across processes
  std::string my_address;                   // where devices reach this server (host:port)
  const std::atomic<bool>* stop = nullptr;  // set by EdgeServer::run

  ServerLock lock;

  bool stopping() const { return *stop; }
  double now() const { return unix_now() - opt.epoch_unix_s; }  // run seconds
  // Lines may quote what a peer, an edge or a device sent: control characters and invalid UTF-8 are
  // escaped (core/text_util.hpp printable), and a line is at most 20,000 bytes.
  void log(const std::string& raw) const;
  // Refusals, redirects and bad frames are what a stranger can cause: logged at a bounded rate.
  void log_throttled(const std::string& kind, const std::string& line);
  // Answers with an error frame naming `why`, then closes (blocks at most 2 s).
  void reject(Connection& c, const std::string& peer, const std::string& why);
  // Sends device h the result of `task` (nothing once it is gone; a failure to send is logged), and
  // remembers its size for a resend under mobility.mid_transfer: resend. Blocks on the connection.
  void reply(const std::shared_ptr<Handler>& h, std::uint64_t task, const ResultHeader& header, const std::string& out);
  // Paces device h's downlink as its scenario link (ServeOptions::shape, shape_latency).
  void apply_shaping(Handler& h) const;

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
      while (!stopping() && (!alive || *alive)) {
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

 private:
  LogThrottle stranger_log_{20, 10.0};  // its own mutex
};

class ServerWork;
class DeviceSessions;
class ServerScheduling;
class PeerServers;
class CoordinatorLink;
class CloudTier;

// The rooms, for the rooms to reach each other (set once, before any thread starts; a room this
// process does not have is null: peers and link in a process of one server, link at the coordinator).
struct ServerRooms {
  ServerWork* work = nullptr;
  DeviceSessions* sessions = nullptr;
  ServerScheduling* scheduling = nullptr;
  PeerServers* peers = nullptr;
  CoordinatorLink* link = nullptr;
  CloudTier* cloud = nullptr;
};

}  // namespace coinfer::hw
