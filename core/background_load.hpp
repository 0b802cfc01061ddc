#pragma once
// Devices whose free compute changes: a device's processors may be partly taken by
// other work, from the scenario's `load` events on (events[].load: the share of the processor, 0..0.99,
// on one named processor or on all of them). A computation that starts while a share L is taken runs
// 1 / (1 - L) times as long as its LUT says (the processor's time is shared in proportion, as a CPU
// quota or a co-running process does; the share in force at its start holds for the whole computation).
// Engine-free: the simulator asks it at each computation's start; the estimator and the schedulers see
// the share in SystemState (DeviceState::load).
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace coinfer {

class LoadSchedule {
 public:
  struct Point {
    double t_s = 0;
    std::string processor;  // "": every processor
    double share = 0;
  };
  LoadSchedule() = default;
  // The `load` events of device `d`, in time order (stable).
  LoadSchedule(const DeviceSpec& d, const std::vector<EventSpec>& events);
  // The share of `processor` taken at t_s: the latest event at or before t_s that names it or names
  // none; 0 before any.
  double share_at(double t_s, const std::string& processor) const;
  const std::vector<Point>& points() const { return points_; }
  bool empty() const { return points_.empty(); }

 private:
  std::vector<Point> points_;
};

// How much longer a computation takes while `share` of its processor is taken: 1 / (1 - share).
inline double load_slowdown(double share) { return 1 / (1 - share); }

}  // namespace coinfer
