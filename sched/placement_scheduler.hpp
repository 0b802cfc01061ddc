#pragma once
// The `placement` scheduler: each device keeps its scenario strategy's split between board
// and server, and the stages it runs are placed on its processors by one operator-placement rule
// (sched/operator_placement.hpp: SparOA's baselines, GraNNite's GraphSplit). SparOA's own problem is
// one board's latency, so the rule minimises (dp) or sets (the others) each board's device seconds
// alone; the server's sharing is not its concern (joint search: greedy/dp/oracle's options). A
// data_parallel device's placement is that of the inputs it keeps (whole on the board). Devices of one
// processor and offloading devices keep their strategy as it is. With a SparOA policy (rule sac,
// sched/sparoa_mdp.hpp), the policy places the stages of the boards it was trained for; a device of
// another board, model or stage count keeps its strategy, and the decision record says why.
#include <map>
#include <memory>
#include <string>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"
#include "sched/operator_placement.hpp"
#include "sched/sparoa_mdp.hpp"

namespace coinfer {

class PlacementScheduler : public Scheduler {
 public:
  PlacementScheduler(const AnalyticEstimator& est, std::map<std::string, Strategy> configured, PlacementRule rule,
                     std::shared_ptr<const SparoaActor> policy = nullptr)
      : est_(est), configured_(std::move(configured)), rule_(rule), policy_(std::move(policy)) {}
  std::string name() const override { return "placement"; }
  Scheme decide(const SystemState& state) override;
  // {"rule": ..., "devices": {ID: {"placement": "[cpu:0-1,gpu:1-9]", "device_ms": 12.3} | {"kept": why}}}.
  std::string decision_detail() const override { return detail_; }

 private:
  const AnalyticEstimator& est_;
  std::map<std::string, Strategy> configured_;
  PlacementRule rule_;
  std::shared_ptr<const SparoaActor> policy_;
  std::string detail_;
};

// The placement `rule` gives device `d` for `base` (its split and variant), priced on its processors'
// tables; nullopt-like: `base` unchanged when the device has one processor, runs nothing on the board,
// or lacks a table the rule needs (`why` says which).
// With `policy` (not null), the policy places the stages instead of `rule`.
Strategy placed_strategy(const AnalyticEstimator& est, const DeviceState& d, const Strategy& base, PlacementRule rule, std::string* why = nullptr,
                         double* device_seconds = nullptr, const SparoaActor* policy = nullptr);

}  // namespace coinfer
