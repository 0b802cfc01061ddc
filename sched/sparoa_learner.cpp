#include "sched/sparoa_learner.hpp"

#include <chrono>
#include <cmath>
#include <limits>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "sched/policy_meta.hpp"

namespace coinfer {

double sparoa_policy_action(ActorNet& actor, const std::vector<float>& obs) {
  std::vector<double> mean, log_std;
  sac_actor_forward(actor, {obs}, mean, log_std);
  return sac_squash(mean[0], log_std[0], 0);
}

SparoaTrainResult train_sparoa(const SparoaBoard& board, const SparoaTrainOptions& o, SacAgent& agent) {
  if (o.episodes < 1) throw std::invalid_argument("SparOA training needs at least one episode");
  SparoaEnvironment env(board, o.reward);
  SparoaTrainResult out;
  out.reference_seconds = env.reference_seconds();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&start] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // SB3's EvalCallback with a best-model path: the actor of the best deterministic evaluation is kept.
  std::vector<torch::Tensor> best_params;
  double best_score = std::numeric_limits<double>::infinity();
  const int n = board.model->num_stages();
  const auto board_for = [&board](int k) {
    SparoaBoard b = board;
    b.k = k;
    return b;
  };
  const auto evaluate = [&](int episode, double ret) {
    const auto act = [&agent](const std::vector<float>& obs) { return sparoa_policy_action(agent.actor(), obs); };
    SparoaEnvironment probe(board, o.reward);
    double seconds = 0;
    sparoa_rollout(probe, act, &seconds);
    // Any split: the score is the sum over every split of the placement's seconds over that split's
    // reference (each split counts alike).
    double score = seconds / probe.reference_seconds();
    if (o.any_split) {
      score = 0;
      for (int k = 1; k <= n; ++k) {
        SparoaEnvironment e(board_for(k), o.reward);
        double s = 0;
        sparoa_rollout(e, act, &s);
        score += s / e.reference_seconds();
      }
    }
    out.curve.push_back({episode, elapsed(), ret, seconds, score, agent.alpha()});
    if (score < best_score) {
      torch::NoGradGuard g;
      best_score = score;
      best_params.clear();
      for (const auto& p : agent.actor()->parameters()) best_params.push_back(p.detach().clone());
    }
    if (o.progress) o.progress(episode, seconds);
  };
  std::uint64_t round = 0;
  for (int episode = 1; episode <= o.episodes; ++episode) {
    // Alg. 1 lines 7-24: one inference, each operator's share sampled from the policy (uniformly
    // during the warm-up); (s, a, r, s', done) into the replay buffer.
    RandomStream noise(o.seed, StreamPurpose::sparoa_episode, static_cast<std::uint64_t>(episode));
    if (o.any_split) env = SparoaEnvironment(board_for(1 + static_cast<int>(noise.next_u64() % static_cast<std::uint64_t>(n))), o.reward);
    env.reset();
    double ret = 0;
    while (!env.done()) {
      SacTransition tr;
      tr.obs = env.observe();
      double a;
      if (episode <= o.warmup_episodes) {
        a = noise.next_unit();
      } else {
        std::vector<double> mean, log_std;
        sac_actor_forward(agent.actor(), {tr.obs}, mean, log_std);
        a = sac_squash(mean[0], log_std[0], standard_normal(noise.next_unit(), noise.next_unit()));
      }
      const double r = env.step(a);
      ret += r;
      tr.action = static_cast<float>(a);
      tr.reward = static_cast<float>(r);
      tr.done = env.done();
      tr.next_obs = env.observe();
      agent.add(tr);
    }
    // Lines 25-32: gradient steps (Bellman backup, maximum-entropy policy, temperature, soft targets).
    if (episode > o.warmup_episodes) agent.update(o.updates_per_step * env.steps(), round++);
    if (episode % std::max(1, o.eval_every) == 0 || episode == o.episodes) evaluate(episode, ret);
  }
  out.wall_s = elapsed();
  {
    torch::NoGradGuard g;
    auto params = agent.actor()->parameters();
    for (size_t i = 0; i < params.size() && i < best_params.size(); ++i) params[i].copy_(best_params[i]);
  }
  SparoaEnvironment final_env(board, o.reward);
  out.placement = sparoa_rollout(
      final_env, [&agent](const std::vector<float>& obs) { return sparoa_policy_action(agent.actor(), obs); }, &out.device_seconds);
  // Convergence: the first evaluation within 1 % of the kept policy's score.
  for (const auto& p : out.curve)
    if (p.score <= 1.01 * best_score) {
      out.converged_episode = p.episode;
      out.converged_s = p.wall_s;
      break;
    }
  return out;
}

void save_sparoa_policy(const std::string& path, const SparoaPolicyInfo& info, const ActorNet& actor) {
  save_actor_file(path, kSparoaPolicyFormat, sparoa_info_to_json(info), actor);
}

SparoaPolicy::SparoaPolicy(const std::string& path) {
  const std::string meta = read_actor_meta(path, kSparoaPolicyFormat);
  try {
    info_ = sparoa_info_from_json(meta);
  } catch (const std::invalid_argument& e) {
    throw policy_meta_error(path, e);
  }
  net_ = read_actor_weights(path, sparoa_feature_count(), info_.hidden);
}

double SparoaPolicy::act(const std::vector<float>& obs) const { return sparoa_policy_action(net_, obs); }

}  // namespace coinfer
