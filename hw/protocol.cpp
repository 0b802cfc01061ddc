#include "hw/protocol.hpp"

#include <nlohmann/json.hpp>

#include "core/random_stream.hpp"

#include <chrono>
#include <cmath>

namespace coinfer::hw {

using nlohmann::json;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw ProtocolError(std::string(what) + " message: field '" + key + "' has the wrong type");
  }
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
  return json{{"device", r.device_id}, {"type", r.type},         {"model", r.model},
              {"dataset", r.dataset},  {"generates", r.generates}, {"hmac", r.hmac}}
      .dump();
}
std::string encode(const Assignment& a) {
  json j{{"strategy", a.strategy}, {"helper", a.helper}};
  if (a.epoch_unix_s > 0) j["epoch_unix_s"] = a.epoch_unix_s;
  return j.dump();
}
std::string encode(const DeviceStatus& s) {
  json j{{"bandwidth_mbps", s.bandwidth_mbps}, {"queue", s.queue_length}, {"unfinished", s.unfinished}, {"busy", s.busy},
         {"completed", s.completed}, {"latency_sum_s", s.latency_sum_s}};
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
  return r;
}
Assignment decode_assignment(const std::string& p) {
  json j = parse(p, "scheduling");
  Assignment a{field<std::string>(j, "strategy", "scheduling"), field<bool>(j, "helper", "scheduling")};
  if (j.contains("epoch_unix_s")) a.epoch_unix_s = field<double>(j, "epoch_unix_s", "scheduling");
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
  s.bandwidth_mbps = field<double>(j, "bandwidth_mbps", "heartbeat");
  s.queue_length = field<int>(j, "queue", "heartbeat");
  s.unfinished = field<int>(j, "unfinished", "heartbeat");
  s.busy = field<bool>(j, "busy", "heartbeat");
  if (j.contains("probe_t1")) s.probe_t1 = field<double>(j, "probe_t1", "heartbeat");
  if (j.contains("completed")) s.completed = field<long long>(j, "completed", "heartbeat");
  if (j.contains("latency_sum_s")) s.latency_sum_s = field<double>(j, "latency_sum_s", "heartbeat");
  return s;
}
std::string decode_error(const std::string& p) { return field<std::string>(parse(p, "error"), "error", "error"); }

std::string pack_task(const TaskHeader& h, const std::string& state_bytes) {
  json j{{"split", h.split}, {"origin", h.origin}, {"t_sent", h.t_sent}};
  if (h.t_created != 0) j["t_created"] = h.t_created;
  if (h.copy) j["copy"] = true;
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
