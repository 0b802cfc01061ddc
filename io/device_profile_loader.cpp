#include "io/device_profile_loader.hpp"

#include <cmath>
#include <deque>
#include <mutex>

#include "core/text_util.hpp"
#include "io/input_file.hpp"
#include "io/yaml_util.hpp"

namespace coinfer {

namespace {

// A processor's rates per operator class (traces/README.md "Operator classes"): every class, each with
// gbps (> 0) and optionally gflops; the launch cost and the source.
ProcessorProfile::OperatorClasses read_operator_classes(const YamlReader& r, const YAML::Node& n, const std::string& path) {
  r.require_map(n, path);
  std::vector<std::string> keys = {"launch_us", "source"};
  for (int c = 0; c < kOperatorClassCount; ++c) keys.push_back(kOperatorClassNames.name(static_cast<OperatorClass>(c)));
  r.check_keys(n, keys, path);
  ProcessorProfile::OperatorClasses oc;
  oc.launch_us = r.require_double(n, "launch_us", path, 0, false);
  oc.source = r.get_string(n, "source", path);
  for (int c = 0; c < kOperatorClassCount; ++c) {
    const std::string name = kOperatorClassNames.name(static_cast<OperatorClass>(c));
    const std::string cp = key_path(path, name);
    if (!n[name]) r.fail(n, cp, "missing: every class needs its rate (" + kOperatorClassNames.listed() + ")");
    const YAML::Node& cn = n[name];
    r.require_map(cn, cp);
    r.check_keys(cn, {"gflops", "gbps", "ns_per_row", "gbps_by_bytes"}, cp);
    oc.rates[c].gflops = r.get_double(cn, "gflops", cp, 0, 0, false);
    oc.rates[c].gbps = r.require_double(cn, "gbps", cp, 0, true);
    oc.rates[c].ns_per_row = r.get_double(cn, "ns_per_row", cp, 0, 0, false);
    if (cn["gbps_by_bytes"]) {
      // [[bytes, GB/s], ...]: increasing bytes, both > 0, at most 64 points.
      const YAML::Node& list = cn["gbps_by_bytes"];
      const std::string lp = key_path(cp, "gbps_by_bytes");
      if (!list.IsSequence() || list.size() < 1 || list.size() > 64) r.fail(list, lp, "a list of 1..64 [bytes, GB/s] pairs");
      for (std::size_t i = 0; i < list.size(); ++i) {
        const YAML::Node& pair = list[i];
        double b = 0, g = 0;
        try {
          if (!pair.IsSequence() || pair.size() != 2) throw YAML::Exception(YAML::Mark(), "");
          b = pair[0].as<double>();
          g = pair[1].as<double>();
        } catch (const YAML::Exception&) {
          r.fail(pair, lp + "[" + std::to_string(i) + "]", "a [bytes, GB/s] pair of numbers");
        }
        if (!(b > 0) || !(g > 0) || !std::isfinite(b) || !std::isfinite(g))
          r.fail(pair, lp + "[" + std::to_string(i) + "]", "bytes and GB/s must be finite and > 0");
        if (!oc.rates[c].gbps_by_bytes.empty() && b <= oc.rates[c].gbps_by_bytes.back().first)
          r.fail(pair, lp + "[" + std::to_string(i) + "]", "bytes must increase along the list");
        oc.rates[c].gbps_by_bytes.emplace_back(b, g);
      }
    }
  }
  return oc;
}

// The synthesis figures of one processor, from `n` (a `processors.NAME` entry, or an old-style
// profile's top level); `extra` are the keys the caller allows besides.
ProcessorProfile read_processor(const YamlReader& r, const YAML::Node& n, const std::string& path, const std::vector<std::string>& extra) {
  std::vector<std::string> keys = {"kind",       "cores",           "description", "peak_gflops",     "mem_gbps",  "stage_overhead_ms",
                                   "batch_half", "latency_cv",      "efficiency",  "efficiency_note", "calibrate", "efficiency_from",
                                   "power",      "operator_classes"};
  keys.insert(keys.end(), extra.begin(), extra.end());
  r.check_keys(n, keys, path);
  ProcessorProfile p;
  p.kind = r.get_string(n, "kind", path, "");
  if (!p.kind.empty() && p.kind != "cpu" && p.kind != "gpu" && p.kind != "npu") r.fail(n["kind"], key_path(path, "kind"), "allowed: cpu, gpu, npu");
  p.cores = static_cast<int>(r.get_int(n, "cores", path, 0, 0, 1 << 20, "no processor has more than 2^20 cores"));
  p.description = r.get_string(n, "description", path);
  p.peak_gflops = r.require_double(n, "peak_gflops", path, 0, true);
  p.mem_gbps = r.require_double(n, "mem_gbps", path, 0, true);
  p.stage_overhead_ms = r.get_double(n, "stage_overhead_ms", path, 0, 0, false);
  p.batch_half = r.get_double(n, "batch_half", path, 0, 0, false);
  p.latency_cv = r.get_double(n, "latency_cv", path, 0.05, 0, false);
  p.efficiency_note = r.get_string(n, "efficiency_note", path, "");
  int ways = 0;
  if (n["efficiency"]) {
    p.efficiency = r.require_double(n, "efficiency", path, 0, true);
    ++ways;
  }
  if (n["calibrate"]) {
    const YAML::Node& c = n["calibrate"];
    const std::string cp = key_path(path, "calibrate");
    r.require_map(c, cp);
    r.check_keys(c, {"model", "dataset", "whole_model_ms", "source"}, cp);
    ProcessorProfile::Calibration cal;
    cal.model = r.get_string(c, "model", cp);
    cal.dataset = r.get_string(c, "dataset", cp);
    cal.whole_model_ms = r.require_double(c, "whole_model_ms", cp, 0, true);
    cal.source = r.get_string(c, "source", cp);
    p.calibration = cal;
    ++ways;
  }
  if (n["efficiency_from"]) {
    p.efficiency_from = r.get_string(n, "efficiency_from", path);
    ++ways;
  }
  if (n["operator_classes"]) {
    p.operator_classes = read_operator_classes(r, n["operator_classes"], key_path(path, "operator_classes"));
    if (ways != 0)
      r.fail(n["operator_classes"], key_path(path, "operator_classes"),
             "replaces efficiency, calibrate and efficiency_from: give none of them beside it");
  } else if (ways != 1) {
    r.fail(n, path, "give exactly one of efficiency, calibrate, efficiency_from (or operator_classes)");
  }
  if (n["power"]) {
    const YAML::Node& w = n["power"];
    const std::string wp = key_path(path, "power");
    r.require_map(w, wp);
    r.check_keys(w, {"idle_w", "busy_w", "source"}, wp);
    p.idle_w = r.get_double(w, "idle_w", wp, 0, 0, false);
    p.busy_w = r.get_double(w, "busy_w", wp, p.idle_w, p.idle_w, false);
    p.power_source = r.get_string(w, "source", wp);
  }
  return p;
}

}  // namespace

RadioStates read_radio_states(const YamlReader& r, const YAML::Node& n, const std::string& path, bool require_source) {
  r.require_map(n, path);
  r.check_keys(n, {"base_w", "up_w_per_mbps", "down_w_per_mbps", "tail_w", "tail_s", "idle_w", "promotion_w", "promotion_s", "source"}, path);
  RadioStates m;
  m.base_w = r.require_double(n, "base_w", path, 0, false);
  m.up_w_per_mbps = r.get_double(n, "up_w_per_mbps", path, 0, 0, false);
  m.down_w_per_mbps = r.get_double(n, "down_w_per_mbps", path, 0, 0, false);
  m.tail_w = r.get_double(n, "tail_w", path, 0, 0, false);
  m.tail_s = r.get_double(n, "tail_s", path, 0, 0, false);
  m.idle_w = r.get_double(n, "idle_w", path, 0, 0, false);
  m.promotion_w = r.get_double(n, "promotion_w", path, 0, 0, false);
  m.promotion_s = r.get_double(n, "promotion_s", path, 0, 0, false);
  if (m.tail_s > 3600) r.fail(n["tail_s"], key_path(path, "tail_s"), "at most 3600 s");
  if (m.promotion_s > 60) r.fail(n["promotion_s"], key_path(path, "promotion_s"), "at most 60 s");
  m.source = require_source ? r.get_string(n, "source", path) : r.get_string(n, "source", path, "");
  if (!m.stated()) r.fail(n, path, "every power is 0: state the radio's powers, or leave the radio out");
  return m;
}

namespace {

std::map<std::string, RadioStates> radios_from(const YamlReader& r, const YAML::Node& root) {
  std::map<std::string, RadioStates> out;
  if (!root.IsMap() || !root["radios"]) return out;
  const YAML::Node list = root["radios"];
  if (!list.IsMap()) r.fail(list, "radios", "expected a mapping of radio names");
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string name = it->first.as<std::string>();
    RadioStates m = read_radio_states(r, it->second, "radios." + name, true);
    m.name = name;
    out[name] = m;
  }
  return out;
}

std::map<std::string, DeviceProfile> profiles_from(const YamlReader& r, const YAML::Node& root) {
  r.check_keys(root, {"profiles", "radios"}, "");
  YAML::Node list = root["profiles"];
  if (!list || !list.IsMap()) r.fail(root, "profiles", "expected a mapping of device types");
  const std::vector<std::string> device_keys = {"role",         "description",   "processors",   "default_processor", "memory",
                                                "interconnect", "power_modes_w", "power_source", "board_power"};
  std::map<std::string, DeviceProfile> out;
  std::map<std::string, YAML::Node> nodes;
  for (auto it = list.begin(); it != list.end(); ++it) {
    DeviceProfile p;
    p.type = it->first.as<std::string>();
    const YAML::Node n = it->second;  // a copy: it-> yields a temporary
    const std::string path = "profiles." + p.type;
    r.require_map(n, path);
    p.role = r.get_string(n, "role", path);
    if (p.role != "device" && p.role != "server") r.fail(n["role"], path + ".role", "allowed: device, server");
    p.description = r.get_string(n, "description", path);
    if (n["processors"]) {
      r.check_keys(n, device_keys, path);
      const YAML::Node procs = n["processors"];
      if (!procs.IsMap() || procs.size() == 0) r.fail(procs, path + ".processors", "expected a mapping of processor names, at least one");
      for (auto pt = procs.begin(); pt != procs.end(); ++pt) {
        const std::string name = pt->first.as<std::string>();
        const std::string pp = path + ".processors." + name;
        const YAML::Node pn = pt->second;
        r.require_map(pn, pp);
        ProcessorProfile proc = read_processor(r, pn, pp, {});
        if (proc.kind.empty()) r.fail(pn, pp + ".kind", "required (cpu, gpu or npu)");
        proc.name = name;
        p.processors.push_back(proc);
      }
    } else {
      // Old style: the profile is its only processor.
      std::vector<std::string> extra = device_keys;
      extra.erase(extra.begin() + 2);  // not "processors"
      ProcessorProfile proc = read_processor(r, n, path, extra);
      proc.name = "default";
      proc.description = p.description;
      p.processors_named = false;
      p.processors.push_back(proc);
    }
    p.default_processor = r.get_string(n, "default_processor", path, p.processors.front().name);
    if (!p.processor(p.default_processor))
      r.fail(n["default_processor"], path + ".default_processor", "no processor '" + p.default_processor + "' in this profile");
    if (n["memory"]) {
      const YAML::Node& m = n["memory"];
      const std::string mp = path + ".memory";
      r.require_map(m, mp);
      r.check_keys(m, {"capacity_gb", "gpu", "gpu_gb", "source"}, mp);
      p.memory.capacity_bytes = r.require_double(m, "capacity_gb", mp, 0, true) * 1e9;
      const std::string gpu = r.get_string(m, "gpu", mp, "shared");
      if (gpu != "shared" && gpu != "separate") r.fail(m["gpu"], mp + ".gpu", "allowed: shared (one memory for every processor), separate");
      p.memory.gpu_shared = gpu == "shared";
      if (!p.memory.gpu_shared)
        p.memory.gpu_bytes = r.require_double(m, "gpu_gb", mp, 0, true) * 1e9;
      else if (m["gpu_gb"])
        r.fail(m["gpu_gb"], mp + ".gpu_gb", "only with gpu: separate");
      p.memory.source = r.get_string(m, "source", mp);
    }
    if (n["interconnect"]) {
      const YAML::Node& c = n["interconnect"];
      const std::string cp = path + ".interconnect";
      r.require_map(c, cp);
      r.check_keys(c, {"kind", "gbps", "latency_us", "source"}, cp);
      const std::string kind = r.get_string(c, "kind", cp);
      if (kind != "shared" && kind != "copy") r.fail(c["kind"], cp + ".kind", "allowed: shared (zero copy), copy (at gbps after latency_us)");
      p.interconnect.zero_copy = kind == "shared";
      if (!p.interconnect.zero_copy) {
        p.interconnect.gbps = r.require_double(c, "gbps", cp, 0, true);
        p.interconnect.latency_us = r.get_double(c, "latency_us", cp, 0, 0, false);
      } else if (c["gbps"] || c["latency_us"]) {
        r.fail(c["gbps"] ? c["gbps"] : c["latency_us"], cp, "gbps and latency_us only with kind: copy");
      }
      p.interconnect.source = r.get_string(c, "source", cp);
    }
    if (n["power_modes_w"]) {
      const YAML::Node& w = n["power_modes_w"];
      if (!w.IsSequence() || w.size() == 0) r.fail(w, path + ".power_modes_w", "expected a list of watts, e.g. [7.5, 15]");
      for (const auto& x : w) {
        double v = NAN;
        try {
          v = x.as<double>();
        } catch (const std::exception&) {
          r.fail(x, path + ".power_modes_w", "expected a number of watts");
        }
        if (!(v > 0) || !std::isfinite(v)) r.fail(x, path + ".power_modes_w", "each mode must be > 0 W");
        p.power_modes_w.push_back(v);
      }
      p.power_source = r.get_string(n, "power_source", path);
    } else if (n["power_source"]) {
      r.fail(n["power_source"], path + ".power_source", "only with power_modes_w");
    }
    if (n["board_power"]) {
      const YAML::Node& w = n["board_power"];
      const std::string wp = path + ".board_power";
      r.require_map(w, wp);
      r.check_keys(w, {"idle_w", "busy_w", "source"}, wp);
      p.board_power.idle_w = r.require_double(w, "idle_w", wp, 0, false);
      p.board_power.busy_w = r.require_double(w, "busy_w", wp, p.board_power.idle_w, false);
      p.board_power.source = r.get_string(w, "source", wp);
    }
    nodes[p.type] = n;
    out[p.type] = p;
  }
  // efficiency_from names "TYPE" (its default processor) or "TYPE.PROCESSOR" of this file.
  for (const auto& [type, p] : out)
    for (const auto& proc : p.processors) {
      if (proc.efficiency_from.empty()) continue;
      const auto dot = proc.efficiency_from.find('.');
      const std::string from_type = proc.efficiency_from.substr(0, dot);
      const std::string from_proc = dot == std::string::npos ? "" : proc.efficiency_from.substr(dot + 1);
      const auto it = out.find(from_type);
      if (it != out.end() && it->second.processor(from_proc) && it->second.processor(from_proc)->operator_classes) {
        const YAML::Node n = p.processors_named ? nodes[type]["processors"][proc.name] : nodes[type];
        r.fail(n["efficiency_from"], "profiles." + type + (p.processors_named ? ".processors." + proc.name : "") + ".efficiency_from",
               "'" + proc.efficiency_from + "' has operator classes, not an efficiency to copy");
      }
      if (it == out.end() || !it->second.processor(from_proc)) {
        // An old-style profile is its own processor; a named one (even one called "default") is under processors.
        const YAML::Node n = p.processors_named ? nodes[type]["processors"][proc.name] : nodes[type];
        r.fail(n["efficiency_from"], "profiles." + type + (p.processors_named ? ".processors." + proc.name : "") + ".efficiency_from",
               "unknown profile or processor '" + proc.efficiency_from + "' (TYPE or TYPE.PROCESSOR of this file)");
      }
    }
  return out;
}

}  // namespace

HardwareFile load_hardware_file(const std::string& file) {
  struct Parsed {
    std::string file, text;
    HardwareFile hardware;
  };
  static std::mutex mutex;
  static std::deque<Parsed> recent;  // newest first, at most kKept
  constexpr size_t kKept = 4;
  std::string text = read_input_file(file, "YAML file");
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Parsed& p : recent)
      if (p.file == file && p.text == text) return p.hardware;
  }
  const YamlReader r(file);
  const YAML::Node root = r.load_text(text);
  HardwareFile h;
  h.profiles = profiles_from(r, root);
  h.radios = radios_from(r, root);
  std::lock_guard<std::mutex> lock(mutex);
  recent.push_front(Parsed{file, std::move(text), h});
  if (recent.size() > kKept) recent.pop_back();
  return h;
}

std::map<std::string, DeviceProfile> load_device_profiles(const std::string& file) { return load_hardware_file(file).profiles; }

}  // namespace coinfer
