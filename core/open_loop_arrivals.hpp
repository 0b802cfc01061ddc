#pragma once
// The arrival times of one device's open-loop workload (poisson or trace), engine-free: the simulator
// (simulated time) and the real device runtime (wall clock since the run's start) ask the same object
// for the next time, so a testbed replays exactly the arrivals the simulator drew for (seed, device).
// Times are seconds from the start of the run. Not thread-safe; owned by one device.
#include <cstddef>
#include <cstdint>

#include "core/random_stream.hpp"
#include "core/scenario.hpp"

namespace coinfer {

class OpenLoopArrivals {
 public:
  // Arrivals in [device.join_at_s, min(device.leave_at_s, arrivals_end_s)). Poisson gaps come from
  // RandomStream(seed, arrivals, device_index). `device` must outlive this object.
  OpenLoopArrivals(const DeviceSpec& device, std::uint64_t seed, int device_index, double arrivals_end_s);
  // The next arrival time (never earlier than the previous one); +infinity once none is left, and
  // always +infinity for closed-loop and idle (none) workloads.
  double next();

 private:
  const DeviceSpec& device_;
  RandomStream gaps_;
  double end_s_;
  double last_s_;
  std::size_t trace_pos_ = 0;
  bool done_ = false;
};

}  // namespace coinfer
