#include "core/background_load.hpp"

#include <algorithm>

namespace coinfer {

LoadSchedule::LoadSchedule(const DeviceSpec& d, const std::vector<EventSpec>& events) {
  for (const auto& e : events)
    if (const auto* l = e.of_device<event::Load>(d.id)) points_.push_back({e.at_s, l->processor, l->share});
  std::stable_sort(points_.begin(), points_.end(), [](const Point& a, const Point& b) { return a.t_s < b.t_s; });
}

double LoadSchedule::share_at(double t_s, const std::string& processor) const {
  double share = 0;
  for (const Point& p : points_) {
    if (p.t_s > t_s) break;
    if (p.processor.empty() || p.processor == processor) share = p.share;
  }
  return share;
}

}  // namespace coinfer
