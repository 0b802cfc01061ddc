#include "sched/scheduler_factory.hpp"

#include <algorithm>
#include <map>

#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "sched/basic_schedulers.hpp"
#include "sched/search_schedulers.hpp"
#include "sched/static_scheduler.hpp"

namespace coinfer {

std::vector<std::string> scheduler_names() {
  return {"static", "local", "offload", "gcode", "greedy", "dp", "oracle", "hierarchical"};
}

namespace {

// Reads the scheduler's own parameters; anything else is an error naming the allowed keys.
class Params {
 public:
  Params(const Scenario& s, std::vector<std::string> allowed) : s_(s), allowed_(std::move(allowed)) {
    for (const auto& kv : s.scheduler.params)
      if (std::find(allowed_.begin(), allowed_.end(), kv.first) == allowed_.end()) {
        std::vector<std::string> all = allowed_;
        for (const char* k : {"period_s", "bandwidth_threshold_pct", "charge_decision_time", "control_bytes"}) all.push_back(k);
        std::string near = nearest_word(kv.first, all);
        throw InputError(s.scheduler.where, "scheduler." + kv.first,
                         "unknown parameter for scheduler '" + s.scheduler.name + "'" +
                             (near.empty() ? "" : "; did you mean '" + near + "'?") + " (allowed: " + join(all) + ")");
      }
  }
  double number(const std::string& key, double fallback, double min_value) const {
    auto it = s_.scheduler.params.find(key);
    if (it == s_.scheduler.params.end()) return fallback;
    try {
      size_t used = 0;
      double v = std::stod(it->second, &used);
      if (used == it->second.size() && v >= min_value) return v;
    } catch (const std::exception&) {
    }
    throw InputError(s_.scheduler.where, "scheduler." + key, "'" + it->second + "' must be a number >= " + format_double(min_value));
  }
  bool flag(const std::string& key, bool fallback) const {
    auto it = s_.scheduler.params.find(key);
    if (it == s_.scheduler.params.end()) return fallback;
    if (it->second == "true") return true;
    if (it->second == "false") return false;
    throw InputError(s_.scheduler.where, "scheduler." + key, "expected true or false");
  }

 private:
  const Scenario& s_;
  std::vector<std::string> allowed_;
};

}  // namespace

std::unique_ptr<AnalyticEstimator> make_estimator(const Scenario& s, const LutSet& luts, ModelSpecs specs) {
  Objective objective = Objective::throughput;
  if (auto it = s.scheduler.params.find("objective"); it != s.scheduler.params.end()) {
    try {
      objective = parse_objective(it->second);
    } catch (const std::invalid_argument& e) {
      throw InputError(s.scheduler.where, "scheduler.objective", e.what());
    }
  }
  return std::make_unique<AnalyticEstimator>(luts, std::move(specs), objective);
}

std::unique_ptr<Scheduler> make_scheduler(const Scenario& s, const AnalyticEstimator& est) {
  const std::string& name = s.scheduler.name;
  if (name == "static") {
    Params p(s, {"helpers"});
    std::map<std::string, Strategy> strategies;
    for (const auto& d : s.devices) strategies[d.id] = d.strategy;
    return std::make_unique<StaticScheduler>(strategies, p.flag("helpers", false));
  }
  if (name == "local" || name == "offload") {
    Params p(s, {});
    return std::make_unique<UniformScheduler>(name, name == "local" ? Strategy::local() : Strategy::offload());
  }
  // dp (a knapsack of throughput over server capacity) and gcode (bandwidth presets chosen by
  // throughput) optimise system throughput only: objective latency is refused, not ignored.
  if (name == "dp" || name == "gcode")
    if (auto it = s.scheduler.params.find("objective"); it != s.scheduler.params.end() && it->second != "throughput")
      throw InputError(s.scheduler.where, "scheduler.objective",
                       "scheduler " + name + " optimises system throughput only; objective '" + it->second +
                           "' is not supported (allowed: throughput; objective latency: greedy, oracle, hierarchical)");
  if (name == "gcode") {
    Params p(s, {"min_mbps", "objective"});
    return std::make_unique<GcodeScheduler>(est, p.number("min_mbps", 0.5, 1e-6));
  }
  if (name == "greedy") {
    Params p(s, {"objective"});
    return std::make_unique<GreedyScheduler>(est);
  }
  if (name == "dp") {
    Params p(s, {"resolution", "objective"});
    return std::make_unique<DpScheduler>(est, static_cast<int>(p.number("resolution", 200, 1)));
  }
  if (name == "oracle") {
    Params p(s, {"max_schemes", "objective"});
    return std::make_unique<OracleScheduler>(est, static_cast<long long>(p.number("max_schemes", 20000, 1)));
  }
  if (name == "hierarchical") {
    Params p(s, {"iterations", "share_groups", "max_schemes", "objective", "helpers"});
    return std::make_unique<HierarchicalScheduler>(est, static_cast<int>(p.number("iterations", 10, 0)),
                                                   p.flag("share_groups", true),
                                                   static_cast<long long>(p.number("max_schemes", 20000, 1)),
                                                   p.flag("helpers", true));
  }
  std::string near = nearest_word(name, scheduler_names());
  throw InputError(s.scheduler.where, "scheduler.name",
                   "unknown scheduler '" + name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
                       " (available: " + join(scheduler_names()) + ")");
}

}  // namespace coinfer
