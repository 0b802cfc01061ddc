#pragma once
// A device's energy over a window [t0, t1) rebuilt from its request records (SAC's energy
// reward, whose transitions are computed after an episode from its results). Engine-free. Units: s, J.
// The same parts as the simulator's (scenarios/README.md "Energy"), from what the records hold:
//   idle    = the device's idle power (board, and every processor's where stated) x (t1 - t0);
//   compute = (busy_w - idle_w) x the seconds of [t_device_start, t_device_end] spans inside the window
//             (per processor stated: the default processor's busy - idle; a span is the request's
//             device part from its first segment's start to its last's end);
//   radio   = the flat rate x bytes of the uploads (t_uplink_end) and results (t_result) inside the
//             window, or the radio's power states (core/radio_energy.hpp) over the transfer spans:
//             uploads [t_device_end, or t_created without a device part, .. t_uplink_end], results
//             [t_batch_end .. t_result].
// Approximations against the simulator's own accounting: an upload waiting for the radio counts from
// the end of its device part; the spans of a device part include waits between its segments.
#include <vector>

#include "core/request_record.hpp"
#include "core/scenario.hpp"

namespace coinfer {

struct WindowEnergy {
  double idle_j = 0, compute_j = 0, radio_j = 0;
  double total_j() const { return idle_j + compute_j + radio_j; }
};

// `requests`: the device's records (any order; those without the steps are skipped where a step is
// missing).
WindowEnergy window_energy_from_records(const PowerSpec& power, const std::vector<const RequestRecord*>& requests, double t0_s, double t1_s);

}  // namespace coinfer
