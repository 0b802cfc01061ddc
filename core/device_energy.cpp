#include "core/device_energy.hpp"

#include <stdexcept>

namespace coinfer {

DeviceEnergy device_compute_energy(const PowerSpec& power, double window_s, double union_busy_s, const std::vector<double>& processor_busy_s) {
  DeviceEnergy e;
  if (power.processors.empty()) {
    e.idle_j = power.idle_w * window_s;
    e.compute_j = (power.busy_w - power.idle_w) * union_busy_s;
    return e;
  }
  if (processor_busy_s.size() != power.processors.size())
    throw std::logic_error("device_compute_energy: busy seconds for " + std::to_string(processor_busy_s.size()) + " processors, power for " +
                           std::to_string(power.processors.size()));
  e.idle_j = power.idle_w * window_s;
  for (size_t p = 0; p < power.processors.size(); ++p) {
    const PowerSpec::Processor& pp = power.processors[p];
    const double idle = pp.idle_w * window_s, compute = (pp.busy_w - pp.idle_w) * processor_busy_s[p];
    e.processor_j.push_back(idle + compute);
    e.idle_j += idle;
    e.compute_j += compute;
  }
  return e;
}

}  // namespace coinfer
