#pragma once
// When one device creates inputs, engine-free: the simulator (simulated time) and the real device
// runtime (wall clock since the run's start) ask the same object.
//   - Open loop (poisson, trace): next() gives the next arrival time, so a testbed replays exactly
//     the arrivals the simulator drew for (seed, device).
//   - Closed loop: admits() says whether a new input may be created now (docs/ARCHITECTURE.md): the device has
//     fewer than in_flight unfinished requests and the first stage the new input needs is idle (the
//     device's computation for local and pp(k), its uplink for offload); data_parallel: no input
//     waits for a side and one of the two sides is free.
// Times are seconds from the start of the run. Not thread-safe; owned by one device.
#include <cstddef>
#include <cstdint>

#include "core/random_stream.hpp"
#include "core/scenario.hpp"
#include "core/strategy.hpp"

namespace coinfer {

// What the closed-loop rule looks at, as the device sees it now.
struct ClosedLoopView {
  int num_stages = 1;
  int unfinished = 0;                        // requests created and not finished
  int in_flight_limit = 1;                   // workload.in_flight, or default_in_flight(strategy)
  bool compute_idle = true;                  // nothing computing on the device and nothing waiting to
  bool upload_idle = true;                   // nothing on the uplink and nothing waiting for it
  bool data_parallel_input_waiting = false;  // data_parallel: an input waits for a side
  bool data_parallel_side_free = true;       // data_parallel: the device or the server path is free
};

class ArrivalProcess {
 public:
  // Arrivals in [device.join_at_s, min(device.leave_at_s, arrivals_end_s)). Poisson gaps come from
  // RandomStream(seed, arrivals, device_index). `device` must outlive this object.
  ArrivalProcess(const DeviceSpec& device, std::uint64_t seed, int device_index, double arrivals_end_s);
  // The next arrival time (never earlier than the previous one); +infinity once none is left, and
  // always +infinity for closed-loop and idle (none) workloads.
  double next();
  bool closed_loop() const { return device_.workload.arrival == WorkloadSpec::Arrival::closed_loop; }
  // The closed-loop admission rule (above) for a device running `current`.
  static bool admits(const Strategy& current, const ClosedLoopView& v);

 private:
  const DeviceSpec& device_;
  RandomStream gaps_;
  double end_s_;
  double last_s_;
  std::size_t trace_pos_ = 0;
  bool done_ = false;
};

}  // namespace coinfer
