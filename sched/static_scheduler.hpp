#pragma once
// The `static` scheduler: every device keeps the strategy its scenario entry gives.
#include <map>

#include "core/scheduler.hpp"

namespace coinfer {

class StaticScheduler : public Scheduler {
 public:
  // use_helpers: name every connected idle device (no inputs of its own) a helper.
  explicit StaticScheduler(std::map<std::string, Strategy> strategies, bool use_helpers = false)
      : strategies_(std::move(strategies)), use_helpers_(use_helpers) {}
  std::string name() const override { return "static"; }
  // Connected devices get their configured strategy; unknown devices keep their current one.
  Scheme decide(const SystemState& state) override;

 private:
  std::map<std::string, Strategy> strategies_;
  bool use_helpers_;
};

}  // namespace coinfer
