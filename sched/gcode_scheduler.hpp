#pragma once
// gcode: the GCoDE-like baseline (a split chosen offline per bandwidth level, switched on bandwidth
// thresholds only).
#include <map>
#include <string>
#include <vector>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

// GCoDE-like: for each device, at its first decision (nominal bandwidth B0), choose offline the interior
// split with the lowest predicted latency of that device alone at each preset level B0, B0/2, B0/4, ...
// down to `min_mbps`; afterwards only switch between these presets, using the largest level not above
// the measured bandwidth. Bandwidth is its only awareness: no load, no other devices.
class GcodeScheduler : public Scheduler {
 public:
  GcodeScheduler(const AnalyticEstimator& est, double min_mbps = 0.5) : est_(est), min_mbps_(min_mbps) {}
  std::string name() const override { return "gcode"; }
  Scheme decide(const SystemState& state) override;

 private:
  struct Presets {
    std::vector<double> level_mbps;  // descending
    std::vector<int> split;
  };
  Presets plan(const SystemState& state, const DeviceState& d) const;
  const AnalyticEstimator& est_;
  double min_mbps_;
  std::map<std::string, Presets> presets_;  // by device id
};

}  // namespace coinfer
