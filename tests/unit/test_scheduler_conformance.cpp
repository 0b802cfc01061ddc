// Every registered scheduler against the same rules (as WRENCH loops over its
// schedulers): on a search over states of shipped scenarios — links from 1/20 to twice nominal,
// devices disconnected, background load, queues at the server — each decision is a valid scheme for the
// state it was given, and a second instance fed the same states decides the same (deterministic).
// Valid: only devices of the state; pp splits within the model's stages; placements only on the
// device's processors; model variants only among those its LUTs allow; helpers only idle devices;
// batching only for servers of the state, within their size limit.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/model_key.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "sched/scheduler_factory.hpp"

using namespace coinfer;

namespace {

const std::string kRoot = COINFER_SOURCE_DIR;

// The parameters a scheduler cannot run without (as tests/golden/matrix.py gives them).
std::vector<std::string> sets_for(const std::string& name) {
  if (name == "sac") return {"scheduler={name: sac, policy: " + kRoot + "/sched/policies/sac_paper.pt}"};
  if (name == "external") return {"scheduler={name: external, command: \"python3 " + kRoot + "/sched/examples/threshold_scheduler.py\"}"};
  return {"scheduler={name: " + name + "}"};
}

// The states of the search: the scenario's own at 0 s, then `count` perturbed ones (seeded).
std::vector<SystemState> states_of(const Scenario& s, int count, std::uint64_t seed) {
  std::vector<SystemState> out{scenario_state(s, 0)};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (int k = 0; k < count; ++k) {
    SystemState st = scenario_state(s, 0.5 * (k + 1));
    st.time_s = 0.5 * (k + 1);
    for (auto& d : st.devices) {
      d.link_bandwidth_mbps *= std::exp(std::log(1 / 20.0) + u(rng) * std::log(40.0));  // 1/20 .. 2x
      if (u(rng) < 0.2) d.connected = false;
      if (u(rng) < 0.3) d.load = std::floor(u(rng) * 90) / 100;
      d.queue_length = static_cast<int>(u(rng) * 4);
    }
    for (auto& sv : st.servers) sv.queue_length = static_cast<int>(u(rng) * 8);
    out.push_back(st);
  }
  return out;
}

// "" when `scheme` is valid for `state`, else what is wrong.
std::string problem(const Scheme& scheme, const SystemState& state, const AnalyticEstimator& est) {
  for (const auto& [id, st] : scheme.strategies) {
    const DeviceState* d = state.device(id);
    if (!d) return "a strategy for '" + id + "', no device of the state";
    const int n = est.model(d->model, d->dataset).num_stages();
    if (st.kind == Strategy::Kind::pp && (st.split < 0 || st.split > n)) return id + ": " + st.to_string() + " outside 0.." + std::to_string(n);
    if (!st.variant.empty() && st.variant != "fp32" &&
        std::find(d->variant_choices.begin(), d->variant_choices.end(), st.variant) == d->variant_choices.end())
      return id + ": variant " + st.variant + " not among its choices";
    for (const auto& part : st.placement.parts)
      for (const std::string& proc : {part.processor, part.with}) {
        if (proc.empty() && &proc != &part.processor) continue;
        const bool known = d->hardware ? d->hardware->slot(proc) >= 0 : proc == d->processor;
        if (!known) return id + ": placement on '" + proc + "', not one of its processors";
      }
  }
  for (const auto& h : scheme.helpers) {
    const DeviceState* d = state.device(h);
    if (!d) return "helper '" + h + "' is no device";
    if (d->generates) return "helper '" + h + "' has inputs of its own";
  }
  for (const auto& [id, spec] : scheme.batching) {
    const ServerState* sv = state.server(id);
    if (!sv) return "batching for '" + id + "', no server";
    if (spec.max_size < 1 || spec.max_size > sv->batch_size_limit || !(spec.window_ms >= 0)) return "batching " + spec.to_string() + " for " + id;
  }
  return "";
}

struct Built {
  Scenario scenario;
  LutSet luts;
  std::unique_ptr<AnalyticEstimator> est;
  std::unique_ptr<Scheduler> scheduler;
};

std::unique_ptr<Built> build(const std::string& file, const std::string& name) {
  static ModelCatalog models = ModelCatalog::load(kRoot + "/models");
  auto b = std::make_unique<Built>();
  b->scenario = load_scenario(kRoot + "/" + file, sets_for(name));
  b->luts = load_luts(b->scenario.luts);
  check_scenario_against(b->scenario, models, b->luts, scheduler_traits(b->scenario.scheduler.name));
  ModelSpecs specs;
  for (const auto& d : b->scenario.devices) specs.emplace(ModelKey{d.model, d.dataset}, models.instantiate(d.model, d.dataset));
  b->est = make_estimator(b->scenario, b->luts, std::move(specs));
  b->scheduler = make_scheduler(b->scenario, *b->est);
  check_scheduler_size(b->scenario, *b->est, *b->scheduler, scenario_state(b->scenario, 0));  // as both engines do
  return b;
}

}  // namespace

TEST(SchedulerConformance, EveryRegisteredSchedulerDecidesValidSchemesDeterministically) {
  const std::vector<std::string> scenarios = {"scenarios/quickstart.yaml", "scenarios/paper/fig16_idle_devices.yaml",
                                              "scenarios/paper/fig20_nine_devices.yaml"};
  int decisions = 0;
  std::set<std::string> covered, no_plugin;
  for (const std::string& name : scheduler_names()) {
    for (const std::string& file : scenarios) {
      std::unique_ptr<Built> a, b;
      try {
        a = build(file, name);
        b = build(file, name);
      } catch (const InputError& e) {
        // A scheduler may refuse a scenario it does not apply to, saying why (exit 2 for a user); a build
        // without LibTorch has no learned plugin (sac).
        const std::string why = e.what();
        if (why.find("libcoinfer_learned.so") != std::string::npos) no_plugin.insert(name);
        ASSERT_NE(why.find("scheduler"), std::string::npos) << name << " on " << file << ": " << why;
        continue;
      }
      covered.insert(name);
      for (const SystemState& st : states_of(a->scenario, 12, 7)) {
        const Scheme sa = a->scheduler->decide(st);
        const Scheme sb = b->scheduler->decide(st);
        EXPECT_EQ(problem(sa, st, *a->est), "") << name << " on " << file << " at t = " << st.time_s << ": " << sa.to_string();
        EXPECT_EQ(sa.to_string(), sb.to_string()) << name << " on " << file << " at t = " << st.time_s << ": not deterministic";
        ++decisions;
      }
    }
  }
  // Every registered name ran on at least one scenario.
  for (const std::string& name : scheduler_names()) EXPECT_TRUE(covered.count(name) || no_plugin.count(name)) << name << " never ran";
  EXPECT_GT(decisions, 0);
}
