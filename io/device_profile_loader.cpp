#include "io/device_profile_loader.hpp"

#include "core/text_util.hpp"
#include "io/yaml_util.hpp"

namespace coinfer {

std::map<std::string, DeviceProfile> load_device_profiles(const std::string& file) {
  YamlReader r(file);
  YAML::Node root = r.load_file();
  r.check_keys(root, {"profiles"}, "");
  YAML::Node list = root["profiles"];
  if (!list || !list.IsMap()) r.fail(root, "profiles", "expected a mapping of device types");
  std::map<std::string, DeviceProfile> out;
  for (auto it = list.begin(); it != list.end(); ++it) {
    DeviceProfile p;
    p.type = it->first.as<std::string>();
    const YAML::Node n = it->second;  // a copy: it-> yields a temporary
    const std::string path = "profiles." + p.type;
    r.check_keys(n, {"role", "description", "peak_gflops", "mem_gbps", "stage_overhead_ms", "batch_half",
                     "latency_cv", "efficiency", "efficiency_note", "calibrate", "efficiency_from"},
                 path);
    p.role = r.get_string(n, "role", path);
    if (p.role != "device" && p.role != "server") r.fail(n["role"], path + ".role", "allowed: device, server");
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
      const std::string cp = path + ".calibrate";
      r.check_keys(c, {"model", "dataset", "whole_model_ms", "source"}, cp);
      DeviceProfile::Calibration cal;
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
    if (ways != 1) r.fail(n, path, "give exactly one of efficiency, calibrate, efficiency_from");
    out[p.type] = p;
  }
  for (const auto& kv : out)
    if (!kv.second.efficiency_from.empty() && !out.count(kv.second.efficiency_from))
      throw InputError(SourceLocation{file, 0, 0}, "profiles." + kv.first + ".efficiency_from",
                       "unknown profile '" + kv.second.efficiency_from + "'");
  return out;
}

}  // namespace coinfer
