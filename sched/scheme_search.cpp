#include "sched/scheme_search.hpp"

#include <limits>

#include "core/device_plan.hpp"
#include "core/execution_time.hpp"
#include "core/units.hpp"
#include "sched/placement_scheduler.hpp"

namespace coinfer {

std::vector<Strategy> all_options(int n) {
  std::vector<Strategy> v = {Strategy::local(), Strategy::offload()};
  for (int k = 1; k < n; ++k) v.push_back(Strategy::pp(k));
  v.push_back(Strategy::data_parallel());
  return v;
}

std::vector<Strategy> device_options(const AnalyticEstimator& est, const DeviceState& d, const SystemState* state) {
  const int n = est.model(d.model, d.dataset).num_stages();
  std::vector<Strategy> splits = all_options(n);
  if (state) {
    const ServerState* sv = state->server(d.server);
    if (sv && !sv->cloud.empty())
      for (int k = 0; k < n; ++k)
        for (int m = k + 1; m < n; ++m) splits.push_back(Strategy::pp(k, m));
  }
  std::vector<std::string> variants = d.variant_choices;
  if (variants.empty()) variants = {""};
  std::vector<Strategy> v;
  for (const auto& choice : variants) {
    for (const Strategy& p : splits) v.push_back(choice.empty() ? p : p.with_variant(choice));
    // On a device with several processors: its device stages whole on each other processor
    // whose table the LUTs hold, for every split that runs stages on the device.
    if (!d.hardware) continue;
    const std::string run_model = model_under(d.model, Strategy::local().with_variant(choice));
    const std::vector<const LutTable*> tables = processor_tables(est.luts(), d.lut_key(run_model), nullptr, *d.hardware);
    for (int q = 1; q < d.hardware->size(); ++q) {
      const std::string& name = d.hardware->processors[static_cast<size_t>(q)];
      if (tables[static_cast<size_t>(q)] == nullptr) continue;  // no table of its own
      for (const Strategy& p : splits) {
        if ((p.kind != Strategy::Kind::local && p.kind != Strategy::Kind::pp) || p.device_split(n) == 0) continue;
        Strategy placed = choice.empty() ? p : p.with_variant(choice);
        placed.placement.parts = {PlacementPart{name, "", 1, 0, -1}};
        v.push_back(placed);
      }
    }
    // And, jointly with the split, the stages it runs placed across its processors by the
    // operator-placement DP (the least device seconds, split stages included; data_parallel: the
    // inputs it keeps): placement and split are searched together, the server's sharing by the
    // scheduler's own search.
    for (const Strategy& p : splits) {
      if (p.kind == Strategy::Kind::offload || p.device_split(n) == 0) continue;
      const Strategy base = choice.empty() ? p : p.with_variant(choice);
      const Strategy placed = placed_strategy(est, d, base, PlacementRule::dp);
      if (placed.placement.empty() || (placed.placement.parts.size() == 1 && placed.placement.parts[0].with.empty())) continue;  // whole: above
      v.push_back(placed);
    }
  }
  return v;
}

int pp_comm_of(const AnalyticEstimator& est, const DeviceState& d) { return est.model(model_under(d.model, d.strategy), d.dataset).pp_comm(); }

int pp_comp_of(const AnalyticEstimator& est, const SystemState& state, const DeviceState& d) {
  const std::string run_model = model_under(d.model, d.strategy);
  const ModelSpec& m = est.model(run_model, d.dataset);
  const LutTable& dev = est.luts().table(d.lut_key(run_model));
  const LutTable& srv = est.luts().table({state.server(d.server)->type, run_model, d.dataset});
  return m.pp_comp([&](int a, int b) { return lut_mean_time().seconds(dev, a, b, 1); },
                   [&](int a, int b) { return lut_mean_time().seconds(srv, a, b, 1); });
}

std::optional<Strategy> pp_cloud_of(const AnalyticEstimator& est, const SystemState& state, const DeviceState& d) {
  const ServerState* sv = state.server(d.server);
  const ServerState* cloud = sv && !sv->cloud.empty() ? state.server(sv->cloud) : nullptr;
  if (!cloud) return std::nullopt;
  const std::string run_model = model_under(d.model, d.strategy);
  const ModelSpec& m = est.model(run_model, d.dataset);
  const int n = m.num_stages();
  const LutTable& dev = est.luts().table(d.lut_key(run_model));
  const LutTable& edge = est.luts().table({sv->type, run_model, d.dataset});
  const LutTable& far = est.luts().table({cloud->type, run_model, d.dataset});
  const double up = mbps_to_bytes_per_s(std::min({d.link_bandwidth_mbps, state.access_point_mbps, sv->link_bandwidth_mbps}));
  const double wan = mbps_to_bytes_per_s(std::min(sv->link_bandwidth_mbps, cloud->link_bandwidth_mbps));
  const double back = mbps_to_bytes_per_s(std::min({d.link_bandwidth_mbps, state.access_point_mbps, cloud->link_bandwidth_mbps}));
  std::optional<Strategy> best;
  double best_s = std::numeric_limits<double>::infinity();
  for (int k = 0; k < n; ++k)
    for (int mm = k + 1; mm < n; ++mm) {
      const double t = lut_mean_time().seconds(dev, 0, k, 1) + lut_mean_time().seconds(edge, k, mm, 1) + lut_mean_time().seconds(far, mm, n, 1) +
                       m.bytes_at_split(k) / up + m.bytes_at_split(mm) / wan + m.bytes_at_split(n) / back;
      if (t < best_s) best_s = t, best = Strategy::pp(k, mm);
    }
  return best;
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

bool better(const Estimator& est, const SystemState& state, const Scheme& a, const Scheme& b) { return est.compare(state, a, b) > 1e-12; }

std::vector<const DeviceState*> searched_devices(const SystemState& state) {
  std::vector<const DeviceState*> v;
  for (const auto& d : state.devices)
    if (d.connected && d.generates) v.push_back(&d);
  return v;
}

int stages_of(const AnalyticEstimator& est, const DeviceState& d) { return est.model(d.model, d.dataset).num_stages(); }

}  // namespace coinfer
