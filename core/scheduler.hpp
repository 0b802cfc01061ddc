#pragma once
// Scheduler and Estimator interfaces. Schedulers are engine-free: the simulator and the real runtime
// call the very same objects. decide() must not read clocks or do I/O and must be deterministic for a
// given seed and state.
#include <string>

#include "core/scheme.hpp"
#include "core/system_state.hpp"

namespace coinfer {

class Estimator {
 public:
  virtual ~Estimator() = default;
  // Higher is better (e.g. system throughput in requests/s).
  virtual double score(const SystemState& state, const Scheme& scheme) const = 0;
  // > 0 if a is predicted better than b, < 0 if worse, 0 if equal.
  virtual double compare(const SystemState& state, const Scheme& a, const Scheme& b) const {
    return score(state, a) - score(state, b);
  }
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string name() const = 0;
  virtual Scheme decide(const SystemState& state) = 0;
};

}  // namespace coinfer
