#include "sched/uniform_scheduler.hpp"

namespace coinfer {

Scheme UniformScheduler::decide(const SystemState& state) {
  Scheme s;
  for (const auto& d : state.devices)
    if (d.connected) s.strategies[d.id] = strategy_;
  return s;
}

}  // namespace coinfer
