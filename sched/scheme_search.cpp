#include "sched/scheme_search.hpp"
#include "core/execution_time.hpp"

namespace coinfer {

std::vector<Strategy> all_options(int n) {
  std::vector<Strategy> v = {Strategy::local(), Strategy::offload()};
  for (int k = 1; k < n; ++k) v.push_back(Strategy::pp(k));
  v.push_back(Strategy::data_parallel());
  return v;
}

std::vector<Strategy> device_options(const AnalyticEstimator& est, const DeviceState& d) {
  const std::vector<Strategy> placements = all_options(est.model(d.model, d.dataset).num_stages());
  if (d.variant_choices.empty()) return placements;
  std::vector<Strategy> v;
  for (const auto& choice : d.variant_choices)
    for (const Strategy& p : placements) v.push_back(p.with_variant(choice));
  return v;
}

int pp_comm_of(const AnalyticEstimator& est, const DeviceState& d) {
  return est.model(model_under(d.model, d.strategy), d.dataset).pp_comm();
}

int pp_comp_of(const AnalyticEstimator& est, const SystemState& state, const DeviceState& d) {
  const std::string run_model = model_under(d.model, d.strategy);
  const ModelSpec& m = est.model(run_model, d.dataset);
  const LutTable& dev = est.luts().table(d.lut_key(run_model));
  const LutTable& srv = est.luts().table({state.server(d.server)->type, run_model, d.dataset});
  return m.pp_comp([&](int a, int b) { return lut_mean_time().seconds(dev, a, b, 1); },
                   [&](int a, int b) { return lut_mean_time().seconds(srv, a, b, 1); });
}

Scheme current_scheme(const SystemState& state) {
  Scheme s;
  for (const auto& d : state.devices)
    if (d.connected) s.strategies[d.id] = d.strategy;
  return s;
}

std::vector<std::string> idle_helpers(const SystemState& state) {
  std::vector<std::string> v;
  for (const auto& d : state.devices)
    if (d.connected && !d.generates) v.push_back(d.id);
  return v;
}

bool better(const Estimator& est, const SystemState& state, const Scheme& a, const Scheme& b) {
  return est.compare(state, a, b) > 1e-12;
}

}  // namespace coinfer
