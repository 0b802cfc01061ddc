#pragma once
// SparOA's operator scheduler trained (docs/PAPERS.md: SparOA, Alg. 1): episodes of
// the operator MDP (sched/sparoa_mdp.hpp), each one inference of the model on the board priced by the
// simulator's segment rule, actions sampled from the SAC policy (sched/sac_agent.hpp), the transitions
// in the replay buffer, gradient steps after each episode. The result is the best deterministic policy's
// placement and a learning curve. LibTorch; deterministic for a seed on one thread. A call blocks for
// the training (1000 episodes of a nine-stage model: about 15 s here); it advances no simulated time.
//
// Policy files (format "coinfer-sparoa-policy"): the actor and SparoaPolicyInfo (the board, model and
// stages it was trained for), what `scheduler: {name: placement, rule: sac, policy: F}` loads.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sched/sac_agent.hpp"
#include "sched/sparoa_mdp.hpp"

namespace coinfer {

constexpr const char* kSparoaPolicyFormat = "coinfer-sparoa-policy";

// Defaults and their reasons (sched/README.md "SparOA"): SB3's SAC (which SparOA uses) with learning
// starting after `warmup_episodes` of uniform random actions (SB3's learning_starts), one gradient step
// per environment step (SB3's train_freq 1), gamma 1 (an episode is one inference: its return is exactly
// minus its latency, nothing to discount), batch 64 (the buffer holds k transitions per episode).
struct SparoaTrainOptions {
  int episodes = 1000;
  int warmup_episodes = 30;
  int updates_per_step = 1;
  int eval_every = 10;  // a deterministic rollout for the learning curve every this many episodes
  // Train one policy for every split between board and server: each episode draws the board's stage
  // count k uniformly from 1..n (the observation's split_share says which); the kept policy is the one
  // whose placements summed over every split, each over its reference, are least. The board's
  // thresholds must then cover all n stages.
  bool any_split = false;
  std::uint64_t seed = 1;
  SparoaRewardWeights reward;
  SacHyperParams hyper = [] {
    SacHyperParams h;
    h.gamma = 1.0;
    h.batch_size = 64;
    h.buffer_size = 100000;
    h.allow_data_parallel = false;
    return h;
  }();
  // Called after each evaluation (episode, its deterministic placement's device seconds).
  std::function<void(int episode, double device_seconds)> progress;
};

struct SparoaCurvePoint {
  int episode = 0;
  double wall_s = 0;          // training time so far
  double episode_return = 0;  // the sampled episode's
  double device_seconds = 0;  // the deterministic policy's placement
  double score = 0;           // what the kept policy is chosen by: device_seconds over the reference (any split: summed over every split)
  double alpha = 0;
};

struct SparoaTrainResult {
  // The deterministic policy of the best evaluation (SB3's EvalCallback keeps the best model; the
  // environment is deterministic, so an evaluation is exact): its actor is what the agent holds after.
  Placement placement;
  double device_seconds = 0;
  double reference_seconds = 0;  // the better single-processor placement
  std::vector<SparoaCurvePoint> curve;
  // SparOA Fig. 10's convergence time: the training time until an evaluation's score first came within
  // 1 % of the kept policy's.
  double converged_s = 0;
  int converged_episode = 0;
  double wall_s = 0;
};

// Trains on `board` (whose borrowed parts must outlive the call); `agent` (made with features =
// sparoa_feature_count()) holds the trained networks afterwards.
SparoaTrainResult train_sparoa(const SparoaBoard& board, const SparoaTrainOptions& o, SacAgent& agent);

// The deterministic action of an actor for one observation: (tanh(mean) + 1) / 2.
double sparoa_policy_action(ActorNet& actor, const std::vector<float>& obs);

void save_sparoa_policy(const std::string& path, const SparoaPolicyInfo& info, const ActorNet& actor);

// A policy file loaded for deciding. Throws InputError naming the file (and key) for a missing file,
// another format or layout, or weights that do not fit.
class SparoaPolicy : public SparoaActor {
 public:
  explicit SparoaPolicy(const std::string& path);
  const SparoaPolicyInfo& info() const override { return info_; }
  double act(const std::vector<float>& obs) const override;

 private:
  SparoaPolicyInfo info_;
  mutable ActorNet net_{nullptr};
};

}  // namespace coinfer
