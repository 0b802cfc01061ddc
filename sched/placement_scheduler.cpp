#include "sched/placement_scheduler.hpp"

#include <cmath>
#include <stdexcept>

#include "core/device_plan.hpp"
#include "core/model_spec.hpp"
#include "core/text_util.hpp"

#include <nlohmann/json.hpp>

namespace coinfer {

Strategy placed_strategy(const AnalyticEstimator& est, const DeviceState& d, const Strategy& base, PlacementRule rule, std::string* why,
                         double* device_seconds, const SparoaActor* policy) {
  if (!d.hardware || d.hardware->size() < 2) return base;
  if (base.kind == Strategy::Kind::offload) return base;
  const std::string run_model = model_under(d.model, base);
  const ModelSpec& m = est.model(run_model, d.dataset);
  // data_parallel: the inputs it keeps run whole on the board.
  const int k = base.placed_stages(m.num_stages());
  if (k <= 0) return base;
  const LutKey own = d.lut_key(run_model);
  if (!est.luts().contains(own)) return base;
  const std::vector<const LutTable*> tables = processor_tables(est.luts(), own, &est.luts().table(own), *d.hardware);
  try {
    if (policy) {
      const SparoaPolicyInfo& info = policy->info();
      const std::string model_key = run_model + "/" + d.dataset;
      if (info.device_type != d.type || info.model != model_key || (info.k != 0 && info.k != k) || info.processors != d.hardware->processors)
        throw std::invalid_argument("the SparOA policy was trained for " + (info.k ? std::to_string(info.k) : std::string("any number of")) +
                                    " stages of " + info.model + " on a " + info.device_type + ", not " + std::to_string(k) + " of " + model_key +
                                    " on a " + d.type + " (train one with coinfer train sparoa)");
      double seconds = 0;
      Strategy s = base;
      s.placement = sparoa_place(*policy, SparoaBoard{&m, k, d.hardware.get(), tables}, &seconds);
      if (device_seconds) *device_seconds = seconds;
      return s;
    }
    const PlacementChoice c = place_stages(rule, m, k, *d.hardware, tables);
    Strategy s = base;
    s.placement = c.placement;
    if (device_seconds) *device_seconds = c.device_seconds;
    return s;
  } catch (const std::invalid_argument& e) {
    if (why) *why = e.what();
    return base;
  }
}

Scheme PlacementScheduler::decide(const SystemState& state) {
  Scheme s;
  nlohmann::ordered_json devices = nlohmann::ordered_json::object();
  for (const auto& d : state.devices) {
    if (!d.connected) continue;
    auto it = configured_.find(d.id);
    Strategy base = it == configured_.end() ? d.strategy : it->second;
    base.placement = Placement{};
    std::string why;
    double seconds = 0;
    const Strategy placed = placed_strategy(est_, d, base, rule_, &why, &seconds, policy_.get());
    s.strategies[d.id] = placed.placement.empty() ? (it == configured_.end() ? d.strategy : it->second) : placed;
    if (!placed.placement.empty())
      devices[d.id] = {{"placement", placed.placement.to_string()}, {"device_ms", seconds * 1e3}};
    else if (!why.empty())
      devices[d.id] = {{"kept", why}};
  }
  detail_ = devices.empty() ? "" : nlohmann::ordered_json{{"rule", policy_ ? std::string("sac") : rule_name(rule_)}, {"devices", devices}}.dump();
  return s;
}

}  // namespace coinfer
