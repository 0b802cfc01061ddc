#include "sched/static_scheduler.hpp"

namespace coinfer {

Scheme StaticScheduler::decide(const SystemState& state) {
  Scheme s;
  for (const auto& d : state.devices) {
    if (!d.connected) continue;
    auto it = strategies_.find(d.id);
    s.strategies[d.id] = it == strategies_.end() ? d.strategy : it->second;
    if (use_helpers_ && !d.generates) s.helpers.push_back(d.id);
  }
  return s;
}

}  // namespace coinfer
