#include "hw/protocol.hpp"

#include <nlohmann/json.hpp>

#include "core/random_stream.hpp"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/limits.hpp"
#include "core/text_util.hpp"
#include "core/enum_names.hpp"

namespace coinfer::hw {

using nlohmann::json;

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

namespace {

json parse(const std::string& payload, const char* what) {
  try {
    json j = json::parse(payload);
    if (!j.is_object()) throw ProtocolError(std::string(what) + " message: not a JSON object");
    return j;
  } catch (const json::exception& e) {
    throw ProtocolError(std::string(what) + " message: invalid JSON (" + e.what() + ")");
  }
}

template <class T>
T field(const json& j, const char* key, const char* what) {
  auto it = j.find(key);
  if (it == j.end()) throw ProtocolError(std::string(what) + " message: missing field '" + key + "'");
  // Integers are integers, within the type (device 4294967296 was read as device 0,
  // and 2.9 as 2). JSON numbers for doubles must be finite (nlohmann reads no NaN, but keep it so).
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    bool fits = false;
    if (it->is_number_unsigned()) {
      fits = it->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    } else if (it->is_number_integer()) {
      const long long v = it->get<long long>();
      fits = v < 0 ? v >= static_cast<long long>(std::numeric_limits<T>::min())
                   : static_cast<unsigned long long>(v) <= static_cast<unsigned long long>(std::numeric_limits<T>::max());
    }
    if (!fits) throw ProtocolError(std::string(what) + " message: field '" + key + "' is not an integer within range");
  }
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw ProtocolError(std::string(what) + " message: field '" + key + "' has the wrong type");
  }
}

// A number field within [lo, hi] (the scenario loader's bounds, core/limits.hpp).
template <class T>
T field_in(const json& j, const char* key, const char* what, T lo, T hi) {
  const T v = field<T>(j, key, what);
  if (!(v >= lo && v <= hi))  // NaN fails too
    throw ProtocolError(std::string(what) + " message: field '" + key + "' outside " + std::to_string(lo) + " .. " + std::to_string(hi));
  return v;
}

std::string pack(const json& header, const std::string& bytes) {
  const std::string h = header.dump();
  std::string out;
  const auto n = static_cast<std::uint32_t>(h.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += h;
  out += bytes;
  return out;
}

json unpack(const std::string& payload, std::string& bytes, const char* what) {
  if (payload.size() < 4) throw ProtocolError(std::string(what) + " message: shorter than its header length");
  std::uint32_t n = 0;
  for (int i = 3; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(payload[i]);
  if (n > payload.size() - 4) throw ProtocolError(std::string(what) + " message: header length beyond the payload");
  json j = parse(payload.substr(4, n), what);
  bytes = payload.substr(4 + n);
  return j;
}

}  // namespace

std::string encode(const Hello& h) { return json{{"protocol", h.protocol}, {"nonce", h.nonce}}.dump(); }
std::string encode(const Registration& r) {
  json j{{"device", r.device_id}, {"type", r.type}, {"model", r.model}, {"dataset", r.dataset}, {"generates", r.generates}, {"hmac", r.hmac}};
  if (r.moved) j["moved"] = true;
  return j.dump();
}
std::string encode(const Assignment& a) {
  json j{{"strategy", a.strategy}, {"helper", a.helper}};
  if (a.epoch_unix_s > 0) j["epoch_unix_s"] = a.epoch_unix_s;
  if (!a.server.empty()) {
    j["server"] = a.server;
    j["address"] = a.address;
  }
  return j.dump();
}
std::string encode(const DeviceStatus& s) {
  json j{{"bandwidth_mbps", s.bandwidth_mbps}, {"queue", s.queue_length},         {"unfinished", s.unfinished}, {"busy", s.busy},
         {"completed", s.completed},           {"latency_sum_s", s.latency_sum_s}};
  if (s.probe_t1 > 0) j["probe_t1"] = s.probe_t1;
  return j.dump();
}
std::string encode(const ClockEcho& e) { return json{{"t1", e.t1}, {"t2", e.t2}, {"t3", e.t3}}.dump(); }
std::string encode_error(const std::string& message) { return json{{"error", message}}.dump(); }

Hello decode_hello(const std::string& p) {
  json j = parse(p, "hello");
  return {field<int>(j, "protocol", "hello"), field<std::string>(j, "nonce", "hello")};
}
Registration decode_registration(const std::string& p) {
  json j = parse(p, "register");
  Registration r;
  r.device_id = field<std::string>(j, "device", "register");
  r.type = field<std::string>(j, "type", "register");
  r.model = field<std::string>(j, "model", "register");
  r.dataset = field<std::string>(j, "dataset", "register");
  r.generates = field<bool>(j, "generates", "register");
  r.hmac = field<std::string>(j, "hmac", "register");
  if (j.contains("moved")) r.moved = field<bool>(j, "moved", "register");
  return r;
}
Assignment decode_assignment(const std::string& p) {
  json j = parse(p, "scheduling");
  Assignment a;
  a.strategy = field<std::string>(j, "strategy", "scheduling");
  a.helper = field<bool>(j, "helper", "scheduling");
  if (j.contains("epoch_unix_s")) a.epoch_unix_s = field<double>(j, "epoch_unix_s", "scheduling");
  if (j.contains("server")) {
    a.server = field<std::string>(j, "server", "scheduling");
    a.address = field<std::string>(j, "address", "scheduling");
    if (a.server.empty()) throw ProtocolError("scheduling message: empty server");
    split_address(a.address, "scheduling");
  }
  return a;
}
ClockEcho decode_clock_echo(const std::string& p) {
  ClockEcho e;
  if (p.empty()) return e;
  json j = parse(p, "heartbeat");
  if (!j.contains("t1")) return e;
  e.t1 = field<double>(j, "t1", "heartbeat");
  e.t2 = field<double>(j, "t2", "heartbeat");
  e.t3 = field<double>(j, "t3", "heartbeat");
  return e;
}
DeviceStatus decode_status(const std::string& p) {
  json j = parse(p, "heartbeat");
  DeviceStatus s;
  // 0: no estimate yet; the bounds are the scenario's (core/limits.hpp).
  s.bandwidth_mbps = field_in<double>(j, "bandwidth_mbps", "heartbeat", 0, limits::kMaxBandwidthMbps);
  s.queue_length = field_in<int>(j, "queue", "heartbeat", 0, kMaxQueueOnWire);
  s.unfinished = field_in<int>(j, "unfinished", "heartbeat", 0, kMaxQueueOnWire);
  s.busy = field<bool>(j, "busy", "heartbeat");
  if (j.contains("probe_t1")) s.probe_t1 = field_in<double>(j, "probe_t1", "heartbeat", 0, 1e11);
  if (j.contains("completed")) s.completed = field_in<long long>(j, "completed", "heartbeat", 0, limits::kMaxRequests);
  if (j.contains("latency_sum_s")) s.latency_sum_s = field_in<double>(j, "latency_sum_s", "heartbeat", 0, 1e15);
  return s;
}
std::string decode_error(const std::string& p) { return field<std::string>(parse(p, "error"), "error", "error"); }

std::string pack_task(const TaskHeader& h, const std::string& state_bytes) {
  json j{{"split", h.split}, {"origin", h.origin}, {"t_sent", h.t_sent}};
  if (h.t_created != 0) j["t_created"] = h.t_created;
  if (h.copy) j["copy"] = true;
  if (h.cloud_split != 0) j["cloud_split"] = h.cloud_split;
  if (h.batch != 0) {
    j["batch"] = h.batch;
    j["batch_size"] = h.batch_size;
  }
  return pack(j, state_bytes);
}
TaskHeader unpack_task(const std::string& payload, std::string& state_bytes) {
  json j = unpack(payload, state_bytes, "task");
  TaskHeader h{field<int>(j, "split", "task"), field<std::string>(j, "origin", "task"), field<double>(j, "t_sent", "task")};
  if (j.contains("t_created")) h.t_created = field<double>(j, "t_created", "task");
  if (j.contains("copy")) h.copy = field<bool>(j, "copy", "task");
  if (j.contains("cloud_split")) h.cloud_split = field<int>(j, "cloud_split", "task");  // checked against the model by the receiver
  if (j.contains("batch")) {
    h.batch = field<std::uint64_t>(j, "batch", "task");
    h.batch_size = field<int>(j, "batch_size", "task");
    if (h.batch_size < 1 || h.batch_size > kMaxForwardedBatch)
      throw ProtocolError("task message: batch_size " + std::to_string(h.batch_size) + " outside 1.." + std::to_string(kMaxForwardedBatch));
  }
  return h;
}
std::string pack_result(const ResultHeader& h, const std::string& output_bytes) {
  json j{{"ok", h.ok},
         {"error", h.error},
         {"batch_size", h.batch_size},
         {"helper", h.helper},
         {"t_received", h.t_received},
         {"t_queued", h.t_queued},
         {"t_batch_start", h.t_batch_start},
         {"t_batch_end", h.t_batch_end}};
  if (h.dropped) j["dropped"] = true;
  if (h.t_sent != 0) j["t_sent"] = h.t_sent;
  if (h.copy) j["copy"] = true;
  if (!h.cloud.empty())
    j["cloud"] = {{"server", h.cloud},
                  {"t_queued", h.t_cloud_queued},
                  {"t_batch_start", h.t_cloud_batch_start},
                  {"t_batch_end", h.t_cloud_batch_end},
                  {"batch_size", h.cloud_batch_size},
                  {"bytes", h.cloud_bytes}};
  return pack(j, output_bytes);
}
ResultHeader unpack_result(const std::string& payload, std::string& output_bytes) {
  json j = unpack(payload, output_bytes, "result");
  ResultHeader h;
  h.ok = field<bool>(j, "ok", "result");
  if (j.contains("dropped")) h.dropped = field<bool>(j, "dropped", "result");
  h.error = field<std::string>(j, "error", "result");
  h.batch_size = field<int>(j, "batch_size", "result");
  h.helper = field<std::string>(j, "helper", "result");
  h.t_received = field<double>(j, "t_received", "result");
  h.t_queued = field<double>(j, "t_queued", "result");
  h.t_batch_start = field<double>(j, "t_batch_start", "result");
  h.t_batch_end = field<double>(j, "t_batch_end", "result");
  if (j.contains("t_sent")) h.t_sent = field<double>(j, "t_sent", "result");
  if (j.contains("copy")) h.copy = field<bool>(j, "copy", "result");
  if (j.contains("cloud")) {
    const json& c = j["cloud"];
    if (!c.is_object()) throw ProtocolError("result message: cloud is not an object");
    h.cloud = field<std::string>(c, "server", "result.cloud");
    h.t_cloud_queued = field<double>(c, "t_queued", "result.cloud");
    h.t_cloud_batch_start = field<double>(c, "t_batch_start", "result.cloud");
    h.t_cloud_batch_end = field<double>(c, "t_batch_end", "result.cloud");
    h.cloud_batch_size = field<int>(c, "batch_size", "result.cloud");
    h.cloud_bytes = field<double>(c, "bytes", "result.cloud");
    if (h.cloud.empty()) throw ProtocolError("result message: cloud.server is empty");
  }
  return h;
}

std::string encode(const ResendRequest& r) { return json{{"bytes", r.bytes}, {"not_before", r.not_before_unix_s}}.dump(); }
ResendRequest decode_resend(const std::string& p) {
  const json j = parse(p, "resend");
  ResendRequest r{field<std::int64_t>(j, "bytes", "resend"), field<double>(j, "not_before", "resend")};
  if (r.bytes < 0 || r.bytes > static_cast<std::int64_t>(kDefaultMaxPayload))
    throw ProtocolError("resend message: bytes " + std::to_string(r.bytes) + " outside 0.." + std::to_string(kDefaultMaxPayload));
  if (!std::isfinite(r.not_before_unix_s)) throw ProtocolError("resend message: not_before is not a finite time");
  return r;
}

std::pair<std::string, int> split_address(const std::string& address, const char* what) {
  const auto colon = address.rfind(':');
  if (address.size() > kMaxHostBytes + 6 || colon == std::string::npos || colon == 0 || colon + 1 == address.size() || address.size() - colon > 6)
    throw ProtocolError(std::string(what) + " message: address '" + printable(address, 80) + "' is not host:port");
  // A host a peer can connect to ("a b:80", "0.0.0.0:1" and a 15,000-character host
  // were accepted and sent to every peer): a DNS name or an IPv4/IPv6 address, not "any".
  const std::string host = address.substr(0, colon);
  for (const char ch : host)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_' || ch == ':' || ch == '[' || ch == ']'))
      throw ProtocolError(std::string(what) + " message: address '" + printable(address, 80) + "' has a character a host name cannot have");
  if (host == "0.0.0.0" || host == "::" || host == "[::]")
    throw ProtocolError(std::string(what) + " message: address '" + address + "' names no host (" + host + " means any)");
  int port = 0;
  for (size_t i = colon + 1; i < address.size(); ++i) {
    if (address[i] < '0' || address[i] > '9') throw ProtocolError(std::string(what) + " message: address '" + address + "' has a bad port");
    port = port * 10 + (address[i] - '0');
  }
  if (port < 1 || port > 65535) throw ProtocolError(std::string(what) + " message: port of '" + address + "' outside 1..65535");
  return {address.substr(0, colon), port};
}

namespace {
constexpr auto kPeerEventNames = enum_names<PeerEvent::Kind>({"registered", "leave", "bandwidth"});
static_assert(kPeerEventNames.names_each_of(PeerEvent::Kind::registered, PeerEvent::Kind::bandwidth));
const char* peer_event_name(PeerEvent::Kind k) { return kPeerEventNames.name(k); }
const json& array_field(const json& j, const char* key, const char* what) {
  auto it = j.find(key);
  if (it == j.end()) throw ProtocolError(std::string(what) + " message: missing field '" + key + "'");
  if (!it->is_array()) throw ProtocolError(std::string(what) + " message: field '" + key + "' is not an array");
  if (it->size() > kMaxPeerEntries)
    throw ProtocolError(std::string(what) + " message: field '" + key + "' has more than " + std::to_string(kMaxPeerEntries) + " entries");
  return *it;
}
json status_json(const DeviceStatus& s) {
  return json{{"bandwidth_mbps", s.bandwidth_mbps}, {"queue", s.queue_length},         {"unfinished", s.unfinished}, {"busy", s.busy},
              {"completed", s.completed},           {"latency_sum_s", s.latency_sum_s}};
}
}  // namespace

std::string encode(const PeerRegistration& r) { return json{{"server", r.server_id}, {"address", r.address}, {"hmac", r.hmac}}.dump(); }
PeerRegistration decode_peer_registration(const std::string& p) {
  const json j = parse(p, "peer_register");
  PeerRegistration r{field<std::string>(j, "server", "peer_register"), field<std::string>(j, "address", "peer_register"),
                     field<std::string>(j, "hmac", "peer_register")};
  split_address(r.address, "peer_register");
  return r;
}

std::string encode(const PeerReport& r) {
  json events = json::array(), devices = json::array();
  for (const PeerEvent& e : r.events) {
    json x{{"kind", peer_event_name(e.kind)}, {"device", e.device}};
    if (e.kind == PeerEvent::Kind::bandwidth) x["mbps"] = e.bandwidth_mbps;
    events.push_back(x);
  }
  for (const PeerDevice& d : r.devices) {
    json x = status_json(d.status);
    x["device"] = d.device;
    x["generates"] = d.generates;
    devices.push_back(x);
  }
  return json{{"events", events}, {"queue", r.queue_length}, {"busy", r.busy_workers}, {"devices", devices}}.dump();
}
PeerReport decode_peer_report(const std::string& p) {
  const char* what = "peer_report";
  const json j = parse(p, what);
  PeerReport r;
  r.queue_length = field_in<int>(j, "queue", what, 0, kMaxQueueOnWire);
  r.busy_workers = field_in<int>(j, "busy", what, 0, static_cast<int>(limits::kMaxWorkers));
  for (const json& x : array_field(j, "events", what)) {
    if (!x.is_object()) throw ProtocolError("peer_report message: an event is not an object");
    PeerEvent e;
    const std::string kind = field<std::string>(x, "kind", what);
    if (const auto k = kPeerEventNames.value(kind))
      e.kind = *k;
    else
      throw ProtocolError("peer_report message: unknown event kind '" + kind + "'");
    e.device = field_in<int>(x, "device", what, 0, static_cast<int>(limits::kMaxDevices) - 1);
    if (e.kind == PeerEvent::Kind::bandwidth) {
      e.bandwidth_mbps = field<double>(x, "mbps", what);
      if (!std::isfinite(e.bandwidth_mbps) || e.bandwidth_mbps <= 0 || e.bandwidth_mbps > limits::kMaxBandwidthMbps)
        throw ProtocolError("peer_report message: bandwidth not a number in (0, " + std::to_string(limits::kMaxBandwidthMbps) + "]");
    }
    r.events.push_back(e);
  }
  for (const json& x : array_field(j, "devices", what)) {
    if (!x.is_object()) throw ProtocolError("peer_report message: a device is not an object");
    PeerDevice d;
    d.device = field_in<int>(x, "device", what, 0, static_cast<int>(limits::kMaxDevices) - 1);
    d.generates = field<bool>(x, "generates", what);
    d.status = decode_status(x.dump());
    r.devices.push_back(d);
  }
  return r;
}

std::string encode(const PeerScheme& s) {
  return json{{"strategies", s.strategies},
              {"helpers", s.helpers},
              {"servers", s.servers},
              {"server_helpers", s.server_helpers},
              {"batch_window_ms", s.batch_window_ms},
              {"batch_max_size", s.batch_max_size},
              {"addresses", s.addresses}}
      .dump();
}
PeerScheme decode_peer_scheme(const std::string& p) {
  const char* what = "peer_scheme";
  const json j = parse(p, what);
  PeerScheme s;
  try {
    s.strategies = array_field(j, "strategies", what).get<std::vector<std::string>>();
    s.helpers = array_field(j, "helpers", what).get<std::vector<bool>>();
    s.servers = array_field(j, "servers", what).get<std::vector<int>>();
    s.server_helpers = array_field(j, "server_helpers", what).get<std::vector<int>>();
  } catch (const json::exception&) {
    throw ProtocolError("peer_scheme message: an array has entries of the wrong type");
  }
  if (s.helpers.size() != s.strategies.size() || s.servers.size() != s.strategies.size())
    throw ProtocolError("peer_scheme message: strategies, helpers and servers differ in length");
  s.batch_window_ms = field<double>(j, "batch_window_ms", what);
  s.batch_max_size = field<int>(j, "batch_max_size", what);
  if (!std::isfinite(s.batch_window_ms) || s.batch_window_ms < 0 || s.batch_window_ms > kMaxBatchWindowMs || s.batch_max_size < 1 ||
      s.batch_max_size > static_cast<int>(limits::kMaxBatch))
    throw ProtocolError("peer_scheme message: batching outside 0 <= window <= " + std::to_string(static_cast<long long>(kMaxBatchWindowMs)) +
                        " ms, 1 <= size <= " + std::to_string(limits::kMaxBatch));
  const auto a = j.find("addresses");
  if (a == j.end() || !a->is_object() || a->size() > kMaxPeerEntries) throw ProtocolError("peer_scheme message: addresses is not an object");
  for (const auto& [id, addr] : a->items()) {
    if (!addr.is_string()) throw ProtocolError("peer_scheme message: the address of '" + id + "' is not a string");
    split_address(addr.get<std::string>(), what);
    s.addresses[id] = addr.get<std::string>();
  }
  return s;
}

std::string encode(const Redirect& r) { return json{{"server", r.server}, {"address", r.address}}.dump(); }
Redirect decode_redirect(const std::string& p) {
  const json j = parse(p, "redirect");
  Redirect r{field<std::string>(j, "server", "redirect"), field<std::string>(j, "address", "redirect")};
  split_address(r.address, "redirect");
  return r;
}

std::string incompressible_filler(std::size_t n, std::uint64_t task_id) {
  // Uniform random bytes, which no compressor shrinks; the content carries nothing.
  std::string out(n, '\0');
  RandomStream r(0, StreamPurpose::handover_copy, task_id);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t z = r.next_u64();
    for (std::size_t k = 0; k < 8 && i + k < n; ++k) out[i + k] = static_cast<char>((z >> (8 * k)) & 0xff);
  }
  return out;
}

}  // namespace coinfer::hw
