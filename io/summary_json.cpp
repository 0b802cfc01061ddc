#include "io/summary_json.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <unordered_map>
#include <vector>
#include <nlohmann/json.hpp>

#include "core/mobility.hpp"
#include "plumbing/atomic_dir.hpp"

namespace coinfer {

namespace {
nlohmann::ordered_json number(double v) {
  if (std::isnan(v)) return nullptr;
  return v;
}
nlohmann::ordered_json metrics(const MetricsSummary& m) {
  nlohmann::ordered_json j;
  j["throughput_rps"] = number(m.throughput_rps);
  j["throughput_incl_drain_rps"] = number(m.throughput_incl_drain_rps);
  j["offered_rps"] = number(m.offered_rps);
  j["latency_ms"] = {
      {"mean", number(m.latency.mean_ms)}, {"p50", number(m.latency.p50_ms)}, {"p95", number(m.latency.p95_ms)}, {"p99", number(m.latency.p99_ms)}};
  j["energy_j"] = number(m.energy_j);
  j["energy_j_per_inference"] = number(m.energy_j_per_inference);
  j["created"] = m.created;
  j["completed"] = m.completed;
  j["delivered"] = m.delivered;
  j["completed_in_drain"] = m.completed_in_drain;
  j["failed"] = m.failed;
  if (m.dropped) j["dropped"] = m.dropped;
  if (!std::isnan(m.slo_attainment) || m.deadline_met) {
    j["deadline_met"] = m.deadline_met;
    j["slo_attainment"] = number(m.slo_attainment);
  }
  j["saturated"] = m.saturated;
  if (m.saturated || m.backlog_end > m.backlog_start) {
    nlohmann::ordered_json e = {
        {"backlog_start", m.backlog_start},
        {"backlog_end", m.backlog_end},
        {"backlog_growth", m.backlog_end - m.backlog_start},
        {"growth_share_of_created", number(m.created ? static_cast<double>(m.backlog_end - m.backlog_start) / static_cast<double>(m.created) : NAN)}};
    if (m.id == "total") e["saturated_devices"] = m.saturated_devices;
    j["saturation"] = e;
  }
  return j;
}

// Writes one JSON document as nlohmann's dump(2) would, member by member, so that a section with a member
// per device is written one device at a time instead of as one tree and one string of the whole file
// (at 100,000 devices those were ~1 GB at the end of a run). The text is the same byte for byte.
class JsonOut {
 public:
  explicit JsonOut(std::ostream& out) : out_(out) {}
  void begin_object() {
    out_ << '{';
    first_.push_back(true);
  }
  void key(const std::string& k) {
    out_ << (first_.back() ? "\n" : ",\n");
    first_.back() = false;
    indent();
    out_ << nlohmann::ordered_json(k).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << ": ";
  }
  // A value at the current depth: its dump re-indented (a dumped string holds no raw newline).
  void value(const nlohmann::ordered_json& v) {
    const std::string text = v.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::string pad(2 * first_.size(), ' ');
    size_t from = 0;
    for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
      out_.write(text.data() + from, static_cast<std::streamsize>(nl + 1 - from));
      out_.write(pad.data(), static_cast<std::streamsize>(pad.size()));
    }
    out_.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
  }
  void member(const std::string& k, const nlohmann::ordered_json& v) {
    key(k);
    value(v);
  }
  void end_object() {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) {
      out_ << '\n';
      indent();
    }
    out_ << '}';
  }

 private:
  void indent() { out_ << std::string(2 * first_.size(), ' '); }
  std::ostream& out_;
  std::vector<bool> first_;  // per open object: no member written yet
};

// The run's identity and inputs: scenario, how it was made, seed, window, scheduler, decisions by
// trigger, service time, transfer bytes, estimated LUT entries, clocks, data files.
nlohmann::ordered_json head_members(const RunResults& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  {
    const RunProvenance& m = r.made_by;
    nlohmann::ordered_json made = nlohmann::ordered_json::object();
    if (!m.program.empty()) made["program"] = m.program;
    if (!m.commit.empty()) made["commit"] = m.commit;
    if (!m.command_line.empty()) made["command"] = m.command_line;
    if (!m.working_directory.empty()) made["working_directory"] = m.working_directory;
    if (!r.scenario_file.empty()) made["scenario_file"] = r.scenario_file;
    made["overrides"] = m.overrides;
    if (!m.environment.empty()) made["environment"] = m.environment;
    if (!m.scenario_yaml.empty()) made["scenario_as_run"] = m.scenario_yaml;
    j["made_by"] = made;
  }
  j["seed"] = r.seed;
  j["duration_s"] = r.duration_s;
  j["warmup_s"] = r.warmup_s;
  j["window_s"] = r.duration_s - r.warmup_s;
  j["scheduler"] = r.scheduler;
  if (!r.estimator.empty()) j["estimator"] = r.estimator;
  nlohmann::ordered_json triggers = nlohmann::ordered_json::object();
  for (const auto& d : r.decisions) {
    const std::string first = d.trigger.substr(0, d.trigger.find_first_of(":+"));
    triggers[first] = triggers.value(first, 0) + 1;
  }
  j["decisions"] = {{"count", r.decisions.size()}, {"by_trigger", triggers}};
  if (!r.service_time.empty()) j["service_time"] = {{"mode", r.service_time}, {"distributions_from", r.sampled_luts}};
  if (!r.wire_bytes_luts.empty() || !r.tensor_bytes_luts.empty())
    j["transfer_bytes"] = {{"measured_wire_bytes_from", r.wire_bytes_luts}, {"spec_tensor_bytes_for", r.tensor_bytes_luts}};
  if (!r.estimated_lut_entries.empty())
    j["estimated_lut_entries"] = {{"count", r.estimated_lut_entries.size()},
                                  {"note", "LUT entries estimated by fitted regressors (coinfer lut fill), allowed by luts_fill: allow"},
                                  {"entries", r.estimated_lut_entries}};
  if (!r.clocks.empty()) {
    nlohmann::ordered_json clocks = nlohmann::ordered_json::object();
    for (const auto& c : r.clocks)
      clocks[c.device] = {{"offset_s", number(c.offset_s)}, {"uncertainty_s", number(c.uncertainty_s)}, {"samples", c.samples}};
    j["clock"] = {{"note", "each board's journal moved onto the server's clock by this offset (NTP-style probes over heartbeats)"},
                  {"devices", clocks}};
  }
  if (!r.data_files.empty()) {
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const auto& f : r.data_files) files.push_back({{"role", f.role}, {"path", f.path}, {"origin", f.origin}});
    j["data_files"] = files;
  }
  return j;
}

// Per device: its processors' busy seconds, memory peaks and energy (only where a device has processors or memory).
void write_hardware(JsonOut& w, const RunResults& r) {
  if (!std::any_of(r.devices.begin(), r.devices.end(), [](const DeviceResult& d) { return !d.processors.empty() || !d.memory.empty(); })) return;
  w.key("hardware");
  w.begin_object();
  w.member("note",
           "per device: each processor's computing seconds in the measurement window and its memory peak (weights it holds + "
           "working sets running on it) and, with per-processor power, its energy (idle all along + busy - idle while computing, J); each memory's "
           "capacity (0: none stated) and the peak need seen when a segment "
           "started (scenarios/README.md \"Placement\")");
  w.key("devices");
  w.begin_object();
  for (const auto& d : r.devices) {
    if (d.processors.empty() && d.memory.empty()) continue;
    nlohmann::ordered_json procs = nlohmann::ordered_json::object(), pools = nlohmann::ordered_json::object();
    for (const auto& p : d.processors) {
      nlohmann::ordered_json one = {{"busy_s", number(p.busy_s)}, {"peak_memory_mb", number(p.peak_bytes / 1e6)}};
      if (std::isfinite(p.energy_j)) one["energy_j"] = number(p.energy_j);
      procs[p.name.empty() ? "default" : p.name] = one;
    }
    for (const auto& m : d.memory) pools[m.name] = {{"capacity_mb", number(m.capacity_bytes / 1e6)}, {"peak_mb", number(m.peak_bytes / 1e6)}};
    w.member(d.id, nlohmann::ordered_json{{"processors", procs}, {"memory", pools}});
  }
  w.end_object();
  w.end_object();
}

// Per server over the window: busy seconds, utilisation, batches, failures, energy (null: no server results).
nlohmann::ordered_json servers_member(const RunResults& r) {
  if (r.server_results.empty()) return nullptr;
  const double window = std::max(0.0, r.duration_s - std::max(0.0, r.warmup_s));
  nlohmann::ordered_json servers = nlohmann::ordered_json::object();
  for (const auto& sv : r.server_results) {
    nlohmann::ordered_json one = {{"busy_s", number(sv.busy_s)},
                                  {"utilisation", number(window > 0 ? sv.busy_s / window : NAN)},
                                  {"batches", sv.batches},
                                  {"requests", sv.requests}};
    if (sv.failures > 0 || sv.down_s > 0) {  // core/server_failures.hpp
      one["failures"] = sv.failures;
      one["down_s"] = number(sv.down_s);
    }
    if (std::isfinite(sv.energy_j)) {
      one["energy_j"] = number(sv.energy_j);
      one["energy_j_per_inference"] = number(sv.requests > 0 ? sv.energy_j / static_cast<double>(sv.requests) : NAN);
    }
    servers[sv.id] = one;
  }
  return {{"note",
           "per server over the measurement window: busy_s = the union of its batches' spans (computing while any worker "
           "is); with failures (events fail/recover), failures in the window and down_s, the seconds of it the server was down; energy "
           "(where its power is stated) = idle_w x (window - down_s) + (busy_w - idle_w) x busy_s, SimGrid's host rule, "
           "a model also for a real run; per inference over the requests it computed a part of"},
          {"servers", servers}};
}

// Handovers between access points (core/mobility.hpp), where any happened (null: none).
nlohmann::ordered_json handovers_member(const RunResults& r) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::object();
  size_t count = 0;
  for (const EventRecord& e : r.events) {
    if (e.kind != "handover") continue;
    ++count;
    auto& one = devices[e.device];
    if (one.is_null()) one = {{"count", 0}, {"at_s", nlohmann::ordered_json::array()}, {"access_points", {e.from_access_point}}};
    one["count"] = one["count"].get<int>() + 1;
    one["at_s"].push_back(number(e.t_s));
    one["access_points"].push_back(e.access_point);
  }
  const long long resent = r.resends, failed = r.handover_failures;  // what the handovers caught on the link (mobility.mid_transfer)
  if (count == 0) return nullptr;
  return {{"note",
           "changes of access point (mobility): per device, their times and the access points it was associated with in turn; "
           "transfers_resent and requests_failed: what they caught on the link (mobility.mid_transfer resend, fail); "
           "the whole run, not only the measurement window"},
          {"count", count},
          {"transfers_resent", resent},
          {"requests_failed", failed},
          {"devices", devices}};
}

// Whether any device's energy (compute, idle or radio) is stated and not zero.
bool energy_stated(const RunResults& r) {
  return std::any_of(r.devices.begin(), r.devices.end(), [](const DeviceResult& d) {
    return (std::isfinite(d.energy_compute_j) && d.energy_compute_j != 0) || (std::isfinite(d.energy_idle_j) && d.energy_idle_j != 0) ||
           (std::isfinite(d.energy_radio_j) && d.energy_radio_j != 0);
  });
}

// Energy per device split into compute, idle and radio (written one device at a time).
void write_energy(JsonOut& w, const RunResults& r) {
  std::unordered_map<std::string, long long> completed;
  for (const auto& m : r.summary) completed[m.id] = m.delivered;  // per inference delivered in the window
  const auto delivered = [&completed](const std::string& id) {
    const auto it = completed.find(id);
    return it == completed.end() ? 0LL : it->second;
  };
  double tc = 0, ti = 0, tr = 0;
  long long tn = 0;
  const auto split = [](double c, double i, double rr, long long n) {
    nlohmann::ordered_json one = {{"compute_j", number(c)}, {"idle_j", number(i)}, {"radio_j", number(rr)}};
    const double k = n > 0 ? static_cast<double>(n) : NAN;
    one["per_inference_j"] = {{"compute", number(c / k)}, {"idle", number(i / k)}, {"radio", number(rr / k)}};
    return one;
  };
  for (const auto& d : r.devices) {  // the total first: it comes before the devices
    tc += d.energy_compute_j;
    ti += d.energy_idle_j;
    tr += d.energy_radio_j;
    tn += delivered(d.id);
  }
  w.key("energy");
  w.begin_object();
  w.member("note",
           "per device over the measurement window: compute = what computing adds above idle power, idle = idle power all "
           "along, radio = flat J/MB or by power states (active, tail, promotion, idle; scenarios/README.md \"Energy\"); "
           "per inference over the results delivered in the window; on a real testbed compute is the whole board as metered and idle is null");
  w.member("total", split(tc, ti, tr, tn));
  w.key("devices");
  w.begin_object();
  for (const auto& d : r.devices) {
    nlohmann::ordered_json one = split(d.energy_compute_j, d.energy_idle_j, d.energy_radio_j, delivered(d.id));
    if (d.radio_states)
      one["radio"] = {{"active_j", number(d.radio.active_j)}, {"tail_j", number(d.radio.tail_j)},     {"promotion_j", number(d.radio.promotion_j)},
                      {"idle_j", number(d.radio.idle_j)},     {"active_s", number(d.radio.active_s)}, {"tail_s", number(d.radio.tail_s)}};
    w.member(d.id, one);
  }
  w.end_object();
  w.end_object();
}

void write_summary(std::ostream& out, const RunResults& r) {
  JsonOut w(out);
  w.begin_object();
  nlohmann::ordered_json j = head_members(r);
  // What is in `j` so far goes out; the sections with a member per device are written one device at a time.
  const auto flush = [&] {
    for (const auto& [k, v] : j.items()) w.member(k, v);
    j = nlohmann::ordered_json();
  };
  flush();
  write_hardware(w, r);
  if (auto servers = servers_member(r); !servers.is_null()) j["servers"] = std::move(servers);
  if (auto handovers = handovers_member(r); !handovers.is_null()) j["handovers"] = std::move(handovers);
  if (energy_stated(r)) {
    flush();
    write_energy(w, r);
  }
  j["note"] =
      "measurement window warmup_s..duration_s (core/metrics.hpp): throughput_rps = results delivered inside the window per second; "
      "throughput_incl_drain_rps = requests created in the window that completed, drain included, per second; offered_rps = "
      "requests created in the window per second; latency, completed, failed and SLO attainment over requests created in the "
      "window (drain included); energy over the window, per inference over the results delivered in it; saturated = the "
      "backlog (created, not yet ended) grew over the window by >= 10 % of its arrivals and >= 10 requests (saturation: the evidence)";
  for (const auto& m : r.summary)
    if (m.id == "total") j["total"] = metrics(m);
  flush();
  w.key("devices");
  w.begin_object();
  for (const auto& m : r.summary)
    if (m.id != "total") w.member(m.id, metrics(m));
  w.end_object();
  w.end_object();
  out << "\n";
}

}  // namespace

std::string summary_json_text(const RunResults& r) {
  std::ostringstream out;
  write_summary(out, r);
  return out.str();
}

void write_summary_json(const std::string& path, const RunResults& r) {
  write_stream_atomic(path, [&r](std::ostream& out) { write_summary(out, r); });
}

std::string timing_json_text(const RunResults& r) {
  nlohmann::ordered_json j;
  j["note"] = "wall-clock measurements of this run; they differ between runs (not part of the deterministic results)";
  j["engine_wall_s"] = r.engine_wall_s;
  j["decisions"] = nlohmann::ordered_json::array();
  for (const auto& d : r.decisions) j["decisions"].push_back({{"t_s", d.t_s}, {"trigger", d.trigger}, {"wall_s", d.wall_s}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace coinfer
