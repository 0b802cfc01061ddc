#pragma once
// Reads device/server hardware profiles (traces/devices.yaml; format in traces/README.md).
#include <map>
#include <string>

#include "core/lut_synth.hpp"
#include "core/radio_energy.hpp"
#include "io/yaml_util.hpp"

namespace coinfer {

std::map<std::string, DeviceProfile> load_device_profiles(const std::string& file);

// The radios the file describes (its `radios:` section, format in traces/README.md "Radios"), by name;
// empty when it has none.
std::map<std::string, RadioStates> load_radio_profiles(const std::string& file);

// One radio's power states from a mapping {base_w, up_w_per_mbps, down_w_per_mbps, tail_w, tail_s,
// idle_w, promotion_w, promotion_s, source}; `path` names it in errors. source is required when
// `require_source` (the profiles file), optional inline in a scenario.
RadioStates read_radio_states(const YamlReader& r, const YAML::Node& n, const std::string& path, bool require_source);

}  // namespace coinfer
