#pragma once
// The SAC scheduler (sched/README.md "SAC"): at each trigger every connected device with inputs of
// its own observes (sched/sac_mdp.hpp), the shared policy gives it an action in [0, 1], and the action's
// slot is its strategy. Deterministic: without exploration the action is the squashed mean; with
// exploration (training episodes) the noise comes from the stream (seed, scheduler, 0). Torch-free:
// the policy network's forward pass is a SacActor from the learned plugin. In the operator-level mode a
// SparOA policy then places each device's board stages on its processors (the record's strategy says
// where). With a batching policy each server's batching is the action of a second policy
// (sched/sac_batching.hpp).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/random_stream.hpp"
#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"
#include "sched/batching_choice.hpp"
#include "sched/sac_mdp.hpp"
#include "sched/sparoa_mdp.hpp"

namespace coinfer {

struct SacSchedulerOptions {
  bool explore = false;             // sample actions (training) instead of the mean
  bool allow_data_parallel = true;  // the action's last slot is data_parallel (must match the policy)
  bool helpers = true;              // name every connected idle device a helper
  std::uint64_t seed = 1;
  // Keep learning while running (scheduler.online): at each decision the previous window's rewards,
  // from the state's completed counts and latency sums, train the actor before it acts.
  bool online = false;
  int updates_per_decision = 8;
  SacRewardWeights reward;
  // Operator-level mode: after the policy's split, a SparOA policy (sched/sparoa_mdp.hpp,
  // trained with --any-split) places the board stages of each device it was trained for. Null: device-level.
  std::shared_ptr<const SparoaActor> placement_policy;
  // Batching learned (sched/sac_batching.hpp): a second policy whose action chooses each
  // server's batch window and size among `batching_choices`, after the devices acted (with exploration,
  // its noise follows the devices' on the same stream). Null: the scheme sets no batching.
  std::shared_ptr<const SacActor> batching_policy;
  BatchingChoices batching_choices;
};

class SacScheduler : public Scheduler {
 public:
  // `est` must outlive the scheduler.
  SacScheduler(const AnalyticEstimator& est, std::unique_ptr<SacActor> actor, SacSchedulerOptions o);
  std::string name() const override { return "sac"; }
  Scheme decide(const SystemState& state) override;
  std::string decision_detail() const override { return detail_; }
  bool chooses_batching() const override { return o_.batching_policy != nullptr; }

 private:
  const AnalyticEstimator& est_;
  std::unique_ptr<SacActor> actor_;
  SacSchedulerOptions o_;
  RandomStream noise_;
  std::string detail_;
  // The actions of `actor` for the observations `x` (mean, or with exploration a draw from the noise
  // stream, row by row); throws SchedulerFailure when it answers another count ("the POLICY ... for N AGENTS").
  std::vector<double> act(const SacActor& actor, const std::vector<std::vector<float>>& x, const char* policy, const char* agents);
  // Online learning: the previous decision, and each device's counters then.
  std::vector<SacTransition> online_transitions(const SystemState& state, const std::vector<SacObservation>& obs) const;
  bool have_previous_ = false;
  SacDecision previous_;
  std::map<std::string, std::pair<long long, double>> counters_;  // device -> (completed, latency sum)
  std::map<std::string, std::string> strategy_before_;            // device -> strategy before the previous decision
};

}  // namespace coinfer
