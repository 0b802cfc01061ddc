#include "io/scenario_loader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include "core/log.hpp"
#include "core/model_key.hpp"
#include "core/scenario_checks.hpp"
#include "core/server_failures.hpp"
#include "core/limits.hpp"
#include "io/data_root.hpp"
#include "io/device_population.hpp"
#include "io/device_profile_loader.hpp"
#include "core/text_util.hpp"
#include "io/csv.hpp"
#include "io/input_file.hpp"
#include "io/yaml_util.hpp"

namespace fs = std::filesystem;

namespace coinfer {

std::string resolve_scenario_path(const std::string& scenario_file, const std::string& path) {
  // symlink_status: a dangling link or a link loop still "exists" here; reading it then names the problem.
  std::error_code ec;
  auto exists = [&ec](const fs::path& p) { return fs::exists(fs::symlink_status(p, ec)); };
  auto absolute = [&ec](const fs::path& p) { return fs::absolute(p, ec).lexically_normal().string(); };
  if (path.empty()) return "";
  if (fs::path(path).is_absolute()) return exists(path) ? fs::path(path).lexically_normal().string() : "";
  std::vector<fs::path> candidates;
  fs::path dir = fs::absolute(scenario_file, ec).parent_path();
  for (int up = 0; up < 5 && !dir.empty(); ++up) {
    candidates.push_back(dir / path);
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  for (const DataRoot& r : data_root_candidates()) candidates.push_back(fs::path(r.path) / path);
  const fs::path in_cwd = fs::current_path(ec) / path;
  candidates.push_back(in_cwd);
  for (const fs::path& c : candidates) {
    if (!exists(c)) continue;
    const std::string chosen = absolute(c);
    if (exists(in_cwd) && !fs::equivalent(c, in_cwd, ec)) {
      static std::set<std::string> warned;
      if (warned.insert(path).second)
        log::warn("scenario", "'" + path + "' in " + scenario_file + " resolves to " + chosen +
                                  " (from the scenario's folder); the working directory also has " + absolute(in_cwd) +
                                  ", which is not used. Give an absolute path to choose.");
    }
    return chosen;
  }
  return "";
}

namespace {

bool parse_number(const std::string& t, double& out) {
  try {
    size_t used = 0;
    out = std::stod(t, &used);
    return used == t.size() && std::isfinite(out);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::vector<BandwidthPoint> load_bandwidth_trace(const std::string& file) {
  std::vector<BandwidthPoint> out;
  int no = 0;
  for (const CsvRecord& rec : parse_csv(read_input_file(file, "bandwidth trace"), file)) {
    no = rec.line;
    const auto& f = rec.fields;
    if (f.size() == 2 && f[0] == "time_s" && f[1] == "bandwidth_mbps") continue;
    BandwidthPoint p;
    if (f.size() != 2)
      throw InputError(SourceLocation{file, no, 1}, "",
                       "expected two fields 'time_s,bandwidth_mbps' (a header of those names, or two numbers), got " + std::to_string(f.size()) +
                           ": '" + printable(join(f, ","), 80) + "'");
    // A data row with a bad value names its column ("5,abc" read as a bad header).
    if (!parse_number(f[0], p.t_s))
      throw InputError(SourceLocation{file, no, 1}, "time_s",
                       "'" + printable(f[0], 40) + "' is not a number (column 1 of '" + printable(join(f, ","), 80) + "')");
    if (!parse_number(f[1], p.mbps))
      throw InputError(SourceLocation{file, no, 2}, "bandwidth_mbps",
                       "'" + printable(f[1], 40) + "' is not a number (column 2 of '" + printable(join(f, ","), 80) + "')");
    if (p.t_s < 0) throw InputError(SourceLocation{file, no, 1}, "time_s", "must be >= 0");
    if (!(p.mbps > 0)) throw InputError(SourceLocation{file, no, 1}, "bandwidth_mbps", "must be > 0");
    if (p.mbps > limits::kMaxBandwidthMbps)
      throw InputError(SourceLocation{file, no, 1}, "bandwidth_mbps",
                       "value " + format_double(p.mbps) + " must be <= " + format_double(limits::kMaxBandwidthMbps) + " (1 Tbit/s)");
    if (!out.empty() && p.t_s < out.back().t_s) throw InputError(SourceLocation{file, no, 1}, "time_s", "times must not decrease");
    if (out.size() >= limits::kMaxTraceRows)
      throw InputError(SourceLocation{file, no, 1}, "", "more than " + std::to_string(limits::kMaxTraceRows) + " rows (the bound of a trace file)");
    out.push_back(p);
  }
  if (out.empty()) throw InputError(SourceLocation{file, 0, 0}, "", "bandwidth trace has no data rows");
  return out;
}

std::vector<PositionPoint> load_position_trace(const std::string& file) {
  std::vector<PositionPoint> out;
  for (const CsvRecord& rec : parse_csv(read_input_file(file, "mobility trace"), file)) {
    const int no = rec.line;
    const auto& f = rec.fields;
    if (f.size() == 3 && f[0] == "t_s" && f[1] == "x_m" && f[2] == "y_m") continue;
    PositionPoint p;
    if (f.size() != 3 || !parse_number(f[0], p.t_s) || !parse_number(f[1], p.x_m) || !parse_number(f[2], p.y_m))
      throw InputError(SourceLocation{file, no, 1}, "", "expected 't_s,x_m,y_m', got '" + printable(join(f, ","), 80) + "'");
    if (p.t_s < 0) throw InputError(SourceLocation{file, no, 1}, "t_s", "must be >= 0");
    if (std::fabs(p.x_m) > 1e7 || std::fabs(p.y_m) > 1e7) throw InputError(SourceLocation{file, no, 1}, "x_m", "positions within 1e7 m");
    if (!out.empty() && p.t_s <= out.back().t_s) throw InputError(SourceLocation{file, no, 1}, "t_s", "times must increase");
    if (out.size() >= limits::kMaxTraceRows)
      throw InputError(SourceLocation{file, no, 1}, "", "more than " + std::to_string(limits::kMaxTraceRows) + " rows (the bound of a trace file)");
    out.push_back(p);
  }
  if (out.empty()) throw InputError(SourceLocation{file, 0, 0}, "", "mobility trace has no data rows");
  return out;
}

std::vector<double> load_arrival_trace(const std::string& file) {
  std::vector<double> out;
  for (const CsvRecord& rec : parse_csv(read_input_file(file, "arrival trace"), file)) {
    const int no = rec.line;
    const auto& f = rec.fields;
    if (f.size() == 1 && f[0] == "time_s") continue;
    double t = 0;
    if (f.size() != 1 || !parse_number(f[0], t) || t < 0)
      throw InputError(SourceLocation{file, no, 1}, "", "expected an arrival time in seconds >= 0, got '" + printable(join(f, ","), 80) + "'");
    if (!out.empty() && t < out.back()) throw InputError(SourceLocation{file, no, 1}, "", "times must not decrease");
    if (out.size() >= limits::kMaxTraceRows)
      throw InputError(SourceLocation{file, no, 1}, "", "more than " + std::to_string(limits::kMaxTraceRows) + " rows (the bound of a trace file)");
    out.push_back(t);
  }
  return out;
}

namespace {

// The scenario's name becomes the default output folder results/<name>: a plain file name only.
// The data file `key` of map `n` names, resolved from the scenario's folder (InputError when none is
// found); the resolved scenario (Scenario::resolved_yaml) names the file read.
std::string read_data_file(const YamlReader& r, const YAML::Node& n, const std::string& key, const std::string& path,
                           const std::string& scenario_file) {
  const std::string given = r.get_string(n, key, path);
  const std::string resolved = resolve_scenario_path(scenario_file, given);
  if (resolved.empty()) r.fail(n[key], path + "." + key, "file '" + given + "' not found");
  YAML::Node writable = n;
  writable[key] = resolved;
  return resolved;
}

void check_scenario_name(const YamlReader& r, const YAML::Node& root, const std::string& name) {
  const YAML::Node& where = root["name"] ? root["name"] : root;
  bool plain = !name.empty() && name.size() <= limits::kMaxNameBytes && name[0] != '.';
  for (char c : name) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!plain)
    r.fail(where, "name",
           "'" + printable(name, 80) + "' is not allowed: a scenario name is 1-" + std::to_string(limits::kMaxNameBytes) +
               " letters, digits, '_', '-' or '.', not starting with '.' (it names the output folder results/<name>)");
}

// Bandwidth and latency within limits::kMaxBandwidthMbps (or `max_mbps`, named by `max_text`) and
// kMaxLatencyMs (both key paths under `path`).
void check_link_bounds(const YamlReader& r, const YAML::Node& n, const std::string& path, double bandwidth_mbps, double latency_ms,
                       double max_mbps = limits::kMaxBandwidthMbps, const std::string& max_text = "1 Tbit/s") {
  if (bandwidth_mbps > max_mbps)
    r.fail(n["bandwidth_mbps"] ? n["bandwidth_mbps"] : n, path + ".bandwidth_mbps",
           "value " + format_double(bandwidth_mbps) + " must be <= " + format_double(max_mbps) + " (" + max_text + ")");
  if (latency_ms > limits::kMaxLatencyMs)
    r.fail(n["latency_ms"] ? n["latency_ms"] : n, path + ".latency_ms",
           "value " + format_double(latency_ms) + " must be <= " + format_double(limits::kMaxLatencyMs) + " (1,000 s)");
}

LinkSpec read_link(const YamlReader& r, const YAML::Node& n, const std::string& path, const std::string& scenario_file, bool allow_trace,
                   LinkSpec fallback) {
  if (!n) return fallback;
  std::vector<std::string> keys = {"bandwidth_mbps", "latency_ms"};
  if (allow_trace) keys.push_back("trace");
  r.check_keys(n, keys, path);
  LinkSpec l = fallback;
  l.bandwidth_mbps =
      n["bandwidth_mbps"] || fallback.bandwidth_mbps <= 0 ? r.require_double(n, "bandwidth_mbps", path, 0, true) : fallback.bandwidth_mbps;
  l.latency_ms = r.get_double(n, "latency_ms", path, fallback.latency_ms, 0, false);
  check_link_bounds(r, n, path, l.bandwidth_mbps, l.latency_ms);
  if (allow_trace && n["trace"]) {
    l.trace_file = read_data_file(r, n, "trace", path, scenario_file);
    l.trace = load_bandwidth_trace(l.trace_file);
  }
  return l;
}

}  // namespace

namespace {

// A pair [min, max] of numbers >= 0 with min <= max (a single number is [x, x]).
std::pair<double, double> read_range(const YamlReader& r, const YAML::Node& map, const std::string& key, const std::string& path, double fallback,
                                     double max_value) {
  if (!map[key]) return {fallback, fallback};
  const std::vector<double> v = r.get_number_list(map, key, path, 0, max_value, 2, false);
  if (v.size() == 1) return {v[0], v[0]};
  if (v[0] > v[1]) r.fail(map[key], path + "." + key, "expected [min, max] with min <= max");
  return {v[0], v[1]};
}

constexpr double kMaxDistanceM = 1e7;  // 10,000 km: any area a device crosses

MobilitySpec read_mobility(const YamlReader& r, const YAML::Node& n) {
  const std::string path = "mobility";
  r.require_map(n, path);
  r.check_keys(n, {"access_points", "association", "handover_ms", "hysteresis_db", "mid_transfer", "step_s", "radio"}, path);
  MobilitySpec m;
  m.where = r.where(n);
  const YAML::Node& aps = n["access_points"];
  if (!aps || !aps.IsSequence() || aps.size() == 0) r.fail(aps ? aps : n, path + ".access_points", "expected a non-empty list of access points");
  if (aps.size() > 10000) r.fail(aps, path + ".access_points", "at most 10,000 access points");
  std::set<std::string> ids;
  for (size_t k = 0; k < aps.size(); ++k) {
    const YAML::Node& a = aps[k];
    const std::string ap = path + ".access_points[" + std::to_string(k) + "]";
    r.check_keys(a, {"id", "x_m", "y_m", "range_m", "tx_power_dbm", "server"}, ap);
    AccessPointPlace p;
    p.where = r.where(a);
    p.id = r.get_name(a, "id", ap);
    if (!ids.insert(p.id).second) r.fail(a["id"], ap + ".id", "duplicate access point id '" + p.id + "'");
    p.x_m = r.require_double(a, "x_m", ap, -kMaxDistanceM, false);
    p.y_m = r.require_double(a, "y_m", ap, -kMaxDistanceM, false);
    p.range_m = r.get_double(a, "range_m", ap, 100, 0, true);
    p.tx_power_dbm = r.get_double(a, "tx_power_dbm", ap, 0, -100, false);
    if (a["server"]) p.server = r.get_name(a, "server", ap);  // checked against servers when mobility is expanded
    for (const char* key : {"x_m", "y_m", "range_m"})
      if (a[key] && std::fabs(r.get_double(a, key, ap, 0, -kMaxDistanceM, false)) > kMaxDistanceM)
        r.fail(a[key], ap + "." + key, "at most " + format_double(kMaxDistanceM) + " m");
    if (p.tx_power_dbm > 100) r.fail(a["tx_power_dbm"], ap + ".tx_power_dbm", "at most 100 dBm");
    m.access_points.push_back(p);
  }
  const std::string assoc = r.get_string(n, "association", path, "nearest");
  if (assoc == "nearest")
    m.association = MobilitySpec::Association::nearest;
  else if (assoc == "strongest")
    m.association = MobilitySpec::Association::strongest;
  else
    r.fail(n["association"], path + ".association", "'" + printable(assoc, 40) + "' is not allowed (allowed: nearest, strongest)");
  m.handover_ms = r.get_double(n, "handover_ms", path, 50, 0, false);
  if (m.handover_ms > 60000) r.fail(n["handover_ms"], path + ".handover_ms", "at most 60000 (a minute)");
  m.hysteresis_db = r.get_double(n, "hysteresis_db", path, 0, 0, false);
  if (m.hysteresis_db > 100) r.fail(n["hysteresis_db"], path + ".hysteresis_db", "at most 100 dB");
  const std::string mid = r.get_string(n, "mid_transfer", path, "wait");
  if (mid == "wait")
    m.mid_transfer = MobilitySpec::MidTransfer::wait;
  else if (mid == "resend")
    m.mid_transfer = MobilitySpec::MidTransfer::resend;
  else if (mid == "fail")
    m.mid_transfer = MobilitySpec::MidTransfer::fail;
  else
    r.fail(n["mid_transfer"], path + ".mid_transfer", "'" + printable(mid, 40) + "' is not allowed (allowed: wait, resend, fail)");
  m.step_s = r.get_double(n, "step_s", path, 0.1, 0.001, false);
  if (m.step_s > 3600) r.fail(n["step_s"], path + ".step_s", "at most 3600");
  if (const YAML::Node& rd = n["radio"]) {
    const std::string rp = path + ".radio";
    r.check_keys(rd, {"bandwidth_mhz", "tx_power_dbm", "noise_dbm", "path_loss_db_at_1m", "exponent", "efficiency"}, rp);
    RadioModel& x = m.radio;
    x.bandwidth_mhz = r.get_double(rd, "bandwidth_mhz", rp, x.bandwidth_mhz, 0, true);
    x.tx_power_dbm = r.get_double(rd, "tx_power_dbm", rp, x.tx_power_dbm, -100, false);
    x.noise_dbm = r.get_double(rd, "noise_dbm", rp, x.noise_dbm, -300, false);
    x.path_loss_db_at_1m = r.get_double(rd, "path_loss_db_at_1m", rp, x.path_loss_db_at_1m, 0, false);
    x.exponent = r.get_double(rd, "exponent", rp, x.exponent, 1, false);
    x.efficiency = r.get_double(rd, "efficiency", rp, x.efficiency, 0, true);
    if (x.bandwidth_mhz > 1e5) r.fail(rd["bandwidth_mhz"], rp + ".bandwidth_mhz", "at most 100000 MHz");
    if (x.tx_power_dbm > 100) r.fail(rd["tx_power_dbm"], rp + ".tx_power_dbm", "at most 100 dBm");
    if (x.noise_dbm > 100) r.fail(rd["noise_dbm"], rp + ".noise_dbm", "at most 100 dBm");
    if (x.path_loss_db_at_1m > 300) r.fail(rd["path_loss_db_at_1m"], rp + ".path_loss_db_at_1m", "at most 300 dB");
    if (x.exponent > 10) r.fail(rd["exponent"], rp + ".exponent", "at most 10");
    if (x.efficiency > 1) r.fail(rd["efficiency"], rp + ".efficiency", "at most 1 (a share of Shannon's capacity)");
  }
  return m;
}

MovementSpec read_movement(const YamlReader& r, const YAML::Node& n, const std::string& path, const std::string& scenario_file) {
  r.require_map(n, path);
  MovementSpec m;
  m.where = r.where(n);
  if (n["trace"]) {
    r.check_keys(n, {"trace"}, path);
    m.kind = MovementSpec::Kind::trace;
    m.trace_file = read_data_file(r, n, "trace", path, scenario_file);
    m.trace = load_position_trace(m.trace_file);
  } else if (n["model"]) {
    r.check_keys(n, {"model", "area_m", "speed_mps", "pause_s"}, path);
    const std::string model = r.get_string(n, "model", path);
    if (model != "random_waypoint") r.fail(n["model"], path + ".model", "'" + printable(model, 40) + "' is not allowed (allowed: random_waypoint)");
    m.kind = MovementSpec::Kind::random_waypoint;
    const std::vector<double> area = r.get_number_list(n, "area_m", path, 0, kMaxDistanceM, 2, false);
    if (area.size() != 2 || !(area[0] > 0) || !(area[1] > 0))
      r.fail(n["area_m"] ? n["area_m"] : n, path + ".area_m", "expected [width, height] in m, both > 0");
    m.area_w_m = area[0];
    m.area_h_m = area[1];
    std::tie(m.speed_min_mps, m.speed_max_mps) = read_range(r, n, "speed_mps", path, 1, 1000);
    if (!(m.speed_min_mps > 0)) r.fail(n["speed_mps"], path + ".speed_mps", "speeds must be > 0");
    std::tie(m.pause_min_s, m.pause_max_s) = read_range(r, n, "pause_s", path, 0, 1e6);
  } else {
    r.check_keys(n, {"x_m", "y_m"}, path);
    m.kind = MovementSpec::Kind::fixed;
    m.x_m = r.require_double(n, "x_m", path, -kMaxDistanceM, false);
    m.y_m = r.require_double(n, "y_m", path, -kMaxDistanceM, false);
    for (const char* key : {"x_m", "y_m"})
      if (std::fabs(r.require_double(n, key, path, -kMaxDistanceM, false)) > kMaxDistanceM)
        r.fail(n[key], path + "." + key, "at most " + format_double(kMaxDistanceM) + " m");
  }
  return m;
}

// A --set of a device link's base bandwidth does nothing when the device's bandwidth trace or a
// bandwidth event already sets the bandwidth from t = 0: that is refused, naming what overrides it
// (a silent no-op would make a sweep over it a sweep over nothing).
void check_overrides_take_effect(const Scenario& s, const std::vector<std::string>& overrides, const std::vector<int>& entry_of_device) {
  for (const std::string& o : overrides) {
    const std::string path = o.substr(0, o.find('='));
    const std::string prefix = "devices.", suffix = ".link.bandwidth_mbps";
    if (path.size() <= prefix.size() + suffix.size() || path.compare(0, prefix.size(), prefix) != 0 ||
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string entry = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    std::vector<std::string> ineffective;  // "device 'ID': why"
    size_t matched = 0;
    for (size_t i = 0; i < s.devices.size(); ++i) {
      if (entry != "*" && entry != std::to_string(entry_of_device[i])) continue;
      ++matched;
      const DeviceSpec& d = s.devices[i];
      std::string by;
      // A moving device's schedule comes from its positions, and bandwidth_mbps is its radio's cap
      // (core/mobility.hpp): the --set takes effect.
      if (d.movement.kind == MovementSpec::Kind::none && !d.link.trace.empty() && d.link.trace.front().t_s <= 0)
        by = "its link trace " + d.link.trace_file + " sets the bandwidth from t = 0 s (edit the trace, or --set devices." +
             std::to_string(entry_of_device[i]) + ".link.trace=OTHER.csv)";
      for (const auto& e : s.events)
        if (by.empty() && e.of_device<event::Bandwidth>(d.id) && e.at_s <= 0)
          by = "a bandwidth event at 0 s sets it (events, line " + std::to_string(e.where.line) + ")";
      if (!by.empty()) ineffective.push_back("device '" + d.id + "': " + by);
    }
    if (ineffective.empty()) continue;
    // Ineffective for every device it names: an error. For some of a wildcard's devices: a warning
    // naming them (the others do change).
    if (ineffective.size() == matched) throw InputError(SourceLocation{"--set", 0, 0}, path, "has no effect on " + join(ineffective, "; "));
    // One warning for all of them, once per process (a sweep loads every point's scenario: one warning
    // per point and device would print 243 copies in an 81-point sweep).
    static std::set<std::string> warned;
    const std::string text = "--set " + path + " has no effect on " + std::to_string(ineffective.size()) + " of its " + std::to_string(matched) +
                             " devices: " + join(ineffective, "; ");
    if (warned.insert(text).second) log::warn("scenario", text);
  }
}

}  // namespace

namespace {
// The type profile's power for processor `name`, null where the profile states none.
const ProcessorProfile* stated_power(const std::map<std::string, DeviceProfile>& profiles, const std::string& type, const std::string& name) {
  const auto prof = profiles.find(type);
  if (prof == profiles.end()) return nullptr;
  for (const ProcessorProfile& p : prof->second.processors)
    if (p.name == name && !p.power_source.empty()) return &p;
  return nullptr;
}

// devices[].power.processors: {NAME: {idle_w, busy_w}} for processors of the device's hardware; a
// processor not given takes its profile's stated power, else the entry is refused (a processor's
// energy silently 0 would make a placement on it look free). Hardware order.
std::vector<PowerSpec::Processor> read_processor_power(const YamlReader& r, const YAML::Node& n, const std::string& path, const DeviceSpec& d,
                                                       const std::map<std::string, DeviceProfile>& profiles, const std::string& hardware_file) {
  r.require_map(n, path);
  if (!d.hardware)
    r.fail(n, path,
           "device type '" + d.type + "' has no processors described (" +
               (hardware_file.empty() ? std::string("no hardware profiles found") : hardware_file + " does not list the type") +
               "); give power.busy_w instead");
  std::map<std::string, PowerSpec::Processor> given;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) r.fail(it->first, path, "a key must be a processor name");
    const std::string name = it->first.as<std::string>();
    const std::string kp = path + "." + printable(name, 80);
    if (d.hardware->slot(name) < 0)
      r.fail(it->first, kp, "device type '" + d.type + "' has no processor '" + printable(name, 80) + "' (it has: " + d.hardware->describe() + ")");
    r.require_map(it->second, kp);
    r.check_keys(it->second, {"idle_w", "busy_w"}, kp);
    PowerSpec::Processor pw{name, 0, 0};
    pw.idle_w = r.get_double(it->second, "idle_w", kp, 0, 0, false);
    pw.busy_w = r.require_double(it->second, "busy_w", kp, pw.idle_w, false);
    given[name] = pw;
  }
  std::vector<PowerSpec::Processor> out;
  for (const std::string& name : d.hardware->processors) {
    if (auto g = given.find(name); g != given.end()) {
      out.push_back(g->second);
    } else if (const ProcessorProfile* p = stated_power(profiles, d.type, name)) {
      out.push_back({name, p->idle_w, p->busy_w});
    } else {
      r.fail(n, path,
             "no power for processor '" + name + "' of device type '" + d.type + "' (give " + path + "." + name + ": {idle_w, busy_w}; " +
                 (hardware_file.empty() ? std::string("no profile") : hardware_file) + " states none for it)");
    }
  }
  return out;
}

// Without devices[].power: each processor's power from the type's profile when it states every one
// (traces/devices.yaml processors.P.power), else none (energy 0, as before processors had power).
// A device that states no power of its own takes its type profile's board power, where stated.
void board_power_of_profile(DeviceSpec& d, const std::map<std::string, DeviceProfile>& profiles) {
  const auto prof = profiles.find(d.type);
  if (prof == profiles.end()) return;
  const DeviceProfile::BoardPower& b = prof->second.board_power;
  if (b.idle_w == 0 && b.busy_w == 0) return;
  d.power.idle_w = b.idle_w;
  d.power.busy_w = b.busy_w;
  d.power.source = "traces profile " + d.type + ": " + b.source;
}

std::vector<PowerSpec::Processor> profile_processor_power(const DeviceSpec& d, const std::map<std::string, DeviceProfile>& profiles) {
  std::vector<PowerSpec::Processor> out;
  if (!d.hardware) return out;
  for (const std::string& name : d.hardware->processors) {
    const ProcessorProfile* p = stated_power(profiles, d.type, name);
    if (!p) return {};
    out.push_back({name, p->idle_w, p->busy_w});
  }
  return out;
}

// A device's model and its execution variant (core/model_variant.hpp) as one canonical model name:
// `model: gcn` with `variant: int8`, `variant: {precision: int8, aggregation: dense_mask}` or
// `model: gcn@int8`. Whether the model supports the variant is checked against the catalog later.
std::string read_model_with_variant(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  const std::string model = r.get_name(n, "model", path);
  auto [base, inline_variant] = split_variant_name(model);
  const YAML::Node v = n["variant"];
  if (!v) {
    if (model.find('@') == std::string::npos) return model;
    try {
      return variant_model_name(base, ModelVariant::parse(inline_variant));
    } catch (const std::invalid_argument& ex) {
      r.fail(n["model"], path + ".model", ex.what());
    }
  }
  const std::string vpath = path + ".variant";
  if (model.find('@') != std::string::npos) r.fail(v, vpath, "the model name already carries a variant ('" + model + "'); give it once");
  ModelVariant variant;
  if (v.IsScalar()) {
    try {
      variant = ModelVariant::parse(r.get_string(n, "variant", path));
    } catch (const std::invalid_argument& ex) {
      r.fail(v, vpath, ex.what());
    }
  } else if (v.IsMap()) {
    r.check_keys(v, {"aggregation", "node_capacity", "normalisation", "masking", "sparsity", "precision", "approximations", "feature_chunks"}, vpath);
    auto pick = [&](const std::string& key, const std::vector<std::string>& allowed) -> std::string {
      if (!v[key]) return allowed.front();
      const std::string value = r.get_string(v, key, vpath);
      if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
        r.fail(v[key], vpath + "." + key, "'" + value + "' is not one of: " + join(allowed));
      return value;
    };
    if (pick("aggregation", {"sparse", "dense_mask"}) == "dense_mask") variant.aggregation = ModelVariant::Aggregation::dense_mask;
    const std::string normalisation = pick("normalisation", {"cached", "symmetric", "uncached"});
    if (normalisation == "symmetric") variant.normalisation = ModelVariant::Normalisation::symmetric;
    if (normalisation == "uncached") variant.normalisation = ModelVariant::Normalisation::uncached;
    variant.select_mask = pick("masking", {"multiply", "select"}) == "select";
    variant.grasp = pick("sparsity", {"none", "bitmap"}) == "bitmap";
    if (pick("precision", {"fp32", "int8"}) == "int8") variant.precision = ModelVariant::Precision::int8;
    variant.node_capacity = r.get_int(v, "node_capacity", vpath, 0, 1, kMaxNodeCapacity, "nodes per sample a variant is padded to");
    variant.feature_chunks =
        static_cast<int>(r.get_int(v, "feature_chunks", vpath, 1, 1, kMaxFeatureChunks, "slices of the feature dimension (feature decomposition)"));
    for (const auto& a : r.get_string_list(v, "approximations", vpath)) {
      if (a == "grax1")
        variant.grax1 = true;
      else if (a == "grax2")
        variant.grax2 = true;
      else
        r.fail(v["approximations"], vpath + ".approximations", "'" + a + "' is not one of: grax1, grax2");
    }
  } else {
    r.fail(v, vpath, "expected a variant name (e.g. dense_mask+int8) or a mapping");
  }
  return variant_model_name(base, variant);
}
}  // namespace

namespace {

// The run's top-level settings: name, seed, duration, warm-up, drain, network model, service time,
// luts_fill.
void read_run_settings(const YamlReader& r, const YAML::Node& root, Scenario& s, const std::string& file) {
  s.name = r.get_string(root, "name", "", fs::path(file).stem().string());
  check_scenario_name(r, root, s.name);
  s.seed = static_cast<unsigned long long>(r.get_int(root, "seed", "", 1, 0));
  s.duration_s = r.get_double(root, "duration_s", "", 60, 0, true);
  if (s.duration_s > limits::kMaxDurationS)
    r.fail(root["duration_s"], "duration_s", "value " + format_double(s.duration_s) + " must be <= " + format_double(limits::kMaxDurationS));
  s.warmup_s = r.get_double(root, "warmup_s", "", 0, 0, false);
  if (s.warmup_s >= s.duration_s) r.fail(root["warmup_s"], "warmup_s", "must be smaller than duration_s");
  s.drain_s = r.get_double(root, "drain_s", "", 30, 0, false);
  s.network_model = r.get_string(root, "network_model", "", "cm02");
  if (s.network_model != "cm02" && s.network_model != "lv08")
    r.fail(root["network_model"], "network_model", "'" + s.network_model + "' is not allowed; allowed: cm02, lv08");
  {
    const std::string st = r.get_string(root, "service_time", "", "sampled");
    if (st == "mean")
      s.service_time = Scenario::ServiceTime::mean;
    else if (st == "sampled")
      s.service_time = Scenario::ServiceTime::sampled;
    else
      r.fail(root["service_time"], "service_time", "'" + st + "' is not allowed; allowed: sampled, mean");
  }
  {
    const std::string lf = r.get_string(root, "luts_fill", "", "refuse");
    if (lf == "allow")
      s.luts_fill = Scenario::LutsFill::allow;
    else if (lf != "refuse")
      r.fail(root["luts_fill"], "luts_fill", "'" + lf + "' is not allowed; allowed: refuse, allow");
  }
}

// luts: each path resolved from the scenario's folder (the resolved scenario lists the resolved paths).
void read_luts(const YamlReader& r, YAML::Node& root, Scenario& s, const std::string& file) {
  s.luts_where = r.where(root["luts"] ? root["luts"] : root);
  for (const auto& l : r.get_string_list(root, "luts", "")) {
    std::string resolved = resolve_scenario_path(file, l);
    if (resolved.empty())
      r.fail(root["luts"], "luts",
             "'" + l +
                 "' not found (relative paths are tried from the scenario's folder upwards, then the data roots: --root, the working "
                 "directory's project, the installed data, the source tree; then the working directory)");
    s.luts.push_back(resolved);
  }
  if (s.luts.empty()) r.fail(root, "luts", "missing required key (a list of LUT files or folders)");
  root["luts"] = s.luts;
}

// The device types' hardware (traces/devices.yaml unless `hardware` names another file): a type it
// lists gets its processors, memory and interconnect (core/device_hardware.hpp); a type it does not
// list is one processor with no memory limit.
struct HardwareProfiles {
  std::map<std::string, DeviceProfile> profiles;
  std::map<std::string, RadioStates> radios;  // the file's `radios:` (devices[].power.radio names one)
};

HardwareProfiles read_hardware(const YamlReader& r, YAML::Node& root, Scenario& s, const std::string& file) {
  HardwareProfiles h;
  {
    const std::string given = r.get_string(root, "hardware", "", "");
    const std::string resolved = resolve_scenario_path(file, given.empty() ? "traces/devices.yaml" : given);
    if (resolved.empty() && !given.empty()) r.fail(root["hardware"], "hardware", "'" + given + "' not found (relative paths are tried as for luts)");
    if (!resolved.empty()) {
      try {
        HardwareFile hardware = load_hardware_file(resolved);
        h.profiles = std::move(hardware.profiles);
        h.radios = std::move(hardware.radios);
      } catch (const InputError& e) {
        if (!given.empty()) throw;
        log::warn("scenario", std::string("ignoring the default hardware profiles: ") + e.what());
      }
      if (!given.empty()) root["hardware"] = resolved;
      s.hardware_file = resolved;
    }
  }
  return h;
}

// servers[].batch: a fixed window and size, or SparOA's dynamic batching.
void read_server_batch(const YamlReader& r, const YAML::Node& b, const std::string& path, ServerSpec& sv) {
  const std::vector<std::string> dynamic_keys = {"real_time_ms", "memory_gb", "sparsity_threshold", "learning_rate"};
  std::vector<std::string> keys = {"window_ms", "max_size", "policy"};
  keys.insert(keys.end(), dynamic_keys.begin(), dynamic_keys.end());
  r.check_keys(b, keys, path + ".batch");
  sv.batch.window_ms = r.get_double(b, "window_ms", path + ".batch", 0, 0, false);
  sv.batch.max_size = static_cast<int>(r.get_int(b, "max_size", path + ".batch", 1, 1, limits::kMaxBatch, "the largest batch a LUT file can hold"));
  // SparOA's dynamic batching (core/dynamic_batching.hpp): each batch group's size by Alg. 2.
  const std::string policy = r.get_string(b, "policy", path + ".batch", "fixed");
  if (policy == "sparoa") {
    DynamicBatchingParams d;
    if (b["real_time_ms"]) d.real_time_s = r.get_double(b, "real_time_ms", path + ".batch", 0, 0, true) * 1e-3;
    if (b["memory_gb"]) d.memory_bytes = r.get_double(b, "memory_gb", path + ".batch", 0, 0, true) * 1e9;
    if (b["sparsity_threshold"]) {
      d.sparsity_threshold = r.get_double(b, "sparsity_threshold", path + ".batch", 0, 0, false);
      if (d.sparsity_threshold > 1) r.fail(b["sparsity_threshold"], path + ".batch.sparsity_threshold", "a fraction of zeros, 0..1");
    }
    d.learning_rate = r.get_double(b, "learning_rate", path + ".batch", d.learning_rate, 0, false);
    if (d.learning_rate > 1e6) r.fail(b["learning_rate"], path + ".batch.learning_rate", "at most 1e6");
    sv.dynamic_batching = d;
  } else if (policy != "fixed") {
    r.fail(b["policy"], path + ".batch.policy", "'" + policy + "' is not a batching policy (fixed, sparoa)");
  } else {
    for (const auto& k : dynamic_keys)
      if (b[k]) r.fail(b[k], path + ".batch." + k, "is read only with policy: sparoa (SparOA's dynamic batching)");
  }
}

// One entry of servers[] (`s`: the servers read before it, for duplicate ids).
ServerSpec read_server(const YamlReader& r, const YAML::Node& n, const std::string& path, const Scenario& s, const std::string& file,
                       const std::map<std::string, DeviceProfile>& profiles) {
  r.check_keys(n, {"id", "type", "workers", "cores", "batch", "link", "power", "failures", "cloud"}, path);
  ServerSpec sv;
  sv.where = r.where(n);
  sv.id = r.get_name(n, "id", path);
  if (s.server_index(sv.id) >= 0) r.fail(n["id"], path + ".id", "duplicate server id '" + sv.id + "'");
  sv.type = r.get_name(n, "type", path);
  sv.workers = static_cast<int>(
      r.get_int(n, "workers", path, 1, 1, limits::kMaxWorkers, "each worker is a simulated actor; no edge server runs more concurrent batches"));
  sv.cores = static_cast<int>(r.get_int(n, "cores", path, 0, 0, limits::kMaxCores));
  if (n["batch"]) read_server_batch(r, n["batch"], path, sv);
  sv.link = read_link(r, n["link"], path + ".link", file, true, sv.link);  // a trace: e.g. a cloud's WAN
  if (n["power"]) {
    const YAML::Node& p = n["power"];
    r.check_keys(p, {"idle_w", "busy_w"}, path + ".power");
    sv.idle_w = r.get_double(p, "idle_w", path + ".power", 0, 0, false);
    sv.busy_w = r.get_double(p, "busy_w", path + ".power", sv.idle_w, sv.idle_w, false);
    sv.power_source = "scenario";
  } else if (const auto prof = profiles.find(sv.type);
             prof != profiles.end() && (prof->second.board_power.idle_w > 0 || prof->second.board_power.busy_w > 0)) {
    // The type profile's board power, where it states one (traces/devices.yaml board_power).
    sv.idle_w = prof->second.board_power.idle_w;
    sv.busy_w = prof->second.board_power.busy_w;
    sv.power_source = "traces profile " + sv.type + ": " + prof->second.board_power.source;
  }
  if (n["failures"]) {  // a failure model (core/server_failures.hpp), expanded after the events
    const YAML::Node& f = n["failures"];
    r.check_keys(f, {"mtbf_s", "mttr_s"}, path + ".failures");
    ServerSpec::FailureModel m;
    m.mtbf_s = r.require_double(f, "mtbf_s", path + ".failures", 0, true);
    m.mttr_s = r.require_double(f, "mttr_s", path + ".failures", 0, true);
    for (const auto& [k, v] : {std::pair<const char*, double>{"mtbf_s", m.mtbf_s}, {"mttr_s", m.mttr_s}})
      if (v > 1e9) r.fail(f[k], path + ".failures." + k, "at most 1e9 s");
    sv.failures = m;
  }
  if (n["cloud"]) sv.cloud = r.get_name(n, "cloud", path);
  return sv;
}

void read_servers(const YamlReader& r, const YAML::Node& root, Scenario& s, const std::string& file,
                  const std::map<std::string, DeviceProfile>& profiles) {
  YAML::Node servers = root["servers"];
  if (!servers || !servers.IsSequence() || servers.size() == 0) r.fail(servers ? servers : root, "servers", "expected a non-empty list of servers");
  for (size_t i = 0; i < servers.size(); ++i)
    s.servers.push_back(read_server(r, servers[i], "servers[" + std::to_string(i) + "]", s, file, profiles));
  // Clouds name servers of the list (any order), never themselves, and a cloud has none of its own.
  for (size_t i = 0; i < servers.size(); ++i) {
    const ServerSpec& sv = s.servers[i];
    if (sv.cloud.empty()) continue;
    const std::string key = "servers[" + std::to_string(i) + "].cloud";
    const int j = s.server_index(sv.cloud);
    if (j < 0) {
      std::vector<std::string> ids;
      for (const auto& x : s.servers) ids.push_back(x.id);
      r.fail(servers[i]["cloud"], key, "unknown server '" + sv.cloud + "' (servers: " + join(ids) + ")");
    }
    if (static_cast<size_t>(j) == i) r.fail(servers[i]["cloud"], key, "a server cannot be its own cloud");
    if (!s.servers[static_cast<size_t>(j)].cloud.empty())
      r.fail(servers[i]["cloud"], key,
             "server '" + sv.cloud + "' has a cloud of its own (" + s.servers[static_cast<size_t>(j)].cloud +
                 "); three tiers at most: device, edge, cloud");
  }
}

void read_access_point(const YamlReader& r, const YAML::Node& ap, Scenario& s) {
  r.check_keys(ap, {"bandwidth_mbps", "latency_ms"}, "access_point");
  s.access_point.bandwidth_mbps = r.get_double(ap, "bandwidth_mbps", "access_point", 1000, 0, true);
  s.access_point.latency_ms = r.get_double(ap, "latency_ms", "access_point", 0, 0, false);
  check_link_bounds(r, ap, "access_point", s.access_point.bandwidth_mbps, s.access_point.latency_ms, limits::kMaxAccessPointMbps,
                    "every device link at its 1 Tbit/s bound, up and down, for a million devices");
}

// devices[].workload: how its inputs arrive, their deadline and priority.
WorkloadSpec read_workload(const YamlReader& r, const YAML::Node& w, const std::string& wp, const std::string& file) {
  WorkloadSpec wl;
  r.check_keys(w, {"arrival", "rate_per_s", "file", "in_flight", "deadline_ms", "drop_late", "priority"}, wp);
  wl.priority = static_cast<int>(r.get_int(w, "priority", wp, 0, -1000, 1000));
  wl.deadline_ms = r.get_double(w, "deadline_ms", wp, 0, 0, false);
  if (wl.deadline_ms > 86400e3)
    r.fail(w["deadline_ms"], wp + ".deadline_ms", "value " + format_double(wl.deadline_ms) + " must be <= 86400000 (a day)");
  wl.drop_late = r.get_bool(w, "drop_late", wp, false);
  if (wl.drop_late && !(wl.deadline_ms > 0))
    r.fail(w["drop_late"], wp + ".drop_late", "needs workload.deadline_ms (a request is dropped when it is past its deadline)");
  const std::string arrival = r.get_string(w, "arrival", wp, "closed_loop");
  if (arrival == "closed_loop") {
    wl.arrival = WorkloadSpec::Arrival::closed_loop;
    wl.in_flight = static_cast<int>(r.get_int(w, "in_flight", wp, 0, 1, limits::kMaxInFlight));
  } else if (arrival == "poisson") {
    wl.arrival = WorkloadSpec::Arrival::poisson;
    wl.rate_per_s = r.require_double(w, "rate_per_s", wp, 0, true);
    if (wl.rate_per_s > limits::kMaxRatePerS)
      r.fail(w["rate_per_s"], wp + ".rate_per_s", "value " + format_double(wl.rate_per_s) + " must be <= " + format_double(limits::kMaxRatePerS));
  } else if (arrival == "none") {
    wl.arrival = WorkloadSpec::Arrival::none;
  } else if (arrival == "trace") {
    wl.arrival = WorkloadSpec::Arrival::trace;
    wl.file = read_data_file(r, w, "file", wp, file);
    wl.arrival_times_s = load_arrival_trace(wl.file);
  } else {
    std::string near = nearest_word(arrival, {"closed_loop", "poisson", "trace", "none"});
    r.fail(w["arrival"], wp + ".arrival",
           "'" + arrival + "' is not allowed" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
               " (allowed: closed_loop, poisson, trace, none)");
  }
  if (arrival != "closed_loop" && w["in_flight"]) r.fail(w["in_flight"], wp + ".in_flight", "only for arrival: closed_loop");
  if (arrival != "poisson" && w["rate_per_s"]) r.fail(w["rate_per_s"], wp + ".rate_per_s", "only for arrival: poisson");
  return wl;
}

// devices[].power: the scenario's figures, else its type profile's (board power, or each processor's).
void read_device_power(const YamlReader& r, const YAML::Node& n, const std::string& path, const Scenario& s, const HardwareProfiles& hw,
                       DeviceSpec& d) {
  if (n["power"]) {
    const YAML::Node& p = n["power"];
    const std::string pp = path + ".power";
    r.check_keys(p, {"idle_w", "busy_w", "radio_j_per_mb", "radio", "processors"}, pp);
    if (p["idle_w"] || p["busy_w"]) {
      d.power.idle_w = r.get_double(p, "idle_w", pp, 0, 0, false);
      d.power.busy_w = r.get_double(p, "busy_w", pp, d.power.idle_w, d.power.idle_w, false);
      d.power.source = "scenario";
    } else if (!p["processors"]) {
      board_power_of_profile(d, hw.profiles);
    }
    d.power.radio_j_per_mb = r.get_double(p, "radio_j_per_mb", pp, 0, 0, false);
    if (p["radio"]) {
      if (p["radio_j_per_mb"]) r.fail(p["radio"], pp + ".radio", "give either radio (power states) or radio_j_per_mb (a flat rate), not both");
      const YAML::Node& rn = p["radio"];
      if (rn.IsMap()) {
        d.power.radio = read_radio_states(r, rn, pp + ".radio", false);
      } else {
        const std::string name = r.get_name(p, "radio", pp);
        const auto it = hw.radios.find(name);
        if (it == hw.radios.end()) {
          std::vector<std::string> names;
          for (const auto& [k, v] : hw.radios) names.push_back(k);
          const std::string near = nearest_word(name, names);
          r.fail(rn, pp + ".radio",
                 "no radio '" + name + "' in " + (s.hardware_file.empty() ? std::string("the hardware hw.profiles (none found)") : s.hardware_file) +
                     (near.empty() ? "" : "; did you mean '" + near + "'?") +
                     " (known: " + (names.empty() ? std::string("none") : join(names, ", ")) + "; or state {base_w, up_w_per_mbps, ...} inline)");
        }
        d.power.radio = it->second;
      }
    }
    if (p["processors"]) {
      if (p["busy_w"])
        r.fail(p["busy_w"], pp + ".busy_w",
               "give either busy_w (the device's power while any processor computes) or processors (each processor's own), not both");
      d.power.processors = read_processor_power(r, p["processors"], pp + ".processors", d, hw.profiles, s.hardware_file);
    }
  } else {
    d.power.processors = profile_processor_power(d, hw.profiles);  // the profile's, where it states every processor's
    if (d.power.processors.empty()) board_power_of_profile(d, hw.profiles);
  }
}

// One entry of devices[] as one device (read_devices makes its `count` copies); its id and count are
// read by the caller.
DeviceSpec read_device(const YamlReader& r, const YAML::Node& n, const std::string& path, const Scenario& s, const std::string& file,
                       const HardwareProfiles& hw) {
  const auto& profiles = hw.profiles;
  DeviceSpec d;
  d.where = r.where(n);
  d.type = r.get_name(n, "type", path);
  if (n["processor"]) d.processor = r.get_name(n, "processor", path);
  {
    const double memory_gb = r.get_double(n, "memory_gb", path, 0, 0, false);
    if (memory_gb > limits::kMaxMemoryGb)
      r.fail(n["memory_gb"], path + ".memory_gb", "value " + format_double(memory_gb) + " must be <= " + format_double(limits::kMaxMemoryGb));
    const auto prof = profiles.find(d.type);
    try {
      if (prof != profiles.end())
        d.hardware = std::make_shared<const DeviceHardware>(hardware_from_profile(prof->second, d.processor, memory_gb * 1e9));
      else if (memory_gb > 0)
        d.hardware = std::make_shared<const DeviceHardware>(single_processor_hardware(d.processor, memory_gb * 1e9));
    } catch (const std::invalid_argument& e) {
      r.fail(n["processor"], path + ".processor", std::string(e.what()) + " (" + s.hardware_file + ")");
    }
  }
  d.model = read_model_with_variant(r, n, path);
  d.dataset = r.get_name(n, "dataset", path);
  if (n["server"]) {
    d.server = r.get_string(n, "server", path);
    if (s.server_index(d.server) < 0) {
      std::vector<std::string> ids;
      for (const auto& sv : s.servers) ids.push_back(sv.id);
      r.fail(n["server"], path + ".server", "unknown server '" + d.server + "' (servers: " + join(ids) + ")");
    }
  } else if (s.servers.size() == 1) {
    d.server = s.servers[0].id;
  } else {
    r.fail(n, path + ".server", "missing required key (the scenario has several servers)");
  }
  if (!n["link"]) r.fail(n, path + ".link", "missing required key");
  d.link = read_link(r, n["link"], path + ".link", file, true, LinkSpec{0, 0, {}, {}});
  if (n["movement"]) {
    if (s.mobility.access_points.empty())
      r.fail(n["movement"], path + ".movement", "needs mobility.access_points (where the device can associate; scenarios/README.md \"Mobility\")");
    d.movement = read_movement(r, n["movement"], path + ".movement", file);
  }
  const std::string st = r.get_string(n, "strategy", path, "local");
  try {
    d.strategy = parse_strategy(st);
  } catch (const std::invalid_argument& e) {
    r.fail(n["strategy"], path + ".strategy", e.what());
  }
  if (d.strategy.has_cloud_part() && s.servers[static_cast<size_t>(s.server_index(d.server))].cloud.empty())
    r.fail(n["strategy"], path + ".strategy",
           d.strategy.to_string() + " runs [" + std::to_string(d.strategy.cloud_split) + ",n) on a cloud, but server '" + d.server +
               "' has none (servers[].cloud; scenarios/README.md \"Cloud tier\")");
  for (const std::string& name : d.strategy.placement.processors())
    if (!d.hardware || d.hardware->slot(name) < 0)
      r.fail(n["strategy"], path + ".strategy",
             "device type '" + d.type + "' has no processor '" + name + "'" +
                 (d.hardware
                      ? " (it has: " + d.hardware->describe() + "; " + s.hardware_file + ")"
                      : " (" + (s.hardware_file.empty() ? std::string("no hardware profiles found") : s.hardware_file + " does not list the type") +
                            ")"));
  // A strategy naming a variant ("pp(1)@int8") names the model the device runs: folded into it.
  if (!d.strategy.variant.empty()) {
    if (n["variant"] || d.model.find('@') != std::string::npos)
      r.fail(n["strategy"], path + ".strategy", "the device's model already names a variant ('" + d.model + "'); give it once");
    d.model = model_under(d.model, d.strategy);
    d.strategy.variant.clear();
  }
  if (n["workload"]) d.workload = read_workload(r, n["workload"], path + ".workload", file);
  read_device_power(r, n, path, s, hw, d);
  d.join_at_s = r.get_double(n, "join_at_s", path, 0, 0, false);
  return d;
}

// devices[]: every entry and its copies. Returns, per scenario device, its entry in the YAML list.
std::vector<int> read_devices(const YamlReader& r, const YAML::Node& root, Scenario& s, const std::string& file, const HardwareProfiles& hw) {
  std::vector<int> entry_of_device;            // per scenario device: its entry in the YAML list (count expands one entry)
  std::unordered_set<std::string> device_ids;  // duplicate ids found in O(1) (100,000 devices: a linear search took 9 s)
  // The servers' ids, for a device id that is also a server's: a miss of Scenario::server_index searches
  // its list linearly (1,000,000 devices x 10,000 servers: most of the 35 s of loading).
  std::unordered_set<std::string> server_ids;
  for (const ServerSpec& sv : s.servers) server_ids.insert(sv.id);
  YAML::Node devices = root["devices"];
  if (!devices || !devices.IsSequence() || devices.size() == 0) r.fail(devices ? devices : root, "devices", "expected a non-empty list of devices");
  // Room for every device at once (a million devices grown by doubling copied each DeviceSpec ~twice
  // and held two lists at the moment of each growth). A count that is not a number in range is left to
  // the reading below, which names it.
  long long total = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    const YAML::Node& e = devices[i];
    const YAML::Node c = e.IsMap() ? e["count"] : YAML::Node();  // const: a missing key is not inserted
    long long k = 1;
    if (c && c.IsScalar() && YAML::convert<long long>::decode(c, k) && k >= 1 && k <= limits::kMaxDevices)
      total += k;
    else
      total += 1;
    if (total > limits::kMaxDevices) break;
  }
  s.devices.reserve(static_cast<size_t>(std::min<long long>(total, limits::kMaxDevices)));
  entry_of_device.reserve(s.devices.capacity());
  for (size_t i = 0; i < devices.size(); ++i) {
    const YAML::Node& n = devices[i];
    const std::string path = "devices[" + std::to_string(i) + "]";
    r.check_keys(n,
                 {"id", "count", "type", "processor", "memory_gb", "model", "variant", "dataset", "server", "link", "workload", "strategy", "power",
                  "join_at_s", "movement"},
                 path);
    const std::string id = r.get_name(n, "id", path);
    const long long count = r.get_int(n, "count", path, 0, 1, limits::kMaxDevices, "devices per scenario; each takes ~7-9 KB of simulator memory");
    const int copies = count > 0 ? static_cast<int>(count) : 1;
    // A population: keys with distributions, each device drawn (io/device_population.hpp).
    std::optional<DevicePopulation> population;
    if (DevicePopulation::has_distributions(n))
      population.emplace(r, n, path, s.seed, static_cast<int>(i), [&](const YAML::Node& one) { return read_device(r, one, path, s, file, hw); });
    const DeviceSpec d = population ? DeviceSpec() : read_device(r, n, path, s, file, hw);
    if (static_cast<long long>(s.devices.size()) + copies > limits::kMaxDevices)
      r.fail(n, path + (count > 0 ? ".count" : ""),
             "the scenario would have " + std::to_string(s.devices.size() + copies) + " devices; at most " + std::to_string(limits::kMaxDevices) +
                 " (each takes ~7-9 KB of simulator memory; split a larger system into several runs)");
    for (int c = 0; c < copies; ++c) {
      DeviceSpec copy = population ? population->device(c) : d;
      copy.id = count > 0 ? id + std::to_string(c) : id;
      copy.entry = static_cast<int>(i);
      if (!device_ids.insert(copy.id).second) r.fail(n["id"], path + ".id", "duplicate device id '" + copy.id + "'");
      // Devices and servers are hosts of one platform (and names in one scheme): one name each.
      if (server_ids.count(copy.id) > 0)
        r.fail(n["id"], path + ".id",
               "device id '" + copy.id + "' is also a server's id (servers[" + std::to_string(s.server_index(copy.id)) +
                   "]); devices and servers need distinct ids");
      s.devices.push_back(std::move(copy));
      entry_of_device.push_back(static_cast<int>(i));
    }
  }
  return entry_of_device;
}

// scheduler: its name, when it decides, the decision's candidates, and its own parameters.
void read_scheduler(const YamlReader& r, const YAML::Node& sc, Scenario& s) {
  r.require_map(sc, "scheduler");
  s.scheduler.where = r.where(sc);
  s.scheduler.name = r.get_string(sc, "name", "scheduler", "static");  // scenarios/README.md: the default
  s.scheduler.period_s = r.get_double(sc, "period_s", "scheduler", 0, 0, false);
  if (s.scheduler.period_s > 0 && s.duration_s / s.scheduler.period_s > limits::kMaxPeriodicDecisions)
    r.fail(sc["period_s"], "scheduler.period_s",
           "value " + format_double(s.scheduler.period_s) + " gives " + format_double(s.duration_s / s.scheduler.period_s) +
               " periodic decisions over duration_s = " + format_double(s.duration_s) + " s; at most " +
               format_double(limits::kMaxPeriodicDecisions) + " (period_s >= " + format_double(s.duration_s / limits::kMaxPeriodicDecisions) + ")");
  s.scheduler.bandwidth_threshold_pct = r.get_double(sc, "bandwidth_threshold_pct", "scheduler", 20, 0, false);
  s.scheduler.load_threshold = r.get_double(sc, "load_threshold", "scheduler", 0.1, 0, false);
  s.scheduler.charge_decision_time = r.get_bool(sc, "charge_decision_time", "scheduler", false);
  s.scheduler.control_bytes = r.get_double(sc, "control_bytes", "scheduler", 256, 0, false);
  if (sc["max_output_error"]) {
    s.scheduler.max_output_error = r.get_double(sc, "max_output_error", "scheduler", 0, 0, false);
    if (s.scheduler.max_output_error > 1e6) r.fail(sc["max_output_error"], "scheduler.max_output_error", "at most 1e6 (a relative error)");
  }
  // Batching as a decision: candidates (at most 64 each; sizes checked against the servers below).
  s.scheduler.batch_windows_ms = r.get_number_list(sc, "batch_windows_ms", "scheduler", 0, limits::kMaxLatencyMs, 64, false);
  for (double b : r.get_number_list(sc, "batch_sizes", "scheduler", 1, static_cast<double>(limits::kMaxBatch), 64, true))
    s.scheduler.batch_sizes.push_back(static_cast<int>(b));
  if (sc["batch_sizes"]) s.scheduler.batch_sizes_where = r.where(sc["batch_sizes"]);  // checked against the servers: core/scenario_checks.hpp
  s.scheduler.choose_servers = r.get_bool(sc, "choose_servers", "scheduler", false);
  for (auto it = sc.begin(); it != sc.end(); ++it) {
    if (!it->first.IsScalar()) r.fail(it->first, "scheduler", "a key must be a plain text value");
    std::string k = it->first.as<std::string>();
    if (k == "name" || k == "period_s" || k == "bandwidth_threshold_pct" || k == "load_threshold" || k == "charge_decision_time" ||
        k == "control_bytes" || k == "max_output_error" || k == "batch_windows_ms" || k == "batch_sizes" || k == "choose_servers")
      continue;
    if (!it->second.IsScalar()) r.fail(it->second, "scheduler." + printable(k, 80), "expected a single value");
    s.scheduler.params[k] = r.get_string(sc, k, "scheduler");
  }
}

// One entry of events[]: a server's failure or recovery, or a device's bandwidth change, leave, join or
// background load (a join or leave also sets the device's join_at_s or leave_at_s).
EventSpec read_event(const YamlReader& r, const YAML::Node& n, const std::string& path, Scenario& s) {
  r.check_keys(n, {"at_s", "device", "server", "bandwidth_mbps", "leave", "join", "load", "processor", "fail", "recover"}, path);
  EventSpec e;
  e.where = r.where(n);
  e.at_s = r.require_double(n, "at_s", path, 0, false);
  if (n["server"] || n["fail"] || n["recover"]) {  // a server fails or recovers
    if (n["device"]) r.fail(n["device"], path + ".device", "a server event names a server, not a device");
    if (!n["server"]) r.fail(n, path, "fail and recover name the server: server: ID");
    const std::string server = r.get_string(n, "server", path);
    if (s.server_index(server) < 0) {
      std::vector<std::string> ids;
      for (const auto& sv : s.servers) ids.push_back(sv.id);
      const std::string near = nearest_word(server, ids);
      r.fail(n["server"], path + ".server", "unknown server '" + server + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
    const int server_kinds = (n["fail"] ? 1 : 0) + (n["recover"] ? 1 : 0);
    if (server_kinds != 1 || n["bandwidth_mbps"] || n["leave"] || n["join"] || n["load"] || n["processor"])
      r.fail(n, path, "a server event gives exactly one of fail: true, recover: true");
    const char* key = n["fail"] ? "fail" : "recover";
    if (!r.get_bool(n, key, path, false)) r.fail(n[key], path + "." + key, std::string("only '") + key + ": true' is meaningful");
    if (n["fail"])
      e.what = event::ServerFail{server};
    else
      e.what = event::ServerRecover{server};
    return e;
  }
  const std::string device = r.get_string(n, "device", path);
  int di = s.device_index(device);
  if (di < 0) {
    std::vector<std::string> ids;
    for (const auto& d : s.devices) ids.push_back(d.id);
    std::string near = nearest_word(device, ids);
    r.fail(n["device"], path + ".device", "unknown device '" + device + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  int kinds = (n["bandwidth_mbps"] ? 1 : 0) + (n["leave"] ? 1 : 0) + (n["join"] ? 1 : 0) + (n["load"] ? 1 : 0);
  if (kinds != 1) r.fail(n, path, "give exactly one of bandwidth_mbps, leave: true, join: true, load");
  if (n["processor"] && !n["load"]) r.fail(n["processor"], path + ".processor", "names the processor of a load event only");
  if (n["load"]) {  // background load (core/background_load.hpp)
    event::Load load{device};
    load.share = r.require_double(n, "load", path, 0, false);
    if (load.share > 0.99)
      r.fail(n["load"], path + ".load", "value " + format_double(load.share) + " must be <= 0.99 (the share of the processor other work takes)");
    if (n["processor"]) {
      load.processor = r.get_name(n, "processor", path);
      const DeviceSpec& d = s.devices[di];
      const bool known = d.hardware ? d.hardware->slot(load.processor) >= 0 : load.processor == d.default_processor();
      if (!known)
        r.fail(n["processor"], path + ".processor",
               "device " + d.id + " has no processor '" + load.processor + "'" + (d.hardware ? " (it has: " + d.hardware->describe() + ")" : ""));
    }
    e.what = load;
  } else if (n["bandwidth_mbps"]) {
    const double mbps = r.require_double(n, "bandwidth_mbps", path, 0, true);
    if (mbps > limits::kMaxBandwidthMbps)
      r.fail(n["bandwidth_mbps"], path + ".bandwidth_mbps",
             "value " + format_double(mbps) + " must be <= " + format_double(limits::kMaxBandwidthMbps) + " (1 Tbit/s)");
    e.what = event::Bandwidth{device, mbps};
  } else if (n["leave"]) {
    if (!r.get_bool(n, "leave", path, false)) r.fail(n["leave"], path + ".leave", "only 'leave: true' is meaningful");
    e.what = event::Leave{device};
    s.devices[di].leave_at_s = std::min(s.devices[di].leave_at_s, e.at_s);
  } else {
    if (!r.get_bool(n, "join", path, false)) r.fail(n["join"], path + ".join", "only 'join: true' is meaningful");
    e.what = event::Join{device};
    s.devices[di].join_at_s = e.at_s;
  }
  return e;
}

void read_events(const YamlReader& r, const YAML::Node& ev, Scenario& s) {
  if (!ev.IsSequence()) r.fail(ev, "events", "expected a list of events");
  if (ev.size() > limits::kMaxEvents) r.fail(ev, "events", std::to_string(ev.size()) + " events; at most " + std::to_string(limits::kMaxEvents));
  for (size_t i = 0; i < ev.size(); ++i) s.events.push_back(read_event(r, ev[i], "events[" + std::to_string(i) + "]", s));
  std::stable_sort(s.events.begin(), s.events.end(), [](const EventSpec& a, const EventSpec& b) { return a.at_s < b.at_s; });
}

}  // namespace

Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides) {
  set_scenario_hint(file);  // its project's models/ and traces/ come first (io/data_root.hpp)
  YamlReader r(file);
  YAML::Node root = r.load_file();
  if (!root.IsMap()) r.fail(root, "", "a scenario is a mapping of keys (see scenarios/README.md)");
  for (const auto& o : overrides) r.note_override(apply_override(root, o), o);
  r.check_keys(root,
               {"name", "seed", "duration_s", "warmup_s", "drain_s", "network_model", "service_time", "luts", "luts_fill", "hardware", "servers",
                "access_point", "mobility", "devices", "scheduler", "events"},
               "");
  Scenario s;
  s.file = file;
  read_run_settings(r, root, s, file);
  read_luts(r, root, s, file);
  const HardwareProfiles hw = read_hardware(r, root, s, file);
  read_servers(r, root, s, file, hw.profiles);
  if (root["access_point"]) read_access_point(r, root["access_point"], s);
  if (root["mobility"]) s.mobility = read_mobility(r, root["mobility"]);
  const std::vector<int> entry_of_device = read_devices(r, root, s, file, hw);
  if (root["scheduler"]) read_scheduler(r, root["scheduler"], s);
  if (root["events"]) read_events(r, root["events"], s);
  check_scenario(s);  // the rules across sections (core/scenario_checks.hpp)
  add_modelled_failures(s);
  expand_mobility(s);  // each moving device's link rate and handovers (core/mobility.hpp)
  check_overrides_take_effect(s, overrides, entry_of_device);
  s.overrides = overrides;
  YAML::Emitter out;
  out << root;
  s.resolved_yaml = std::string(out.c_str()) + "\n";
  s.devices.shrink_to_fit();  // read one by one: up to twice the room (~0.9 KB a device) kept for nothing
  return s;
}

void check_scenario_against(const Scenario& s, const ModelCatalog& models, const LutSet& luts, const SchedulerTraits& scheduler) {
  // The device profiles a remedy for a missing LUT points to, found only when one is missing (data_path
  // records what it resolves for the run's data files).
  DeviceProfileHint profiles;
  profiles.file = [] { return data_path("traces/devices.yaml"); };
  profiles.has_profile = [](const std::string& type) {
    try {
      return load_device_profiles(data_path("traces/devices.yaml")).count(type) > 0;
    } catch (const std::exception&) {
      return false;
    }
  };
  check_scenario_binding(s, models, luts, scheduler, profiles);
}

}  // namespace coinfer
