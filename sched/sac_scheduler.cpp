#include "sched/sac_scheduler.hpp"

namespace coinfer {

SacScheduler::SacScheduler(const AnalyticEstimator& est, std::unique_ptr<SacActor> actor, SacSchedulerOptions o)
    : est_(est), actor_(std::move(actor)), o_(o), noise_(o.seed, StreamPurpose::scheduler, 0) {}

Scheme SacScheduler::decide(const SystemState& state) {
  const std::vector<SacObservation> obs = sac_observe(state, est_, o_.allow_data_parallel);
  std::vector<std::vector<float>> x;
  for (const auto& o : obs) x.push_back(o.features);
  std::vector<double> mean, log_std;
  if (!x.empty()) actor_->forward(x, mean, log_std);
  if (mean.size() != x.size() || log_std.size() != x.size())
    throw SchedulerFailure("the SAC policy " + actor_->describe() + " answered " + std::to_string(mean.size()) + " actions for " +
                           std::to_string(x.size()) + " devices");
  Scheme scheme;
  SacDecision record;
  record.t_s = state.time_s;
  for (size_t i = 0; i < obs.size(); ++i) {
    double noise = 0;
    if (o_.explore) {
      const double u1 = noise_.next_unit(), u2 = noise_.next_unit();
      noise = standard_normal(u1, u2);
    }
    const double a = sac_squash(mean[i], log_std[i], noise);
    const Strategy s = action_strategy(a, obs[i].num_stages, o_.allow_data_parallel);
    scheme.strategies[obs[i].device] = s;
    record.steps.push_back({obs[i].device, obs[i].features, a, s.to_string()});
  }
  if (o_.helpers)
    for (const auto& d : state.devices)
      if (d.connected && !d.generates) scheme.helpers.push_back(d.id);
  detail_ = sac_decision_to_json(record);
  return scheme;
}

}  // namespace coinfer
