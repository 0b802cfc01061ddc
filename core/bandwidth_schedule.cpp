#include "core/bandwidth_schedule.hpp"

#include <algorithm>

namespace coinfer {

BandwidthSchedule::BandwidthSchedule(std::vector<BandwidthPoint> pts) {
  std::stable_sort(pts.begin(), pts.end(), [](const BandwidthPoint& a, const BandwidthPoint& b) { return a.t_s < b.t_s; });
  for (const auto& p : pts) {
    if (!points_.empty() && points_.back().t_s == p.t_s)
      points_.back().mbps = p.mbps;  // later entry wins
    else
      points_.push_back(p);
  }
  if (points_.empty() || points_.front().t_s > 0) points_.insert(points_.begin(), BandwidthPoint{0, pts.empty() ? 1 : pts.front().mbps});
  // Drop points that do not change the value.
  std::vector<BandwidthPoint> compact;
  for (const auto& p : points_)
    if (compact.empty() || compact.back().mbps != p.mbps) compact.push_back(p);
  points_ = compact;
}

BandwidthSchedule::BandwidthSchedule(const DeviceSpec& d, const std::vector<EventSpec>& events) {
  std::vector<BandwidthPoint> pts = {{0, d.link.bandwidth_mbps}};
  for (const auto& p : d.link.trace) pts.push_back(p);
  for (const auto& e : events)
    if (const auto* b = e.of_device<event::Bandwidth>(d.id)) pts.push_back({e.at_s, b->mbps});
  *this = BandwidthSchedule(pts);
}

double BandwidthSchedule::mbps_at(double t) const {
  auto it = std::upper_bound(points_.begin(), points_.end(), t, [](double x, const BandwidthPoint& p) { return x < p.t_s; });
  return it == points_.begin() ? points_.front().mbps : std::prev(it)->mbps;
}

double BandwidthSchedule::peak_mbps() const {
  double m = 0;
  for (const auto& p : points_) m = std::max(m, p.mbps);
  return m;
}

BandwidthSchedule server_link_schedule(const ServerSpec& server) {
  std::vector<BandwidthPoint> pts = {{0, server.link.bandwidth_mbps}};
  pts.insert(pts.end(), server.link.trace.begin(), server.link.trace.end());
  return BandwidthSchedule(std::move(pts));
}

}  // namespace coinfer
