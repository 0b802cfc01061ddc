#pragma once
// What a device's hardware is to the runtime: its processors, which memory each works in,
// how much memory there is and what moving a tensor between processors costs. Built from the
// device's type profile (traces/devices.yaml, core/lut_synth.hpp DeviceProfile) by the scenario
// loader; a type without a profile is one unnamed processor with no memory limit (the model every
// run had before). Immutable once built; shared by every device of a scenario entry.
// Units: bytes, seconds.
#include <string>
#include <vector>

namespace coinfer {

struct DeviceProfile;

struct DeviceHardware {
  // Processor names; [0] is the one the device computes on when a strategy places nothing
  // (devices[].processor, else the profile's default_processor). "" = a type without a profile.
  std::vector<std::string> processors;
  std::vector<std::string> kinds;  // per processor: "cpu", "gpu", "npu" or "" (not stated)
  // Memory pools: [0] the main memory; [1] a GPU's own memory when the profile says it is separate.
  // Capacity 0 = not stated (nothing runs out of memory).
  std::vector<int> pool_of;  // per processor
  std::vector<double> pool_capacity_bytes;
  std::vector<std::string> pool_names;  // "memory", "gpu_memory"
  // Moving a tensor from one processor to another: free with shared memory (zero copy), else
  // latency + bytes / bandwidth.
  bool zero_copy = true;
  double copy_bytes_per_s = 0, copy_latency_s = 0;

  // The processor's position, -1 when the device has none of that name.
  int slot(const std::string& name) const;
  int size() const { return static_cast<int>(processors.size()); }
  double copy_seconds(double bytes) const;
  // "name (kind)" list for error messages: "gpu (gpu), cpu (cpu)".
  std::string describe() const;
};

// The hardware of a device of `profile`'s type computing on `processor` by default ("" = the
// profile's default); memory_bytes > 0 replaces the profile's memory capacity (a 1 GB Pi 4B).
// Throws std::invalid_argument when the profile has no processor of that name.
DeviceHardware hardware_from_profile(const DeviceProfile& profile, const std::string& processor, double memory_bytes);

// "out of memory on DEVICE:PROCESSOR (needs X MB, has Y MB)" (": PROCESSOR" left out when unnamed;
// two decimals below 10 MB): the one reason the simulator and the real runtime give.
std::string out_of_memory_reason(const std::string& device, const std::string& processor, double need_bytes, double have_bytes);

// One processor, no memory limit: a type without a profile (its processor "" or as named).
DeviceHardware single_processor_hardware(const std::string& processor, double memory_bytes);

}  // namespace coinfer
