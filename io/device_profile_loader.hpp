#pragma once
// Reads device/server hardware profiles (traces/devices.yaml; format in traces/README.md).
#include <map>
#include <string>

#include "core/lut_synth.hpp"

namespace coinfer {

std::map<std::string, DeviceProfile> load_device_profiles(const std::string& file);

}  // namespace coinfer
