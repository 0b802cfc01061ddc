#include "sched/state_json.hpp"

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"

namespace coinfer {

using nlohmann::json;

std::string state_to_json(const SystemState& s) {
  json j;
  j["time_s"] = s.time_s;
  j["horizon_s"] = s.horizon_s;
  j["warmup_left_s"] = s.warmup_left_s;
  j["access_point_mbps"] = s.access_point_mbps;
  j["access_point_latency_ms"] = s.access_point_latency_ms;
  j["devices"] = json::array();
  for (const auto& d : s.devices)
    j["devices"].push_back({{"id", d.id},
                            {"type", d.type},
                            {"model", d.model},
                            {"dataset", d.dataset},
                            {"server", d.server},
                            {"strategy", d.strategy.to_string()},
                            {"connected", d.connected},
                            {"busy", d.busy},
                            {"queue_length", d.queue_length},
                            {"unfinished", d.unfinished},
                            {"link_bandwidth_mbps", d.link_bandwidth_mbps},
                            {"link_latency_ms", d.link_latency_ms},
                            {"in_flight", d.in_flight},
                            {"arrival_rate_per_s", d.arrival_rate_per_s},
                            {"generates", d.generates},
                            {"completed", d.completed},
                            {"latency_sum_s", d.latency_sum_s},
                            {"load", d.load}});
  for (size_t i = 0; i < s.devices.size(); ++i) {  // only where stated: states without power read as before
    const DeviceState& d = s.devices[i];
    if (d.idle_w != 0 || d.busy_w != 0 || d.radio_j_per_mb != 0 || !d.processor_idle_w.empty())
      j["devices"][i]["power"] = {{"idle_w", d.idle_w},
                                  {"busy_w", d.busy_w},
                                  {"radio_j_per_mb", d.radio_j_per_mb},
                                  {"processor_idle_w", d.processor_idle_w},
                                  {"processor_busy_w", d.processor_busy_w}};
  }
  for (size_t i = 0; i < s.devices.size(); ++i) {  // its radio's power states, where stated (core/radio_energy.hpp)
    const RadioStates& m = s.devices[i].radio;
    if (m.stated())
      j["devices"][i]["radio"] = {{"name", m.name},
                                  {"base_w", m.base_w},
                                  {"up_w_per_mbps", m.up_w_per_mbps},
                                  {"down_w_per_mbps", m.down_w_per_mbps},
                                  {"tail_w", m.tail_w},
                                  {"tail_s", m.tail_s},
                                  {"idle_w", m.idle_w},
                                  {"promotion_w", m.promotion_w},
                                  {"promotion_s", m.promotion_s},
                                  {"source", m.source}};
  }
  for (size_t i = 0; i < s.devices.size(); ++i)  // only where named: states of one-processor devices read as before
    if (!s.devices[i].processor.empty()) j["devices"][i]["processor"] = s.devices[i].processor;
  for (size_t i = 0; i < s.devices.size(); ++i) {  // its processors and memory, where its type has a profile
    const DeviceHardware* h = s.devices[i].hardware.get();
    if (h == nullptr) continue;
    json procs = json::array(), pools = json::array();
    for (int p = 0; p < h->size(); ++p)
      procs.push_back({{"name", h->processors[static_cast<size_t>(p)]},
                       {"kind", h->kinds[static_cast<size_t>(p)]},
                       {"memory", h->pool_names[static_cast<size_t>(h->pool_of[static_cast<size_t>(p)])]}});
    for (size_t k = 0; k < h->pool_names.size(); ++k) pools.push_back({{"name", h->pool_names[k]}, {"capacity_bytes", h->pool_capacity_bytes[k]}});
    j["devices"][i]["hardware"] = {{"processors", procs},
                                   {"memory", pools},
                                   {"zero_copy", h->zero_copy},
                                   {"copy_bytes_per_s", h->copy_bytes_per_s},
                                   {"copy_latency_s", h->copy_latency_s}};
  }
  j["servers"] = json::array();
  for (const auto& v : s.servers)
    j["servers"].push_back({{"id", v.id},
                            {"type", v.type},
                            {"queue_length", v.queue_length},
                            {"busy_workers", v.busy_workers},
                            {"workers", v.workers},
                            {"batch_window_ms", v.batch_window_ms},
                            {"batch_max_size", v.batch_max_size},
                            {"batch_size_limit", v.batch_size_limit},
                            {"link_bandwidth_mbps", v.link_bandwidth_mbps},
                            {"link_latency_ms", v.link_latency_ms},
                            {"up", v.up},
                            {"cloud", v.cloud},
                            {"to_cloud", v.to_cloud}});
  return j.dump();
}

SystemState state_from_json(const std::string& text) {
  try {
    json j = json::parse(text);
    SystemState s;
    s.time_s = j.at("time_s").get<double>();
    s.horizon_s = j.value("horizon_s", 0.0);
    s.warmup_left_s = j.value("warmup_left_s", 0.0);
    s.access_point_mbps = j.at("access_point_mbps").get<double>();
    s.access_point_latency_ms = j.at("access_point_latency_ms").get<double>();
    for (const auto& d : j.at("devices")) {
      DeviceState x;
      x.id = d.at("id").get<std::string>();
      x.type = d.at("type").get<std::string>();
      x.processor = d.value("processor", std::string());
      x.model = d.at("model").get<std::string>();
      x.dataset = d.at("dataset").get<std::string>();
      x.server = d.at("server").get<std::string>();
      x.strategy = parse_strategy(d.at("strategy").get<std::string>());
      x.connected = d.at("connected").get<bool>();
      x.busy = d.at("busy").get<bool>();
      x.queue_length = d.at("queue_length").get<int>();
      x.unfinished = d.at("unfinished").get<int>();
      x.link_bandwidth_mbps = d.at("link_bandwidth_mbps").get<double>();
      x.link_latency_ms = d.at("link_latency_ms").get<double>();
      x.in_flight = d.at("in_flight").get<int>();
      x.arrival_rate_per_s = d.at("arrival_rate_per_s").get<double>();
      x.generates = d.at("generates").get<bool>();
      if (d.contains("completed")) x.completed = d.at("completed").get<long long>();
      if (d.contains("latency_sum_s")) x.latency_sum_s = d.at("latency_sum_s").get<double>();
      if (d.contains("load")) x.load = d.at("load").get<double>();
      if (d.contains("power")) {
        const json& p = d.at("power");
        x.idle_w = p.at("idle_w").get<double>();
        x.busy_w = p.at("busy_w").get<double>();
        x.radio_j_per_mb = p.at("radio_j_per_mb").get<double>();
        x.processor_idle_w = p.at("processor_idle_w").get<std::vector<double>>();
        x.processor_busy_w = p.at("processor_busy_w").get<std::vector<double>>();
      }
      if (d.contains("radio")) {
        const json& m = d.at("radio");
        x.radio.name = m.value("name", "");
        x.radio.base_w = m.at("base_w").get<double>();
        x.radio.up_w_per_mbps = m.at("up_w_per_mbps").get<double>();
        x.radio.down_w_per_mbps = m.at("down_w_per_mbps").get<double>();
        x.radio.tail_w = m.at("tail_w").get<double>();
        x.radio.tail_s = m.at("tail_s").get<double>();
        x.radio.idle_w = m.at("idle_w").get<double>();
        x.radio.promotion_w = m.at("promotion_w").get<double>();
        x.radio.promotion_s = m.at("promotion_s").get<double>();
        x.radio.source = m.value("source", "");
      }
      if (d.contains("hardware")) {
        const json& h = d.at("hardware");
        DeviceHardware hw;
        for (const auto& m : h.at("memory")) {
          hw.pool_names.push_back(m.at("name").get<std::string>());
          hw.pool_capacity_bytes.push_back(m.at("capacity_bytes").get<double>());
        }
        for (const auto& p : h.at("processors")) {
          hw.processors.push_back(p.at("name").get<std::string>());
          hw.kinds.push_back(p.value("kind", std::string()));
          const std::string pool = p.value("memory", std::string("memory"));
          int k = 0;
          while (static_cast<size_t>(k) < hw.pool_names.size() && hw.pool_names[static_cast<size_t>(k)] != pool) ++k;
          if (static_cast<size_t>(k) == hw.pool_names.size())
            throw std::invalid_argument("processor memory '" + pool + "' is not in hardware.memory");
          hw.pool_of.push_back(k);
        }
        if (hw.processors.empty() || hw.pool_names.empty()) throw std::invalid_argument("hardware needs processors and memory");
        hw.zero_copy = h.value("zero_copy", true);
        hw.copy_bytes_per_s = h.value("copy_bytes_per_s", 0.0);
        hw.copy_latency_s = h.value("copy_latency_s", 0.0);
        x.hardware = std::make_shared<const DeviceHardware>(std::move(hw));
      }
      s.devices.push_back(x);
    }
    for (const auto& v : j.at("servers")) {
      ServerState x;
      x.id = v.at("id").get<std::string>();
      x.type = v.at("type").get<std::string>();
      x.queue_length = v.at("queue_length").get<int>();
      x.busy_workers = v.at("busy_workers").get<int>();
      x.workers = v.at("workers").get<int>();
      x.batch_window_ms = v.at("batch_window_ms").get<double>();
      x.batch_max_size = v.at("batch_max_size").get<int>();
      x.batch_size_limit = v.value("batch_size_limit", x.batch_max_size);
      x.link_bandwidth_mbps = v.at("link_bandwidth_mbps").get<double>();
      x.link_latency_ms = v.at("link_latency_ms").get<double>();
      x.up = v.value("up", true);
      x.cloud = v.value("cloud", std::string());
      x.to_cloud = v.value("to_cloud", 0);
      s.servers.push_back(x);
    }
    return s;
  } catch (const std::exception& e) {
    throw InputError(std::string("malformed system state JSON: ") + e.what());
  }
}

std::string scheme_to_json(const Scheme& s) {
  json j;
  j["strategies"] = json::object();
  for (const auto& kv : s.strategies) j["strategies"][kv.first] = kv.second.to_string();
  j["helpers"] = s.helpers;
  if (!s.batching.empty()) {
    j["batching"] = json::object();
    for (const auto& [server, spec] : s.batching) j["batching"][server] = {{"window_ms", spec.window_ms}, {"max_size", spec.max_size}};
  }
  if (!s.servers.empty()) j["servers"] = s.servers;  // device id -> server id
  return j.dump();
}

Scheme scheme_from_json(const std::string& text) {
  try {
    json j = json::parse(text);
    Scheme s;
    for (auto it = j.at("strategies").begin(); it != j.at("strategies").end(); ++it)
      s.strategies[it.key()] = parse_strategy(it.value().get<std::string>());
    s.helpers = j.at("helpers").get<std::vector<std::string>>();
    if (j.contains("batching"))  // optional: server id -> {window_ms, max_size} (checked against the system by the caller)
      for (auto it = j.at("batching").begin(); it != j.at("batching").end(); ++it) {
        BatchSpec b;
        b.window_ms = it.value().at("window_ms").get<double>();
        b.max_size = it.value().at("max_size").get<int>();
        s.batching[it.key()] = b;
      }
    if (j.contains("servers"))  // optional: device id -> server id (checked against the scenario by the Rescheduler)
      for (auto it = j.at("servers").begin(); it != j.at("servers").end(); ++it) s.servers[it.key()] = it.value().get<std::string>();
    return s;
  } catch (const std::exception& e) {
    throw InputError(std::string("malformed scheme JSON: ") + e.what());
  }
}

}  // namespace coinfer
