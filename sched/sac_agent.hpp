#pragma once
// Soft Actor-Critic (Haarnoja et al. 2018; SparOA section 4.2) in LibTorch, the learned part of the
// SAC scheduler: a tanh-squashed Gaussian actor, two critics with Polyak-averaged targets, a learned
// temperature with target entropy -dim(A) = -1, and a replay buffer. One action per device; the
// action y = tanh(u) in [-1, 1] is stored as a = (y + 1) / 2 in [0, 1] (sched/sac_mdp.hpp).
//
// Files: a *policy* (the actor and what it was trained for; what `scheduler: {name: sac, policy: F}`
// loads) and a *checkpoint* (actor, critics, targets, temperature, optimisers, replay buffer; what
// `coinfer train sac` resumes from). Both are LibTorch archives with a format tag and the layout.
// Deterministic for a seed on one thread: parameters from torch::manual_seed, mini-batches and noise
// from seeded generators per update round.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sched/sac_batching.hpp"
#include "sched/sac_mdp.hpp"

namespace coinfer {

// Defaults: the SAC paper's (Haarnoja et al. 2018, Table 1) and stable-baselines3's, which SparOA uses,
// for batch 256, tau 0.005, buffer 10^6, automatic temperature from 1 with target entropy -dim(A);
// three deliberate departures, each a `coinfer train sac` option, measured in bench/RESULTS.md ("SAC"):
// two hidden layers of 64 (not 256), Adam 1e-3 (not 3e-4) and 8 gradient steps per decision (the
// trainer's, not 1): with the paper's values 40 episodes of Fig. 20 (30 s of wall time) left the policy
// at 88 requests/s against greedy's 447; with these it reaches 447. gamma 0.9, not 0.99: a scheme acts
// on the next windows, not a hundred decisions ahead.
struct SacHyperParams {
  int hidden = 64;
  double learning_rate = 1e-3;
  double gamma = 0.9;
  double tau = 0.005;
  int batch_size = 256;
  int buffer_size = 1000000;
  double initial_alpha = 1.0;
  double target_entropy = -1.0;  // -dim(A)
  bool allow_data_parallel = true;
  int features = 0;  // observation width; 0: the device-level layout's (sac_feature_count())
};

struct ActorNetImpl : torch::nn::Module {
  ActorNetImpl(int features, int hidden);
  // Mean and log standard deviation (clamped to [-20, 2]) of the pre-squash Gaussian.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& obs);
  torch::nn::Linear l1{nullptr}, l2{nullptr}, mean{nullptr}, log_std{nullptr};
};
TORCH_MODULE(ActorNet);

struct CriticNetImpl : torch::nn::Module {
  CriticNetImpl(int features, int hidden);
  torch::Tensor forward(const torch::Tensor& obs, const torch::Tensor& y);  // y in [-1, 1]
  torch::nn::Linear l1{nullptr}, l2{nullptr}, out{nullptr};
};
TORCH_MODULE(CriticNet);

// What a policy was trained for and on (recorded in the policy and the checkpoint).
struct SacPolicyInfo {
  int layout_version = kSacLayoutVersion;
  std::vector<std::string> feature_names = sac_feature_names();
  int hidden = 64;
  bool allow_data_parallel = true;
  std::vector<std::string> models;     // "model/dataset" the training scenarios ran
  std::string provenance;              // the training command, scenarios, episodes, seed
  int episodes = -1;                   // training episodes (-1: not recorded, policies made before it was)
  std::vector<std::string> scenarios;  // names of the training scenarios (empty: not recorded)
  std::string placement_policy;        // operator-level mode: the SparOA policy that placed the boards' stages ("": device-level)
  std::string batching_policy;         // learned batching (--learn-batching): the batching policy's file name, beside this file ("": none)
};
// The batching policy `info` names, as a path beside `policy_path` ("" when it names none).
std::string sac_batching_policy_path(const std::string& policy_path, const SacPolicyInfo& info);

// Fewer training episodes than this draw a warning where the policy is used: on Fig. 20 the policy
// reached 97.8 % of the best scheme after 5 episodes and 100 % after 10 (bench/RESULTS.md "SAC").
constexpr int kSacTrustedEpisodes = 10;
// Why `info`'s policy (file `path`) may decide badly on the scenario `scenario_name` (SacActor::trust_warnings).
std::vector<std::string> sac_trust_warnings(const std::string& path, const SacPolicyInfo& info, const std::string& scenario_name);

struct SacUpdateStats {
  double critic_loss = 0, actor_loss = 0, alpha = 0, entropy = 0;
};

class SacAgent {
 public:
  SacAgent(SacHyperParams h, std::uint64_t seed);
  const SacHyperParams& params() const { return h_; }
  ActorNet& actor() { return actor_; }
  double alpha() const;
  size_t buffer_size() const { return size_; }
  void add(const SacTransition& t);
  // `steps` gradient steps on mini-batches drawn with the stream (seed, sac_updates, round);
  // nothing when the buffer holds fewer than a batch.
  SacUpdateStats update(int steps, std::uint64_t round);

  void save_policy(const std::string& path, const SacPolicyInfo& info) const;
  void save_checkpoint(const std::string& path, const SacPolicyInfo& info, const std::string& progress_json) const;
  // Restores everything save_checkpoint wrote (the seed included); returns its progress JSON. Throws InputError naming the
  // file for another format or layout.
  std::string load_checkpoint(const std::string& path);

 private:
  SacHyperParams h_;
  std::uint64_t seed_;
  int f_;  // observation width
  ActorNet actor_{nullptr};
  CriticNet q1_{nullptr}, q2_{nullptr}, q1_target_{nullptr}, q2_target_{nullptr};
  torch::Tensor log_alpha_;
  std::unique_ptr<torch::optim::Adam> actor_opt_, critic_opt_, alpha_opt_;
  // The replay buffer: a ring of (obs, action y in [-1, 1], reward, next obs, done) rows that grows up
  // to buffer_size rows, then overwrites the oldest.
  std::vector<float> obs_, next_, act_, rew_, done_;
  size_t size_ = 0, head_ = 0;
  torch::Tensor rows(const std::vector<float>& v, int width, const std::vector<size_t>& idx) const;
};

// An actor's mean and log standard deviation for each observation (width: the actor's input width).
void sac_actor_forward(ActorNet& net, const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std);

// A bare actor file (SparOA's operator-level policy, sched/sparoa_learner.hpp): a LibTorch archive
// holding `meta` (JSON text whose "format" is `format`) and the actor. Written atomically.
void save_actor_file(const std::string& path, const std::string& format, const std::string& meta_json, const ActorNet& actor);
// Its meta record (JSON text, its "format" checked against `format`); throws InputError naming the file for
// a missing file, another format or no meta record.
std::string read_actor_meta(const std::string& path, const std::string& format);
// The actor of `path` with `features` inputs and `hidden` units; throws InputError naming the file when
// its weights do not fit that shape.
ActorNet read_actor_weights(const std::string& path, int features, int hidden);

// A policy file loaded for deciding (the plugin's SacActor). Throws InputError naming the file for a
// file that is not a coinfer SAC policy, another layout, or another action mapping.
class TorchSacActor : public SacActor {
 public:
  explicit TorchSacActor(const std::string& path);
  void forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const override;
  std::string describe() const override { return path_; }
  std::vector<std::string> trust_warnings(const std::string& scenario_name) const override { return sac_trust_warnings(path_, info_, scenario_name); }
  std::string placement_policy() const override { return info_.placement_policy; }
  std::string batching_policy() const override { return sac_batching_policy_path(path_, info_); }
  const SacPolicyInfo& info() const { return info_; }

 private:
  std::string path_;
  SacPolicyInfo info_;
  mutable ActorNet net_{nullptr};
};

// A SAC batching policy (sched/sac_batching.hpp, POLICY.batching): written atomically by the trainer,
// loaded for deciding. The constructor throws InputError naming the file for another format or layout.
void save_sac_batching_policy(const std::string& path, const SacBatchingPolicyInfo& info, const ActorNet& actor);
class TorchSacBatchingActor : public SacActor {
 public:
  explicit TorchSacBatchingActor(const std::string& path);
  void forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const override;
  std::string describe() const override { return path_; }
  const SacBatchingPolicyInfo& info() const { return info_; }

 private:
  std::string path_;
  SacBatchingPolicyInfo info_;
  mutable ActorNet net_{nullptr};
};

// A policy that keeps learning (scheduler.online: true): the agent of the policy's training checkpoint
// (POLICY.ckpt: actor, critics, temperature, optimisers, replay buffer), acting with its actor and
// learning from the transitions the scheduler observes. Throws InputError naming the checkpoint when it
// is missing or does not belong to the policy.
class OnlineSacActor : public SacActor {
 public:
  OnlineSacActor(const std::string& policy_path, const SacPolicyInfo& info);
  void forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const override;
  std::string describe() const override { return path_; }
  bool can_learn() const override { return true; }
  void learn(const std::vector<SacTransition>& transitions, int steps) override;
  std::vector<std::string> trust_warnings(const std::string& scenario_name) const override { return sac_trust_warnings(path_, info_, scenario_name); }
  std::string placement_policy() const override { return info_.placement_policy; }
  std::string batching_policy() const override { return sac_batching_policy_path(path_, info_); }

 private:
  std::string path_;
  SacPolicyInfo info_;
  std::unique_ptr<SacAgent> agent_;
  std::uint64_t round_ = 1000000;  // update rounds after training's
};

}  // namespace coinfer
