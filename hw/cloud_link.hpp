#pragma once
// An edge server's connection to its cloud (servers[].cloud; hw/README.md "Cloud tier"): the real
// runtime's edge -> cloud hand-off of pp(k,m) requests (core/cloud_handoff.hpp). The edge gives it each
// request whose edge part [k,m) has run; a sender thread of its own connects on demand (registering
// with MsgType::cloud_register, HMAC over nonce + "edge:" + the edge's id), sends the task frames one
// after another, and a reader thread hands each result frame from the cloud to `on_result`. Every
// request given to it ends in exactly one `on_result` call: the cloud's answer, or a failure header
// saying why (the cloud could not be reached, the connection was lost while the cloud held it, or
// the link was closed). The WAN is paced here (Shaping: the cloud link's rate over time and the
// path's one-way latency), on loopback and in namespaces alike. Thread-safe; submit() does not block
// on the network. Torch-free.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "hw/connection.hpp"
#include "hw/protocol.hpp"

namespace coinfer::hw {

// An edge's idle connection to its cloud sends a heartbeat every kCloudHeartbeatS; the cloud closes a
// connection silent for kCloudSilenceS.
constexpr double kCloudHeartbeatS = 1.0;
constexpr double kCloudSilenceS = 10.0;

class CloudLink {
 public:
  struct Options {
    std::string edge_id;       // the scenario's id of this edge server
    std::string edge_address;  // where its devices reach it (host:port), told to the cloud
    std::string cloud_id;      // the scenario's id of the cloud
    std::string secret;        // the run's shared secret
    Shaping shaping;           // of the WAN, applied to this end of the connection
    // Where the cloud listens now ("host:port"; empty: not known yet), asked before each connection
    // attempt (a cloud started again may listen elsewhere). Called without the link's lock held.
    std::function<std::string()> address;
    // A request waits at most this long for the cloud to be reachable (a cloud the testbed has just
    // started again listens about a second later), trying every retry_s; then it fails saying why.
    double wait_s = 3;
    double retry_s = 0.1;
  };
  // `on_result(id, header, output)`: the cloud's result for request `id` (as given to submit), or a
  // failure; called on the link's own threads, never under a lock of the link. `log`: one line.
  using ResultFn = std::function<void(std::uint64_t id, const ResultHeader& header, std::string output)>;
  CloudLink(Options o, ResultFn on_result, std::function<void(const std::string&)> log);
  ~CloudLink();  // close()
  CloudLink(const CloudLink&) = delete;
  CloudLink& operator=(const CloudLink&) = delete;

  // Queues request `id` for the cloud. The header's split is m and its origin the device.
  void submit(std::uint64_t id, const TaskHeader& header, std::string state_bytes);
  // Fails every request the cloud holds with `why` and drops the connection (the scenario says the
  // cloud failed; the next submit connects again).
  void drop_connection(const std::string& why);
  // Stops both threads; requests still queued or at the cloud fail ("the edge server is stopping").
  void close();
  // Requests the cloud holds now (sent, no result yet), and queued ones.
  size_t at_cloud() const;
  size_t queued() const;

 private:
  struct Job {
    std::uint64_t id = 0;
    TaskHeader header;
    std::string state;
    double give_up_at = 0;  // steady seconds
  };
  void sender_loop();
  void reader_loop(std::shared_ptr<Connection> c);
  std::shared_ptr<Connection> connect(const std::string& address);  // lock not held
  // Connects (lock held on entry and return, released meanwhile); null when the cloud cannot be
  // reached now (last_error_ says why).
  std::shared_ptr<Connection> connected(std::unique_lock<std::mutex>& lock);
  void fail(std::uint64_t id, const std::string& why);
  void lose(const std::shared_ptr<Connection>& c, const std::string& why);

  Options o_;
  ResultFn on_result_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::map<std::uint64_t, bool> sent_;  // at the cloud now
  std::shared_ptr<Connection> conn_;
  std::thread reader_;
  double retry_at_ = 0;  // steady seconds: no connection attempt before
  std::string last_error_ = "not tried yet";
  bool closing_ = false;
  std::thread sender_;
};

}  // namespace coinfer::hw
