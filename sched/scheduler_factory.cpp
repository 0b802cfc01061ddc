#include "sched/scheduler_factory.hpp"

#include <mutex>

#include "sched/external_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <functional>
#include <set>

#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/text_util.hpp"
#include "sched/dp_scheduler.hpp"
#include "sched/gcode_scheduler.hpp"
#include "sched/greedy_scheduler.hpp"
#include "sched/hierarchical_scheduler.hpp"
#include "sched/oracle_scheduler.hpp"
#include "sched/uniform_scheduler.hpp"
#include "sched/batching_choice.hpp"
#include "sched/server_choice.hpp"
#include "sched/learned_plugin.hpp"
#include "sched/placement_scheduler.hpp"
#include "sched/sac_scheduler.hpp"
#include "sched/static_scheduler.hpp"
#include "sched/system_graph.hpp"

namespace coinfer {

namespace {

// Reads the scheduler's own parameters; anything else is an error naming the allowed keys.
class Params {
 public:
  Params(const Scenario& s, std::vector<std::string> allowed) : s_(s), allowed_(std::move(allowed)) {
    for (const auto& kv : s.scheduler.params)
      if (std::find(allowed_.begin(), allowed_.end(), kv.first) == allowed_.end()) {
        std::vector<std::string> all = allowed_;
        for (const char* k : {"period_s", "bandwidth_threshold_pct", "load_threshold", "charge_decision_time", "control_bytes"}) all.push_back(k);
        std::string near = nearest_word(kv.first, all);
        throw InputError(s.scheduler.where, "scheduler." + kv.first,
                         "unknown parameter for scheduler '" + s.scheduler.name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
                             " (allowed: " + join(all) + ")");
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
  std::string text(const std::string& key, const std::string& fallback) const {
    auto it = s_.scheduler.params.find(key);
    return it == s_.scheduler.params.end() ? fallback : it->second;
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

// scheduler.<key> as a file: relative to the scenario's folder (else as given); "" when absent.
std::string scenario_relative_file(const Scenario& s, const std::string& key) {
  auto it = s.scheduler.params.find(key);
  if (it == s.scheduler.params.end() || it->second.empty()) return "";
  namespace fs = std::filesystem;
  std::string file = it->second;
  if (fs::path(file).is_relative() && !s.file.empty()) {
    const fs::path beside = fs::path(s.file).parent_path() / file;
    if (fs::exists(beside) || !fs::exists(file)) file = beside.lexically_normal().string();
  }
  return file;
}

// A scheduler together with the learned estimator it ranks with (destroyed after the scheduler).
class WithOwnedEstimator : public Scheduler {
 public:
  WithOwnedEstimator(std::unique_ptr<Estimator> est, std::unique_ptr<Scheduler> inner) : est_(std::move(est)), inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  Scheme decide(const SystemState& state) override { return inner_->decide(state); }
  std::string decision_detail() const override { return inner_->decision_detail(); }

 private:
  std::unique_ptr<Estimator> est_;
  std::unique_ptr<Scheduler> inner_;
};

// The estimator that ranks schemes for greedy, dp and hierarchical: scheduler.estimator analytic (the
// default: nullptr, the analytic estimator ranks) or gin with scheduler.predictor, a model file from
// `coinfer predictor train` (relative to the scenario's folder), loaded through the plugin.
std::unique_ptr<Estimator> ranking_estimator(const Scenario& s, const Params& p, const AnalyticEstimator& est) {
  const std::string kind = p.text("estimator", "analytic");
  if (kind == "analytic") {
    if (s.scheduler.params.count("predictor"))
      throw InputError(s.scheduler.where, "scheduler.predictor", "a predictor file is read only with estimator: gin");
    return nullptr;
  }
  if (kind != "gin") throw InputError(s.scheduler.where, "scheduler.estimator", "'" + kind + "' is not allowed (analytic, gin)");
  if (est.objective() != Objective::throughput)
    throw InputError(s.scheduler.where, "scheduler.objective",
                     "estimator gin predicts system throughput; objectives latency and energy need estimator: analytic");
  if (est.constraints().any())
    throw InputError(
        s.scheduler.where, "scheduler.estimator",
        "estimator gin predicts system throughput only; constraints (max_p95_ms, min_throughput_rps, max_energy_j) need estimator: analytic");
  for (const ServerSpec& sv : s.servers)  // its system graph has a device and a server part per device (ACE-GNN Sec. III-B)
    if (!sv.cloud.empty())
      throw InputError(sv.where, "servers (id " + sv.id + ").cloud",
                       "estimator gin's system graph has no cloud tier (pp(k,m)); use estimator: analytic with a cloud");
  const std::string file = scenario_relative_file(s, "predictor");
  if (file.empty())
    throw InputError(s.scheduler.where, "scheduler.predictor",
                     "estimator gin needs the predictor file (scheduler.predictor: a model from coinfer predictor train)");
  if (!std::filesystem::is_regular_file(file))  // located at the key that named it
    throw InputError(s.scheduler.where, "scheduler.predictor", "no such predictor file '" + file + "' (a model from coinfer predictor train)");
  std::set<std::string> types, models;
  for (const auto& d : s.devices) types.insert(d.type), models.insert(d.model + "/" + d.dataset);
  std::vector<std::string> warnings;
  auto e = load_gin_estimator(file, est, {types.begin(), types.end()}, {models.begin(), models.end()},
                              largest_node_latency_ms(scenario_state(s, 0), est), warnings);
  for (const auto& w : warnings) log::warn_once("sched", w);
  return e;
}

std::unique_ptr<Scheduler> owning(std::unique_ptr<Estimator> rank, std::unique_ptr<Scheduler> inner) {
  if (!rank) return inner;
  return std::make_unique<WithOwnedEstimator>(std::move(rank), std::move(inner));
}

}  // namespace

// The largest latency feature the scenario's system graphs can hold at time 0: every device all local
// (whole model on the device) and all offloaded (whole model on the server, the input on the link).
double largest_node_latency_ms(const SystemState& state, const AnalyticEstimator& est) {
  double top = 0;
  for (const Strategy& st : {Strategy::local(), Strategy::offload()}) {
    Scheme sc;
    for (const auto& d : state.devices)
      if (d.connected) sc.strategies[d.id] = st;
    const SystemGraph g = SystemGraph::build(state, sc, est.luts(), est.models());
    for (double x : g.latencies_ms()) top = std::max(top, x);
  }
  return top;
}

std::string estimator_of(const Scenario& s) {
  const std::string& n = s.scheduler.name;
  if (n == "static" || n == "local" || n == "offload") return "";
  if (n == "sac") return "sac policy (" + scenario_relative_file(s, "policy") + ")";
  if (n == "placement") {
    auto rule = s.scheduler.params.find("rule");
    if (rule != s.scheduler.params.end() && rule->second == "sac") return "sparoa policy (" + scenario_relative_file(s, "policy") + ")";
  }
  auto it = s.scheduler.params.find("estimator");
  if (it != s.scheduler.params.end() && it->second == "gin") return "gin (" + scenario_relative_file(s, "predictor") + ")";
  return "analytic";
}

std::unique_ptr<AnalyticEstimator> make_estimator(const Scenario& s, const LutSet& luts, ModelSpecs specs) {
  Objective objective = Objective::throughput;
  if (auto it = s.scheduler.params.find("objective"); it != s.scheduler.params.end()) {
    try {
      objective = parse_objective(it->second);
    } catch (const std::invalid_argument& e) {
      throw InputError(s.scheduler.where, "scheduler.objective", e.what());
    }
  }
  // Constraints (sched/README.md "Energy and tail latency"): for the schedulers that compare schemes.
  Constraints k;
  auto number = [&](const char* key, double min_exclusive) {
    auto it = s.scheduler.params.find(key);
    try {
      size_t used = 0;
      const double v = std::stod(it->second, &used);
      if (used == it->second.size() && std::isfinite(v) && v > min_exclusive) return v;
    } catch (const std::exception&) {
    }
    throw InputError(s.scheduler.where, std::string("scheduler.") + key, "'" + it->second + "' must be a number > " + format_double(min_exclusive));
  };
  if (s.scheduler.params.count("max_p95_ms")) k.max_p95_s = number("max_p95_ms", 0) * 1e-3;
  if (s.scheduler.params.count("min_throughput_rps")) k.min_throughput_rps = number("min_throughput_rps", 0);
  if (s.scheduler.params.count("max_energy_j")) k.max_energy_j = number("max_energy_j", 0);
  return std::make_unique<AnalyticEstimator>(luts, std::move(specs), objective, k);
}

namespace {
// A scheduler from outside sched/ (core/scheduler.hpp's registry), its every scheme checked before an
// engine acts on it: each device named exists, each split is within its model's stages, each helper
// is a device of the state, each batching names a server within its limits, each move names a device
// and a server whose type has a LUT for it. A violation is a SchedulerFailure naming it.
class CheckedScheduler : public Scheduler {
 public:
  CheckedScheduler(std::unique_ptr<Scheduler> inner, const AnalyticEstimator& est) : inner_(std::move(inner)), est_(est) {}
  std::string name() const override { return inner_->name(); }
  std::string decision_detail() const override { return inner_->decision_detail(); }
  Scheme decide(const SystemState& state) override {
    Scheme scheme = inner_->decide(state);
    for (const auto& [id, strategy] : scheme.strategies) {
      const DeviceState* d = nullptr;
      for (const auto& x : state.devices)
        if (x.id == id) d = &x;
      if (!d) throw SchedulerFailure("scheduler " + name() + " chose a strategy for '" + printable(id, 80) + "', which is no device of the system");
      const int n = est_.model(d->model, d->dataset).num_stages();
      if (strategy.kind == Strategy::Kind::pp && (strategy.split < 0 || strategy.split > n))
        throw SchedulerFailure("scheduler " + name() + " chose " + strategy.to_string() + " for device '" + id + "', whose model " + d->model + "/" +
                               d->dataset + " has " + std::to_string(n) + " stages (pp(0).. pp(" + std::to_string(n) + "))");
      if (strategy.has_cloud_part()) {  // pp(k,m): m < n, and the device's server (after this scheme) has a cloud
        if (strategy.cloud_split >= n)
          throw SchedulerFailure("scheduler " + name() + " chose " + strategy.to_string() + " for device '" + id + "', whose model has " +
                                 std::to_string(n) + " stages: the cloud's part [m,n) needs m < " + std::to_string(n));
        const auto moved = scheme.servers.find(id);
        const std::string server = moved != scheme.servers.end() ? moved->second : d->server;
        const ServerState* sv = state.server(server);
        if (!sv || sv->cloud.empty())
          throw SchedulerFailure("scheduler " + name() + " chose " + strategy.to_string() + " for device '" + id + "', whose server '" +
                                 printable(server, 80) + "' has no cloud (servers[].cloud)");
      }
    }
    for (const auto& h : scheme.helpers) {
      const DeviceState* d = nullptr;
      for (const auto& x : state.devices)
        if (x.id == h) d = &x;
      if (!d) throw SchedulerFailure("scheduler " + name() + " named helper '" + printable(h, 80) + "', which is no device of the system");
      if (d->generates)
        throw SchedulerFailure("scheduler " + name() + " named helper '" + h +
                               "', which has inputs of its own; helpers are idle devices (workload: {arrival: none})");
    }
    for (const auto& [id, spec] : scheme.batching) {
      const ServerState* sv = state.server(id);
      if (!sv) throw SchedulerFailure("scheduler " + name() + " set the batching of '" + printable(id, 80) + "', which is no server of the system");
      if (!std::isfinite(spec.window_ms) || spec.window_ms < 0 || spec.window_ms > limits::kMaxLatencyMs)
        throw SchedulerFailure("scheduler " + name() + " set a batch window of " + format_double(spec.window_ms) + " ms for server '" + id +
                               "'; allowed: 0.." + format_double(limits::kMaxLatencyMs) + " ms");
      if (spec.max_size < 1 || spec.max_size > sv->batch_size_limit)
        throw SchedulerFailure("scheduler " + name() + " set a batch size of " + std::to_string(spec.max_size) + " for server '" + id +
                               "'; allowed: 1.." + std::to_string(sv->batch_size_limit) +
                               " (its servers[].batch.max_size, up to which its LUTs are checked)");
    }
    for (const auto& [id, server] : scheme.servers) {  // server choice: a known device, to a known server that can run its model
      const DeviceState* d = state.device(id);
      if (!d) throw SchedulerFailure("scheduler " + name() + " moved '" + printable(id, 80) + "', which is no device of the system");
      const ServerState* sv = state.server(server);
      if (!sv)
        throw SchedulerFailure("scheduler " + name() + " moved device '" + id + "' to '" + printable(server, 80) +
                               "', which is no server of the system");
      auto st = scheme.strategies.find(id);
      const LutKey key{sv->type, model_under(d->model, st != scheme.strategies.end() ? st->second : d->strategy), d->dataset};
      if (!est_.luts().contains(key))
        throw SchedulerFailure("scheduler " + name() + " moved device '" + id + "' to server '" + server + "', whose type has no LUT for it (" +
                               key.to_string() + ")");
      const Strategy& kept = st != scheme.strategies.end() ? st->second : d->strategy;
      if (kept.has_cloud_part() && sv->cloud.empty())
        throw SchedulerFailure("scheduler " + name() + " moved device '" + id + "' running " + kept.to_string() + " to server '" + server +
                               "', which has no cloud (servers[].cloud): give it a strategy without a cloud part there");
    }
    return scheme;
  }

 private:
  std::unique_ptr<Scheduler> inner_;
  const AnalyticEstimator& est_;
};
}  // namespace

void check_scheduler_size(const Scenario& s, const AnalyticEstimator& estimator, Scheduler& scheduler, SystemState all) {
  check_decision_work(s, estimator, all);
  if (scheduler_traits(s.scheduler.name).size_check != SchedulerTraits::SizeCheck::scheme_count) return;
  for (auto& d : all.devices) d.connected = true;
  try {
    scheduler.decide(all);
  } catch (const std::invalid_argument& e) {
    throw InputError(s.scheduler.where, "scheduler.max_schemes", e.what());
  }
}

void check_decision_work(const Scenario& s, const AnalyticEstimator& est, SystemState state) {
  const std::string& name = s.scheduler.name;
  if (scheduler_traits(name).size_check != SchedulerTraits::SizeCheck::decision_work) return;
  std::vector<std::string> keys;  // make_scheduler checks which keys are allowed
  for (const auto& kv : s.scheduler.params) keys.push_back(kv.first);
  const Params p(s, keys);
  const double max_work = p.number("max_work", 5e6, 1);
  for (auto& d : state.devices) d.connected = true;
  const bool greedy = name == "greedy";
  const double work = greedy ? greedy_work(est, state)
                             : hierarchical_work(est, state, p.flag("share_groups", true), static_cast<long long>(p.number("max_schemes", 729, 1)));
  if (work <= max_work) return;
  size_t devices = 0;
  for (const auto& d : state.devices) devices += d.generates ? 1 : 0;
  throw InputError(
      s.scheduler.where, "scheduler.max_work",
      name + " on " + std::to_string(devices) + " devices needs " + (greedy ? "" : "about ") + format_double(work) + " device-solves a decision (" +
          (greedy ? "every option of each device on the devices decided before it, re-solving its server: O(D^2 (n + 2) / servers)"
                  : "stage 1 over its groups' options, then climbs over every split, each re-solving the group's server: "
                    "O(groups x (options + n) x devices per server)") +
          "), more than scheduler.max_work = " + format_double(max_work) + " (~0.4-1 us each here: about " +
          format_double(std::round(work * 0.4e-6)) + "-" + format_double(std::round(work * 1e-6)) +
          " s a decision); use dp, gcode or sac for a system this large" + (greedy ? "" : ", share_groups: true") + ", or raise scheduler.max_work");
}

namespace {
std::unique_ptr<Scheduler> make_strategy_scheduler(const Scenario& s, const AnalyticEstimator& est);

// The rows added at run time (register_scheduler), by name; never removed, so pointers stay valid.
std::mutex& registered_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, SchedulerRegistration>& registered() {
  static std::map<std::string, SchedulerRegistration> rows;
  return rows;
}
const SchedulerRegistration* registered_scheduler(const std::string& name) {
  std::lock_guard<std::mutex> lock(registered_mutex());
  auto it = registered().find(name);
  return it == registered().end() ? nullptr : &it->second;
}
}  // namespace

std::unique_ptr<Scheduler> make_scheduler(const Scenario& s, const AnalyticEstimator& est) {
  // Refused before an outside scheduler's process is started.
  const bool from_outside = scheduler_traits(s.scheduler.name).from_outside;
  if (s.scheduler.choose_servers && from_outside)
    throw InputError(s.scheduler.where, "scheduler.choose_servers",
                     "scheduler " + s.scheduler.name +
                         " comes from outside; it sets servers in its own schemes (\"servers\" in its answer), "
                         "server choice is for the built-in schedulers");
  std::unique_ptr<Scheduler> inner = make_strategy_scheduler(s, est);
  if (s.scheduler.choose_servers) inner = std::make_unique<ServerChoosingScheduler>(std::move(inner), est);
  const BatchingChoices choices{s.scheduler.batch_windows_ms, s.scheduler.batch_sizes};
  if (choices.empty() || inner->chooses_batching()) return inner;
  if (from_outside)
    throw InputError(s.scheduler.where, "scheduler.batch_windows_ms",
                     "scheduler " + s.scheduler.name +
                         " comes from outside; it sets batching in its own schemes (\"batching\" in its answer), "
                         "batch candidates are for the built-in schedulers");
  return std::make_unique<BatchingChoosingScheduler>(std::move(inner), est, choices);
}

namespace {

// One registration per built-in scheduler: its name, what it does and its own
// parameters as the docs show them (`coinfer scheduler list --markdown` prints the table that
// sched/README.md holds; tests/golden/scheduler_docs.sh keeps the two equal), the scheduler.* keys it
// reads (any other is refused naming these) and how it is built.
struct BuiltinScheduler {
  std::string name, summary, params_doc;
  std::vector<std::string> keys;
  std::function<std::unique_ptr<Scheduler>(const Scenario&, const AnalyticEstimator&, const Params&)> make;
  SchedulerTraits traits;  // default: adaptive, built in, no size check
};

SchedulerTraits traits_of(bool keeps_strategies, bool from_outside, SchedulerTraits::SizeCheck check) {
  SchedulerTraits t;
  t.keeps_scenario_strategies = keeps_strategies;
  t.from_outside = from_outside;
  t.size_check = check;
  return t;
}

// dp (a knapsack of throughput over server capacity) and gcode (bandwidth presets chosen by throughput)
// optimise system throughput only: objective latency is refused, not ignored.
void throughput_only(const Scenario& s) {
  if (auto it = s.scheduler.params.find("objective"); it != s.scheduler.params.end() && it->second != "throughput")
    throw InputError(s.scheduler.where, "scheduler.objective",
                     "scheduler " + s.scheduler.name + " optimises system throughput only; objective '" + it->second +
                         "' is not supported (allowed: throughput; objectives latency and energy: greedy, oracle, hierarchical)");
}

std::map<std::string, Strategy> scenario_strategies(const Scenario& s) {
  std::map<std::string, Strategy> strategies;
  for (const auto& d : s.devices) strategies[d.id] = d.strategy;
  return strategies;
}

std::unique_ptr<Scheduler> make_placement(const Scenario& s, const AnalyticEstimator& est, const Params& p) {
  // Operator placement inside each board (sched/operator_placement.hpp), the scenario's splits kept.
  // Rule sac: SparOA's SAC policy (sched/sparoa_mdp.hpp) from `coinfer train sparoa`, through the plugin.
  const std::string rule_text = p.text("rule", "dp");
  PlacementRule rule = PlacementRule::dp;
  std::shared_ptr<const SparoaActor> policy;
  if (rule_text == "sac") {
    const std::string file = scenario_relative_file(s, "policy");
    if (file.empty())
      throw InputError(s.scheduler.where, "scheduler.policy", "rule sac needs its policy file (scheduler.policy: a file from coinfer train sparoa)");
    if (!std::filesystem::is_regular_file(file))
      throw InputError(s.scheduler.where, "scheduler.policy", "no such policy file '" + file + "' (a file from coinfer train sparoa)");
    policy = load_sparoa_policy(file);
    bool used = false;
    for (const auto& d : s.devices) used = used || (d.type == policy->info().device_type && d.model + "/" + d.dataset == policy->info().model);
    if (!used)
      throw InputError(s.scheduler.where, "scheduler.policy",
                       "the policy '" + file + "' was trained for " + policy->info().model + " on a " + policy->info().device_type +
                           "; no device of this scenario runs that (train one with coinfer train sparoa SCENARIO --device ID)");
  } else {
    if (s.scheduler.params.count("policy"))
      throw InputError(s.scheduler.where, "scheduler.policy", "a policy file is for rule sac only (rule is '" + rule_text + "')");
    try {
      rule = parse_placement_rule(rule_text);
    } catch (const std::invalid_argument& e) {
      throw InputError(s.scheduler.where, "scheduler.rule", std::string(e.what()) + "; or sac with scheduler.policy");
    }
  }
  return std::make_unique<PlacementScheduler>(est, scenario_strategies(s), rule, std::move(policy));
}

template <typename T>
std::string join_numbers(const std::vector<T>& v) {
  std::vector<std::string> parts;
  for (T x : v) parts.push_back(format_double(static_cast<double>(x)));
  return join(parts, ", ");
}

std::unique_ptr<Scheduler> make_sac(const Scenario& s, const AnalyticEstimator& est, const Params& p) {
  // SparOA's SAC (sched/README.md "SAC"): a policy from `coinfer train sac`, loaded through the plugin.
  const std::string file = scenario_relative_file(s, "policy");
  if (file.empty())
    throw InputError(s.scheduler.where, "scheduler.policy", "scheduler sac needs its policy file (scheduler.policy: a file from coinfer train sac)");
  if (!std::filesystem::is_regular_file(file))  // located at the key that named it
    throw InputError(s.scheduler.where, "scheduler.policy", "no such policy file '" + file + "' (a file from coinfer train sac)");
  std::set<std::string> models;
  for (const auto& d : s.devices) models.insert(d.model + "/" + d.dataset);
  SacSchedulerOptions o;
  o.explore = p.flag("explore", false);
  o.allow_data_parallel = p.flag("data_parallel", true);
  o.helpers = p.flag("helpers", true);
  o.seed = static_cast<std::uint64_t>(p.number("seed", static_cast<double>(s.seed), 0));
  o.online = p.flag("online", false);
  o.updates_per_decision = static_cast<int>(p.number("online_updates", 8, 1));
  auto actor = load_sac_actor(file, {models.begin(), models.end()}, o.allow_data_parallel, o.online);
  for (const auto& w : actor->trust_warnings(s.name)) log::warn_once("sched", w);
  // The operator-level mode: scheduler.placement_policy, else the one the policy was trained with.
  std::string placement = scenario_relative_file(s, "placement_policy");
  if (placement.empty()) placement = actor->placement_policy();
  if (!placement.empty()) {
    if (!std::filesystem::is_regular_file(placement))
      throw InputError(s.scheduler.where, "scheduler.placement_policy",
                       "no such SparOA policy file '" + placement + "'" +
                           (s.scheduler.params.count("placement_policy") ? "" : " (the SAC policy " + file + " was trained with it)") +
                           " (a file from coinfer train sparoa --any-split)");
    o.placement_policy = load_sparoa_policy(placement);
  }
  // Learned batching: scheduler.batching_policy, else the one the policy was trained with; "none": neither
  // (the scenario's candidates, if any, go to the estimator's pass).
  const auto named_it = s.scheduler.params.find("batching_policy");
  const bool named = named_it != s.scheduler.params.end();
  std::string batching;
  if (!(named && named_it->second == "none")) {
    batching = scenario_relative_file(s, "batching_policy");
    if (batching.empty()) batching = actor->batching_policy();
  }
  if (!batching.empty()) {
    const std::string trained_with = named ? "" : " (the SAC policy " + file + " was trained with it)";
    if (!std::filesystem::is_regular_file(batching))
      throw InputError(s.scheduler.where, "scheduler.batching_policy",
                       "no such SAC batching policy file '" + batching + "'" + trained_with + " (a file from coinfer train sac --learn-batching)");
    SacBatchingPolicy bp = load_sac_batching_policy(batching, "scheduler.batching_policy");
    // Its actions index its candidates: a scenario listing others would get batchings it never learned.
    auto sorted = [](auto v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      return v;
    };
    const BatchingChoices& trained = bp.info.candidates;
    if (!s.scheduler.batch_windows_ms.empty() && sorted(s.scheduler.batch_windows_ms) != sorted(trained.windows_ms))
      throw InputError(s.scheduler.where, "scheduler.batch_windows_ms",
                       "the SAC batching policy " + batching + trained_with + " chooses among the windows [" + join_numbers(trained.windows_ms) +
                           "] ms; list those or none");
    if (!s.scheduler.batch_sizes.empty() && sorted(s.scheduler.batch_sizes) != sorted(trained.sizes))
      throw InputError(s.scheduler.where, "scheduler.batch_sizes",
                       "the SAC batching policy " + batching + trained_with + " chooses among the sizes [" + join_numbers(trained.sizes) +
                           "]; list those or none");
    o.batching_policy = bp.actor;
    o.batching_choices = trained;
  }
  return std::make_unique<SacScheduler>(est, std::move(actor), o);
}

// A scheduler whose schemes come from outside (the external process, one registered at run time): built
// with the stage count of every model it may split, and every scheme it returns checked.
template <class Make>
std::unique_ptr<Scheduler> checked_from_outside(const Scenario& s, const AnalyticEstimator& est, const Make& make) {
  std::map<std::string, int> stages;
  for (const auto& d : s.devices) stages[d.model + "/" + d.dataset] = est.model(d.model, d.dataset).num_stages();
  return std::make_unique<CheckedScheduler>(make(s, stages), est);
}

const std::vector<BuiltinScheduler>& builtin_schedulers() {
  static const std::vector<BuiltinScheduler> table = {
      {"static",
       "every device keeps its scenario strategy",
       "`helpers` (false): name idle devices helpers",
       {"helpers"},
       [](const Scenario& s, const AnalyticEstimator&, const Params& p) -> std::unique_ptr<Scheduler> {
         return std::make_unique<StaticScheduler>(scenario_strategies(s), p.flag("helpers", false));
       },
       traits_of(true, false, SchedulerTraits::SizeCheck::none)},
      {"local",
       "every device local",
       "-",
       {},
       [](const Scenario&, const AnalyticEstimator&, const Params&) -> std::unique_ptr<Scheduler> {
         return std::make_unique<UniformScheduler>("local", Strategy::local());
       },
       SchedulerTraits{}},
      {"offload",
       "every device offloading everything",
       "-",
       {},
       [](const Scenario&, const AnalyticEstimator&, const Params&) -> std::unique_ptr<Scheduler> {
         return std::make_unique<UniformScheduler>("offload", Strategy::offload());
       },
       SchedulerTraits{}},
      {"gcode",
       "GCoDE-like: at a device's first decision (nominal bandwidth B₀) it picks, offline, the interior split with the lowest predicted "
       "latency of that device alone at each level B₀, B₀/2, B₀/4, ... ≥ `min_mbps`; afterwards it only switches between these presets on "
       "the measured bandwidth (largest level not above it). Bandwidth is its only awareness. `objective: latency` is refused (exit 2).",
       "`min_mbps` (0.5)",
       {"min_mbps", "objective"},
       [](const Scenario& s, const AnalyticEstimator& est, const Params& p) -> std::unique_ptr<Scheduler> {
         throughput_only(s);
         return std::make_unique<GcodeScheduler>(est, p.number("min_mbps", 0.5, 1e-6));
       },
       SchedulerTraits{}},
      {"greedy",
       "devices one by one (state order), each taking its best option (local, offload, pp(1..n−1), data_parallel) for the system of the "
       "devices decided so far",
       "`objective` (throughput, latency, energy), `max_p95_ms`, `min_throughput_rps`, `max_energy_j`, `estimator`, `predictor`, "
       "`max_work` (5e6 device-solves: refused at load above; \"Complexity\" below)",
       {"objective", "estimator", "predictor", "max_work", "max_p95_ms", "min_throughput_rps", "max_energy_j"},
       [](const Scenario& s, const AnalyticEstimator& est, const Params& p) -> std::unique_ptr<Scheduler> {
         auto rank = ranking_estimator(s, p, est);
         auto inner = std::make_unique<GreedyScheduler>(est, rank ? *rank : static_cast<const Estimator&>(est));
         return owning(std::move(rank), std::move(inner));
       },
       traits_of(false, false, SchedulerTraits::SizeCheck::decision_work)},
      {"dp",
       "per server, a multiple-choice knapsack: an option's value is its isolated throughput (the device alone), its weight the server "
       "capacity it uses (isolated utilisation, rounded up to 1/`resolution` of the workers); maximise total value within capacity by "
       "dynamic programming over devices × capacity. Exact for that model. Throughput only: `objective: latency` is refused (exit 2).",
       "`resolution` (200), `objective` (throughput), `estimator`, `predictor`",
       {"resolution", "objective", "estimator", "predictor"},
       [](const Scenario& s, const AnalyticEstimator& est, const Params& p) -> std::unique_ptr<Scheduler> {
         throughput_only(s);
         auto rank = ranking_estimator(s, p, est);
         auto inner =
             std::make_unique<DpScheduler>(est, rank ? *rank : static_cast<const Estimator&>(est), static_cast<int>(p.number("resolution", 200, 1)));
         return owning(std::move(rank), std::move(inner));
       },
       SchedulerTraits{}},
      {"oracle",
       "every combination of every device's options; refuses systems above `max_schemes` combinations with an error (before the run starts)",
       "`max_schemes` (20000), `objective`, `max_p95_ms`, `min_throughput_rps`, `max_energy_j`",
       {"max_schemes", "objective", "max_p95_ms", "min_throughput_rps", "max_energy_j"},
       [](const Scenario&, const AnalyticEstimator& est, const Params& p) -> std::unique_ptr<Scheduler> {
         return std::make_unique<OracleScheduler>(est, static_cast<long long>(p.number("max_schemes", 20000, 1)));
       },
       traits_of(false, false, SchedulerTraits::SizeCheck::scheme_count)},
      {"hierarchical",
       "ACE-GNN Alg. 1, below",
       "`iterations` T (10), `share_groups` (true), `max_schemes` (729), `helpers` (true), `objective`, `max_p95_ms`, `min_throughput_rps`, "
       "`max_energy_j`, `estimator`, `predictor`, `max_work` (5e6)",
       {"iterations", "share_groups", "max_schemes", "objective", "helpers", "estimator", "predictor", "max_work", "max_p95_ms", "min_throughput_rps",
        "max_energy_j"},
       [](const Scenario& s, const AnalyticEstimator& est, const Params& p) -> std::unique_ptr<Scheduler> {
         auto rank = ranking_estimator(s, p, est);
         auto inner = std::make_unique<HierarchicalScheduler>(est, rank ? *rank : static_cast<const Estimator&>(est),
                                                              static_cast<int>(p.number("iterations", 10, 0)), p.flag("share_groups", true),
                                                              static_cast<long long>(p.number("max_schemes", 729, 1)), p.flag("helpers", true));
         return owning(std::move(rank), std::move(inner));
       },
       traits_of(false, false, SchedulerTraits::SizeCheck::decision_work)},
      {"sac",
       "SparOA's Soft Actor-Critic: a trained policy maps each device's observation to its strategy, below (\"SAC\")",
       "`policy` (required), `explore` (false), `seed` (the scenario's), `data_parallel` (true), `helpers` (true), `online` (false), "
       "`online_updates` (8), `placement_policy` (the one the policy was trained with, else none: the operator-level mode, below \"SparOA\"), "
       "`batching_policy` (the one the policy was trained with, else none; `none`: not that one either: batching learned, below \"Batching learned "
       "by SAC\")",
       {"policy", "explore", "seed", "data_parallel", "helpers", "online", "online_updates", "placement_policy", "batching_policy"},
       make_sac,
       SchedulerTraits{}},
      {"placement",
       "operator placement inside each board (below, \"Operator placement\"): every device keeps its scenario strategy's split and "
       "variant; the stages its board runs are placed on its processors by `rule`. Devices of one processor, offloading or data_parallel ones "
       "keep their strategy. The decision's `detail` gives each placement and its device milliseconds",
       "`rule`: `dp` (default), `greedy`, `codl`, `graphsplit`, `cpu_only`, `accelerator_only`, or `sac` with `policy`: a file from `coinfer "
       "train sparoa` (below, \"SparOA\"); it places the boards of the type, model and stage count it was trained for, and the decision's "
       "`detail` says why any other device kept its strategy",
       {"rule", "policy"},
       make_placement,
       SchedulerTraits{}},
      {"external",
       "a scheduler in another process, any language: below (\"External schedulers\")",
       "`command` (required), `timeout_s` (10), `startup_s` (30), `objective` (passed on)",
       {"command", "timeout_s", "startup_s", "objective"},
       [](const Scenario& s, const AnalyticEstimator& est, const Params&) -> std::unique_ptr<Scheduler> {
         return checked_from_outside(s, est, make_external_scheduler);
       },
       traits_of(false, true, SchedulerTraits::SizeCheck::none)},
  };
  return table;
}

std::unique_ptr<Scheduler> make_strategy_scheduler(const Scenario& s, const AnalyticEstimator& est) {
  const std::string& name = s.scheduler.name;
  if (const SchedulerRegistration* row = registered_scheduler(name)) {
    Params p(s, row->info.keys);
    return checked_from_outside(s, est, row->make);
  }
  for (const BuiltinScheduler& b : builtin_schedulers())
    if (b.name == name) {
      const Params p(s, b.keys);
      return b.make(s, est, p);
    }
  std::string near = nearest_word(name, scheduler_names());
  throw InputError(
      s.scheduler.where, "scheduler.name",
      "unknown scheduler '" + name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?") + " (available: " + join(scheduler_names()) + ")");
}
}  // namespace

std::vector<SchedulerInfo> scheduler_catalog() {
  std::vector<SchedulerInfo> out;
  for (const BuiltinScheduler& b : builtin_schedulers()) out.push_back({b.name, b.summary, b.params_doc, b.keys, b.traits});
  std::lock_guard<std::mutex> lock(registered_mutex());
  for (const auto& [name, row] : registered()) out.push_back(row.info);
  return out;
}

void register_scheduler(SchedulerRegistration registration) {
  for (const BuiltinScheduler& b : builtin_schedulers())
    if (b.name == registration.info.name) throw std::invalid_argument("scheduler '" + b.name + "' is built in; register another name");
  registration.info.traits.from_outside = true;  // it sets servers and batching in its own schemes
  registration.info.traits.keeps_scenario_strategies = false;
  std::lock_guard<std::mutex> lock(registered_mutex());
  std::string name = registration.info.name;
  registered()[name] = std::move(registration);
}

SchedulerTraits scheduler_traits(const std::string& name) {
  for (const BuiltinScheduler& b : builtin_schedulers())
    if (b.name == name) return b.traits;
  if (const SchedulerRegistration* row = registered_scheduler(name)) return row->info.traits;
  return SchedulerTraits{};
}

std::vector<std::string> scheduler_names() {
  std::vector<std::string> names;
  for (const auto& s : scheduler_catalog()) names.push_back(s.name);
  return names;
}

std::string scheduler_table_markdown() {
  std::string out = "| name | what it does | parameters (default) |\n|---|---|---|\n";
  for (const auto& s : scheduler_catalog()) out += "| `" + s.name + "` | " + s.summary + " | " + s.params_doc + " |\n";
  return out;
}

}  // namespace coinfer
