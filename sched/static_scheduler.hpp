#pragma once
// The `static` scheduler: every device keeps the strategy its scenario entry gives.
#include <map>

#include "core/scheduler.hpp"

namespace coinfer {

class StaticScheduler : public Scheduler {
 public:
  explicit StaticScheduler(std::map<std::string, Strategy> strategies) : strategies_(std::move(strategies)) {}
  std::string name() const override { return "static"; }
  // Connected devices get their configured strategy; unknown devices keep their current one.
  Scheme decide(const SystemState& state) override;

 private:
  std::map<std::string, Strategy> strategies_;
};

}  // namespace coinfer
