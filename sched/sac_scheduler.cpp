#include "sched/sac_scheduler.hpp"

#include <stdexcept>

#include "sched/placement_scheduler.hpp"
#include "sched/sac_batching.hpp"

namespace coinfer {

SacScheduler::SacScheduler(const AnalyticEstimator& est, std::unique_ptr<SacActor> actor, SacSchedulerOptions o)
    : est_(est), actor_(std::move(actor)), o_(o), noise_(o.seed, StreamPurpose::scheduler, 0) {
  if (o_.online && !actor_->can_learn())
    throw std::invalid_argument("online learning needs the policy's training checkpoint (" + actor_->describe() + ".ckpt)");
}

std::vector<SacTransition> SacScheduler::online_transitions(const SystemState& state, const std::vector<SacObservation>& obs) const {
  const double window = state.time_s - previous_.t_s;
  std::vector<const SacStep*> steps;
  std::vector<double> l, mb;
  std::vector<bool> switched;
  std::vector<const std::vector<float>*> next;
  for (const SacStep& s : previous_.steps) {
    const DeviceState* d = state.device(s.device);
    auto c = counters_.find(s.device);
    if (!d || c == counters_.end()) continue;
    steps.push_back(&s);
    // Online the age of the oldest unfinished request is not in the state: a device that completed
    // nothing while it had requests is charged the window.
    l.push_back(sac_latency_term(o_.reward, window, d->completed - c->second.first, d->latency_sum_s - c->second.second, d->unfinished > 0, window,
                                 sac_reference_s(s.features)));
    mb.push_back(0);  // bytes per window are not in the state: the energy term is offline only
    auto b = strategy_before_.find(s.device);
    switched.push_back(b != strategy_before_.end() && b->second != s.strategy);
    const std::vector<float>* n = nullptr;
    for (const auto& o : obs)
      if (o.device == s.device) n = &o.features;
    next.push_back(n);
  }
  const std::vector<double> rewards = sac_window_rewards(o_.reward, l, mb, switched);
  std::vector<SacTransition> out;
  for (size_t k = 0; k < steps.size(); ++k) {
    SacTransition t;
    t.obs = steps[k]->features;
    t.action = static_cast<float>(steps[k]->action);
    t.reward = static_cast<float>(rewards[k]);
    t.done = next[k] == nullptr;  // the device left
    t.next_obs = next[k] ? *next[k] : t.obs;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<double> SacScheduler::act(const SacActor& actor, const std::vector<std::vector<float>>& x, const char* policy, const char* agents) {
  std::vector<double> mean, log_std;
  if (!x.empty()) actor.forward(x, mean, log_std);
  if (mean.size() != x.size() || log_std.size() != x.size())
    throw SchedulerFailure(std::string("the ") + policy + " " + actor.describe() + " answered " + std::to_string(mean.size()) + " actions for " +
                           std::to_string(x.size()) + " " + agents);
  std::vector<double> actions;
  for (size_t i = 0; i < x.size(); ++i) {
    double noise = 0;
    if (o_.explore) {
      const double u1 = noise_.next_unit(), u2 = noise_.next_unit();
      noise = standard_normal(u1, u2);
    }
    actions.push_back(sac_squash(mean[i], log_std[i], noise));
  }
  return actions;
}

Scheme SacScheduler::decide(const SystemState& state) {
  const std::vector<SacObservation> obs = sac_observe(state, est_, o_.allow_data_parallel);
  if (o_.online && have_previous_ && state.time_s > previous_.t_s) {
    const std::vector<SacTransition> t = online_transitions(state, obs);
    if (!t.empty()) actor_->learn(t, o_.updates_per_decision);
  }
  std::vector<std::vector<float>> x;
  for (const auto& o : obs) x.push_back(o.features);
  const std::vector<double> actions = act(*actor_, x, "SAC policy", "devices");
  Scheme scheme;
  SacDecision record;
  record.t_s = state.time_s;
  for (size_t i = 0; i < obs.size(); ++i) {
    const double a = actions[i];
    Strategy s = action_strategy(a, obs[i].num_stages, o_.allow_data_parallel);
    if (o_.placement_policy)
      if (const DeviceState* d = state.device(obs[i].device))
        s = placed_strategy(est_, *d, s, PlacementRule::dp, nullptr, nullptr, o_.placement_policy.get());
    scheme.strategies[obs[i].device] = s;
    record.steps.push_back({obs[i].device, obs[i].features, a, s.to_string()});
  }
  if (o_.batching_policy) {
    const std::vector<SacBatchingObservation> servers = sac_batching_observe(state, est_, scheme.strategies, o_.batching_choices);
    std::vector<std::vector<float>> sx;
    for (const auto& o : servers) sx.push_back(o.features);
    const std::vector<double> server_actions = act(*o_.batching_policy, sx, "SAC batching policy", "servers");
    for (size_t i = 0; i < servers.size(); ++i) {
      const double a = server_actions[i];
      const SacBatchingObservation& o = servers[i];
      const BatchSpec spec = o.candidates[static_cast<size_t>(sac_batching_slot(a, static_cast<int>(o.candidates.size())))];
      const ServerState* sv = state.server(o.server);
      if (sv && spec != BatchSpec{sv->batch_window_ms, sv->batch_max_size}) scheme.batching[o.server] = spec;
      record.servers.push_back({o.server, o.features, a, spec, o.devices});
    }
  }
  if (o_.helpers)
    for (const auto& d : state.devices)
      if (d.connected && !d.generates) scheme.helpers.push_back(d.id);
  detail_ = sac_decision_to_json(record);
  if (o_.online) {
    for (const SacStep& s : previous_.steps) strategy_before_[s.device] = s.strategy;
    previous_ = record;
    have_previous_ = true;
    for (const auto& d : state.devices) counters_[d.id] = {d.completed, d.latency_sum_s};
  }
  return scheme;
}

}  // namespace coinfer
