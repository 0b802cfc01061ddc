#include "sched/gcode_scheduler.hpp"

#include <limits>

namespace coinfer {

GcodeScheduler::Presets GcodeScheduler::plan(const SystemState& state, const DeviceState& d) const {
  Presets p;
  const int n = est_.model(d.model, d.dataset).num_stages();
  SystemState alone = alone_in(state, d);  // the device alone
  alone.devices[0].connected = true;
  for (double level = d.link_bandwidth_mbps; level >= min_mbps_ || p.level_mbps.empty(); level /= 2) {
    alone.devices[0].link_bandwidth_mbps = level;
    int best = n > 1 ? 1 : 0;
    double best_latency = std::numeric_limits<double>::infinity();
    for (int k = 1; k < n; ++k) {
      Scheme s;
      s.strategies[d.id] = Strategy::pp(k);
      const double l = est_.predict(alone, s).mean_latency_s;
      if (l < best_latency) {
        best_latency = l;
        best = k;
      }
    }
    p.level_mbps.push_back(level);
    p.split.push_back(best);
  }
  return p;
}

Scheme GcodeScheduler::decide(const SystemState& state) {
  Scheme s;
  for (const auto& d : state.devices) {
    if (!d.connected) continue;
    auto it = presets_.find(d.id);
    if (it == presets_.end()) it = presets_.emplace(d.id, plan(state, d)).first;
    const Presets& p = it->second;
    size_t i = 0;
    while (i + 1 < p.level_mbps.size() && p.level_mbps[i] > d.link_bandwidth_mbps) ++i;
    s.strategies[d.id] = Strategy::pp(p.split[i]);
  }
  return s;
}

}  // namespace coinfer
