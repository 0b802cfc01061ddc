#pragma once
// A device's compute energy over the measurement window, by the formula of SimGrid's host energy
// plugin (idle power all along, busy - idle while computing), for a board of one processor or of several.
// Engine-free: the simulator calls it with the busy seconds it counted. Units: W, s, J.
#include <vector>

#include "core/scenario.hpp"

namespace coinfer {

struct DeviceEnergy {
  // Split: compute_j = what computing adds above idle power; idle_j = idle power all along.
  double compute_j = 0;
  double idle_j = 0;
  double total_j() const { return compute_j + idle_j; }
  // Per processor (power.processors order = the device's hardware order), the energy it adds to the
  // board's: idle_w_p x window + (busy_w_p - idle_w_p) x busy_p. Empty without per-processor power.
  std::vector<double> processor_j;
};

// power.processors empty: idle idle_w x window, compute (busy_w - idle_w) x union_busy_s (the device is
// busy while any of its processors computes). Otherwise: idle idle_w x window (the rest of the board) +
// each processor's idle_w_p x window, compute each processor's (busy_w_p - idle_w_p) x busy_p.
// processor_busy_s: per processor of the hardware, in power.processors order.
DeviceEnergy device_compute_energy(const PowerSpec& power, double window_s, double union_busy_s, const std::vector<double>& processor_busy_s);

}  // namespace coinfer
