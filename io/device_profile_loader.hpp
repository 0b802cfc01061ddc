#pragma once
// Reads device/server hardware profiles (traces/devices.yaml; format in traces/README.md).
#include <map>
#include <string>

#include "core/lut_synth.hpp"
#include "core/radio_energy.hpp"
#include "io/yaml_util.hpp"

namespace coinfer {

// A hardware file whole: its device and server profiles by type, and the radios it describes (its
// `radios:` section, format in traces/README.md "Radios") by name, empty when it has none.
struct HardwareFile {
  std::map<std::string, DeviceProfile> profiles;
  std::map<std::string, RadioStates> radios;
};
// Reads and checks `file` (errors name the file, line and key). The file is read on every call; its
// parse is kept for the same path and the same bytes (the last 4 files; thread-safe), because every
// scenario load reads it and a sweep or a fuzzer loads thousands of scenarios. Blocks on file I/O.
HardwareFile load_hardware_file(const std::string& file);

// The profiles of load_hardware_file(file).
std::map<std::string, DeviceProfile> load_device_profiles(const std::string& file);

// One radio's power states from a mapping {base_w, up_w_per_mbps, down_w_per_mbps, tail_w, tail_s,
// idle_w, promotion_w, promotion_s, source}; `path` names it in errors. source is required when
// `require_source` (the profiles file), optional inline in a scenario.
RadioStates read_radio_states(const YamlReader& r, const YAML::Node& n, const std::string& path, bool require_source);

}  // namespace coinfer
