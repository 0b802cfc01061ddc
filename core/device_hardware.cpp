#include "core/device_hardware.hpp"

#include <cstdio>
#include <stdexcept>

#include "core/lut_synth.hpp"

namespace coinfer {

int DeviceHardware::slot(const std::string& name) const {
  for (size_t i = 0; i < processors.size(); ++i)
    if (processors[i] == name) return static_cast<int>(i);
  return -1;
}

double DeviceHardware::copy_seconds(double bytes) const {
  if (zero_copy || bytes <= 0) return 0;
  return copy_latency_s + (copy_bytes_per_s > 0 ? bytes / copy_bytes_per_s : 0);
}

std::string DeviceHardware::describe() const {
  std::string out;
  for (size_t i = 0; i < processors.size(); ++i) {
    if (i) out += ", ";
    out += processors[i].empty() ? "(unnamed)" : processors[i];
    if (!kinds[i].empty() && kinds[i] != processors[i]) out += " (" + kinds[i] + ")";
  }
  return out;
}

std::string out_of_memory_reason(const std::string& device, const std::string& processor, double need_bytes, double have_bytes) {
  char b[160];
  const char* f = have_bytes < 10e6 ? " (needs %.2f MB, has %.2f MB)" : " (needs %.1f MB, has %.1f MB)";
  std::snprintf(b, sizeof b, f, need_bytes / 1e6, have_bytes / 1e6);
  return "out of memory on " + device + (processor.empty() ? "" : ":" + processor) + b;
}

DeviceHardware single_processor_hardware(const std::string& processor, double memory_bytes) {
  DeviceHardware h;
  h.processors = {processor};
  h.kinds = {""};
  h.pool_of = {0};
  h.pool_capacity_bytes = {memory_bytes > 0 ? memory_bytes : 0};
  h.pool_names = {"memory"};
  return h;
}

DeviceHardware hardware_from_profile(const DeviceProfile& profile, const std::string& processor, double memory_bytes) {
  if (!profile.processors_named) {  // an old-style profile: its one processor, which its LUTs name not
    if (!processor.empty() && processor != profile.processors.at(0).name)
      throw std::invalid_argument("device type '" + profile.type + "' has no processor '" + processor + "' (its profile names none)");
    DeviceHardware h = single_processor_hardware(processor, memory_bytes > 0 ? memory_bytes : profile.memory.capacity_bytes);
    h.kinds = {profile.processors.at(0).kind};
    return h;
  }
  const ProcessorProfile* first = profile.processor(processor);
  if (first == nullptr) {
    std::string names;
    for (const auto& p : profile.processors) names += (names.empty() ? "" : ", ") + p.name;
    throw std::invalid_argument("device type '" + profile.type + "' has no processor '" + processor + "' (it has: " + names + ")");
  }
  DeviceHardware h;
  h.processors.push_back(first->name);
  h.kinds.push_back(first->kind);
  for (const auto& p : profile.processors)
    if (p.name != first->name) {
      h.processors.push_back(p.name);
      h.kinds.push_back(p.kind);
    }
  const bool separate_gpu = !profile.memory.gpu_shared && profile.memory.gpu_bytes > 0;
  h.pool_capacity_bytes = {memory_bytes > 0 ? memory_bytes : profile.memory.capacity_bytes};
  h.pool_names = {"memory"};
  if (separate_gpu) {
    h.pool_capacity_bytes.push_back(profile.memory.gpu_bytes);
    h.pool_names.push_back("gpu_memory");
  }
  for (const auto& k : h.kinds) h.pool_of.push_back(separate_gpu && (k == "gpu" || k == "npu") ? 1 : 0);
  h.zero_copy = profile.interconnect.zero_copy;
  h.copy_bytes_per_s = profile.interconnect.gbps * 1e9;
  h.copy_latency_s = profile.interconnect.latency_us * 1e-6;
  return h;
}

}  // namespace coinfer
