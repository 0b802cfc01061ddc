#pragma once
// A device link's bandwidth over time: piecewise constant. Built from the link's base bandwidth, its
// trace (if any) and the scenario's bandwidth events, merged in time order: each point sets the
// bandwidth until the next one (an event at the same time as a trace point wins).
#include <vector>

#include "core/scenario.hpp"
#include "core/units.hpp"

namespace coinfer {

class BandwidthSchedule {
 public:
  BandwidthSchedule() = default;
  BandwidthSchedule(const DeviceSpec& device, const std::vector<EventSpec>& events);
  explicit BandwidthSchedule(std::vector<BandwidthPoint> points);  // sorted; first at t=0

  double mbps_at(double t_s) const;
  double bytes_per_s_at(double t_s) const { return mbps_to_bytes_per_s(mbps_at(t_s)); }
  double peak_mbps() const;
  bool constant() const { return points_.size() == 1; }
  const std::vector<BandwidthPoint>& points() const { return points_; }

 private:
  std::vector<BandwidthPoint> points_;  // strictly increasing times, first at 0, no repeated values
};

// A server's link over time (servers[].link: its bandwidth, then its trace; e.g. a cloud's WAN). The
// simulator's server links and the real runtime's edge-to-cloud pacing.
BandwidthSchedule server_link_schedule(const ServerSpec& server);

}  // namespace coinfer
