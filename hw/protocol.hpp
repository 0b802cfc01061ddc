#pragma once
// Payloads of the middleware's messages (hw/README.md, "Wire protocol"). Control messages carry JSON;
// task and result messages carry a JSON header and then raw bytes (a serialised SplitState for tasks,
// the serialised output for results), packed as: u32 little-endian header length, header, bytes.
// Times crossing the wire are Unix seconds (CLOCK_REALTIME): the testbed's processes share one clock;
// real boards need NTP-synchronised clocks for the per-step timestamps (latency is measured on the
// device alone and needs no synchronisation).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/limits.hpp"
#include "hw/frame.hpp"

namespace coinfer::hw {

double unix_now();  // seconds since 1970, CLOCK_REALTIME

struct Hello {
  int protocol = kProtocolVersion;
  std::string nonce;
};

struct Registration {
  std::string device_id, type, model, dataset;
  bool generates = true;  // false: an idle device that only serves as a helper
  std::string hmac;       // HMAC-SHA256(secret, nonce + device_id), hex
  // Registering because the scheme moved it here (a scheduling message naming this server, or a
  // redirect): not a join (optional on the wire).
  bool moved = false;
};

struct Assignment {         // registered and scheduling messages
  std::string strategy;     // Strategy::to_string()
  bool helper = false;      // may be sent pending server work
  double epoch_unix_s = 0;  // registered only: the server's time zero (Unix s, its clock); 0 = not sent
  // scheduling only, several servers: the scheme moved the device to server `server` (scenario id),
  // listening at `address` ("host:port"): its new requests go there, its in-flight ones finish where
  // they are (optional on the wire; "" = its server is unchanged).
  std::string server, address;
};

struct DeviceStatus {         // heartbeat from a device
  double bandwidth_mbps = 0;  // the device's current estimate of its link
  int queue_length = 0, unfinished = 0;
  bool busy = false;
  double probe_t1 = 0;       // the device's clock when it sent this (Unix s); 0 = no clock probe
  long long completed = 0;   // own requests completed since the start (optional on the wire)
  double latency_sum_s = 0;  // the sum of their latencies (s)
};

struct ClockEcho {        // heartbeat from the server answering a clock probe (hw/clock_sync.hpp)
  double t1 = 0;          // the probe's t1, echoed
  double t2 = 0, t3 = 0;  // the server's clock when the probe arrived and when this leaves
};

// Several edge servers (hw/README.md "Several edge servers").
// A peer server's registration with the coordinator (the scenario's first server).
struct PeerRegistration {
  std::string server_id;  // the scenario's id of the registering server
  std::string address;    // "host:port" where its devices reach it
  std::string hmac;       // HMAC-SHA256(secret, nonce + "server:" + server_id), hex
};
// What a peer saw and observes, for the coordinator's scheduler.
struct PeerEvent {
  enum class Kind { registered, leave, bandwidth };
  Kind kind = Kind::registered;
  int device = -1;            // scenario index
  double bandwidth_mbps = 0;  // bandwidth: the device's report
};
struct PeerDevice {  // one of the peer's connected devices, as its last heartbeat said
  int device = -1;   // scenario index
  bool generates = true;
  DeviceStatus status;  // probe_t1 unused
};
struct PeerReport {
  std::vector<PeerEvent> events;  // in the order seen, since the last report
  int queue_length = 0, busy_workers = 0;
  std::vector<PeerDevice> devices;
};
// The scheme now, as the coordinator's last decision left it (the whole of it: a peer that starts
// again catches up from one message).
struct PeerScheme {
  std::vector<std::string> strategies;  // per scenario device, Strategy::to_string()
  std::vector<bool> helpers;            // per scenario device: the scheme names it a helper
  std::vector<int> servers;             // per scenario device: its server (scenario index)
  std::vector<int> server_helpers;      // the helpers this peer forwards to (Decision::helpers_of)
  double batch_window_ms = 0;           // this peer's batching now
  int batch_max_size = 1;
  std::map<std::string, std::string> addresses;  // server id -> "host:port", the servers registered so far
};
struct Redirect {
  std::string server, address;  // where the device registers instead
};

// The largest forwarded batch a helper accepts (core/limits.hpp's largest batch).
constexpr int kMaxForwardedBatch = static_cast<int>(limits::kMaxBatch);

struct TaskHeader {
  int split = 0;       // stages [0, split) are done; the receiver runs [split, n)
  std::string origin;  // device that created the request (tasks sent to helpers)
  double t_sent = 0;   // Unix s, when the sender started sending
  // Server -> helper: the forwarded batch this task belongs to and how many tasks it has; the helper
  // runs the batch as one batch once all have arrived (0 / 1: a task on its own). Optional on the wire.
  std::uint64_t batch = 0;
  int batch_size = 1;
  // Device -> server: when the request was created, Unix s on the device's clock (0: not sent; optional
  // on the wire). The server's deadline rule (workload.drop_late, core/server_loop.hpp) compares it with
  // its own clock: boards must keep their clocks synchronised (NTP) for it.
  double t_created = 0;
  // Device -> server: the second copy of a task whose first copy a handover caught on the link
  // (mobility.mid_transfer: resend). The server computes the copy it kept; this one's bytes only cross
  // the link again (incompressible filler of the first copy's size). Optional on the wire.
  bool copy = false;
  // Device -> server: pp(k,m)'s m (core/cloud_handoff.hpp), where the edge passes the request on to its
  // cloud; 0: none. Optional on the wire. (Edge -> cloud: 0; `split` is m and `origin` the device.)
  int cloud_split = 0;
};

struct ResultHeader {
  bool ok = true;
  std::string error;
  int batch_size = 0;
  std::string helper;                                                       // device id of the helper that ran it, "" if the server did
  double t_received = 0, t_queued = 0, t_batch_start = 0, t_batch_end = 0;  // Unix s
  bool dropped = false;  // the server gave it up past its deadline (no payload; optional on the wire)
  double t_sent = 0;     // Unix s, when the server handed it to the connection (0: not sent; optional)
  bool copy = false;     // the second copy of a result a handover caught: filler; the device kept the first (optional)
  // pp(k,m): the cloud that ran [m,n) ("" none) and its stamps (Unix s, the cloud's clock), put in by
  // the edge from the cloud's own result header (optional on the wire).
  std::string cloud;
  double t_cloud_queued = 0, t_cloud_batch_start = 0, t_cloud_batch_end = 0;
  int cloud_batch_size = 0;
  double cloud_bytes = 0;  // the state at m the edge sent to the cloud (bytes)
};

// A handover caught a transfer on the device's link (mobility.mid_transfer: resend; core/mobility.hpp):
// the receiver kept what arrived and asks the sender for as many bytes again, not before the handover
// ends. Server -> device for an upload (the device answers with a task frame, `copy`), device ->
// server for a result (a result frame, `copy`). The frame's task id names the task.
struct ResendRequest {
  std::int64_t bytes = 0;        // the first copy's payload bytes, 0..kDefaultMaxPayload
  double not_before_unix_s = 0;  // the handover's end (Unix s, the receiver's clock)
};

std::string encode(const Hello&);
std::string encode(const Registration&);
std::string encode(const Assignment&);
std::string encode(const DeviceStatus&);
std::string encode_error(const std::string& message);
std::string encode(const ResendRequest&);
std::string encode(const PeerRegistration&);
std::string encode(const PeerReport&);
std::string encode(const PeerScheme&);
std::string encode(const Redirect&);
PeerRegistration decode_peer_registration(const std::string&);
// At most kMaxPeerEntries events, devices, strategies...; indices are checked by the receiver against
// its scenario.
constexpr std::size_t kMaxPeerEntries = 100000;
// Bounds of numbers on the wire, with the scenario's where it has one (core/limits.hpp): a queue or a
// count of unfinished requests, a batch window, a host name.
constexpr int kMaxQueueOnWire = 10000000;
constexpr double kMaxBatchWindowMs = 1e6;
constexpr std::size_t kMaxHostBytes = 253;
PeerReport decode_peer_report(const std::string&);
PeerScheme decode_peer_scheme(const std::string&);
Redirect decode_redirect(const std::string&);
// "host:port" -> host and port 1..65535; throws ProtocolError naming `what` otherwise.
std::pair<std::string, int> split_address(const std::string& address, const char* what);
ResendRequest decode_resend(const std::string&);
// `n` bytes that do not compress (so a copy crosses the link as the first copy did), different for
// each task id; content carries nothing.
std::string incompressible_filler(std::size_t n, std::uint64_t task_id);
// Throw ProtocolError naming the message and the field when the payload is not what it should be.
Hello decode_hello(const std::string&);
Registration decode_registration(const std::string&);
Assignment decode_assignment(const std::string&);
DeviceStatus decode_status(const std::string&);
std::string decode_error(const std::string&);
std::string encode(const ClockEcho& e);
// A server heartbeat: its clock echo, or nothing (t1 = 0) for a plain heartbeat.
ClockEcho decode_clock_echo(const std::string& p);

std::string pack_task(const TaskHeader& h, const std::string& state_bytes);
TaskHeader unpack_task(const std::string& payload, std::string& state_bytes);
std::string pack_result(const ResultHeader& h, const std::string& output_bytes);
ResultHeader unpack_result(const std::string& payload, std::string& output_bytes);

}  // namespace coinfer::hw
