// coinfer plan SCENARIO --throughput R: ACE-GNN's planning phase (paper section III-C). The design
// space is every device's candidate strategies (local, offload, pp(1..n-1), data_parallel: what its
// model's stages and the LUTs allow); candidates are examined best-first (each device's options
// ordered by the predicted throughput of that device alone, combinations by increasing sum of those
// ranks) and scored with the system predictor (gin) or the analytic estimator, in batches, until one
// meets the requirement or --max-iterations is reached. The chosen scheme is written as a ready-to-run
// scenario (static scheduler) and verified by simulating it.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <yaml-cpp/yaml.h>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "plumbing/child_process.hpp"
#include "core/input_error.hpp"
#include "core/system_state.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "io/sweep_table.hpp"
#include "io/yaml_util.hpp"
#include "sched/learned_plugin.hpp"
#include "sched/scheduler_factory.hpp"
#include "sched/scheme_search.hpp"
#include "cli/scenario_args.hpp"

namespace fs = std::filesystem;

namespace coinfer::cli {

namespace {

struct PlanOptions {
  std::string scenario, out, estimator = "analytic", predictor;
  std::vector<std::string> sets;
  double throughput = 0;
  long long max_iterations = 1000;
  bool verify = true, quiet = false;
};

struct Examined {
  Scheme scheme;
  double predicted = 0;
};

// The scenario with every device's strategy fixed by `scheme` and a static scheduler, as YAML text;
// `count:` entries are expanded (ids as the loader gives them) and relative paths made absolute.
std::string plan_yaml(const Scenario& s, const std::vector<std::string>& sets, const Scheme& scheme, const std::string& header) {
  YamlReader reader(s.file);
  YAML::Node root = reader.load_file();
  for (const auto& a : sets) apply_override(root, a);
  YAML::Node devices(YAML::NodeType::Sequence);
  for (const auto& entry : root["devices"]) {
    const int copies = entry["count"] ? entry["count"].as<int>() : 1;
    for (int c = 0; c < copies; ++c) {
      YAML::Node d = YAML::Clone(entry);
      const std::string id = entry["id"].as<std::string>() + (entry["count"] ? std::to_string(c) : "");
      d.remove("count");
      d["id"] = id;
      const int idx = s.device_index(id);
      if (idx >= 0) {
        const DeviceSpec& spec = s.devices[static_cast<size_t>(idx)];
        auto it = scheme.strategies.find(id);
        if (it != scheme.strategies.end()) d["strategy"] = it->second.to_string();
        if (!spec.link.trace_file.empty()) d["link"]["trace"] = resolve_scenario_path(s.file, spec.link.trace_file);
        if (!spec.workload.file.empty()) d["workload"]["file"] = resolve_scenario_path(s.file, spec.workload.file);
      }
      devices.push_back(d);
    }
  }
  root["devices"] = devices;
  YAML::Node luts(YAML::NodeType::Sequence);
  for (const auto& l : s.luts) luts.push_back(fs::absolute(l).string());
  root["luts"] = luts;
  YAML::Node sched(YAML::NodeType::Map);
  sched["name"] = "static";
  root["scheduler"] = sched;
  YAML::Emitter e;
  e << root;
  return header + e.c_str() + "\n";
}

// Simulates `scenario` with this program (`coinfer run`), output in `out`; the summary row.
SweepRow simulate(const std::string& scenario, const std::string& out) {
  ChildSpec run;
  run.argv = {"/proc/self/exe", "run", scenario, "--out", out, "-q"};
  SweepRow row;
  if (run_child(run).status == 0) read_point_summary((fs::path(out) / "summary.json").string(), row);
  return row;
}

int plan(const PlanOptions& o) {
  if (!(o.throughput > 0)) throw InputError(SourceLocation{"--throughput", 0, 0}, "--throughput", "must be > 0 requests/s");
  if (o.max_iterations < 1 || o.max_iterations > 100000000)
    throw InputError(SourceLocation{"--max-iterations", 0, 0}, "--max-iterations", "must be 1 .. 10^8");
  if (o.estimator != "analytic" && o.estimator != "gin")
    throw InputError(SourceLocation{"--estimator", 0, 0}, "--estimator", "'" + o.estimator + "' is not allowed (analytic, gin)");
  if (o.estimator == "gin" && o.predictor.empty())
    throw InputError(SourceLocation{"--predictor", 0, 0}, "--predictor", "--estimator gin needs --predictor FILE (coinfer predictor train)");
  const Scenario s = load_scenario(o.scenario, o.sets);
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  const LutSet luts = load_scenario_luts(s);
  check_scenario_against(s, catalog, luts, scheduler_traits(s.scheduler.name));
  ModelSpecs specs = scenario_model_specs(s, catalog);
  const AnalyticEstimator analytic(luts, specs);
  std::unique_ptr<Estimator> learned;
  if (o.estimator == "gin") {
    std::set<std::string> types, models;
    for (const auto& d : s.devices) types.insert(d.type), models.insert(d.model + "/" + d.dataset);
    std::vector<std::string> warnings;
    learned = load_gin_estimator(o.predictor, analytic, {types.begin(), types.end()}, {models.begin(), models.end()},
                                 largest_node_latency_ms(scenario_state(s, 0), analytic), warnings);
    for (const auto& w : warnings) log::warn("plan", w + " (its predictions there are extrapolations)");
  }
  const Estimator& rank = learned ? *learned : static_cast<const Estimator&>(analytic);
  const std::string dir = o.out.empty() ? "results/plan-" + s.name : o.out;
  StagedOutput staged(dir, "--out");

  // The design space at time 0: devices connected with inputs of their own.
  const SystemState state = scenario_state(s, 0);
  std::vector<const DeviceState*> devs;
  for (const auto& d : state.devices)
    if (d.connected && d.generates) devs.push_back(&d);
  if (devs.empty()) throw InputError(SourceLocation{s.file, 0, 0}, "devices", "no device generates requests at time 0: nothing to plan");
  std::vector<std::vector<Strategy>> options;  // per device, best first
  long double space = 1;
  for (const DeviceState* d : devs) {
    SystemState alone = state;
    for (auto& x : alone.devices) x.connected = x.id == d->id;
    std::vector<Strategy> opts = all_options(specs.at(ModelKey{d->model, d->dataset}).num_stages());
    std::vector<Scheme> single;
    for (const auto& st : opts) single.push_back({{{d->id, st}}, {}, {}, {}});
    const std::vector<double> value = rank.score_many(alone, single);
    std::vector<size_t> order(opts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return value[a] > value[b]; });
    std::vector<Strategy> sorted;
    for (size_t i : order) sorted.push_back(opts[i]);
    options.push_back(sorted);
    space *= sorted.size();
  }
  // Best-first: combinations by increasing sum of per-device ranks, scored in batches.
  std::vector<Examined> examined;
  const Examined* met = nullptr;
  std::vector<Scheme> batch;
  auto flush = [&] {
    if (batch.empty()) return;
    const auto scores = rank.score_many(state, batch);
    for (size_t i = 0; i < batch.size(); ++i) examined.push_back({batch[i], scores[i]});
    batch.clear();
  };
  int max_rank = 0;
  for (const auto& v : options) max_rank += static_cast<int>(v.size()) - 1;
  std::vector<size_t> idx(devs.size(), 0);
  for (int level = 0; level <= max_rank && !met && static_cast<long long>(examined.size()) < o.max_iterations; ++level) {
    // Every combination whose ranks sum to `level` (depth-first), until the budget is used.
    std::function<void(size_t, int)> walk = [&](size_t k, int left) {
      if (static_cast<long long>(examined.size() + batch.size()) >= o.max_iterations) return;
      if (k == devs.size()) {
        if (left != 0) return;
        Scheme sc;
        for (size_t i = 0; i < devs.size(); ++i) sc.strategies[devs[i]->id] = options[i][idx[i]];
        batch.push_back(sc);
        return;
      }
      for (size_t r = 0; r < options[k].size() && static_cast<int>(r) <= left; ++r) {
        idx[k] = r;
        walk(k + 1, left - static_cast<int>(r));
      }
    };
    walk(0, level);
    const size_t before = examined.size();
    flush();
    for (size_t i = before; i < examined.size(); ++i)
      if (examined[i].predicted >= o.throughput) {
        met = &examined[i];  // the first, in examination order, that meets the requirement
        break;
      }
  }
  const Examined* best = &examined.front();
  for (const auto& e : examined)
    if (e.predicted > best->predicted) best = &e;
  const Examined& chosen = met ? *met : *best;
  const size_t examined_until = met ? static_cast<size_t>(met - examined.data()) + 1 : examined.size();

  // Outputs: the plan as a scenario, and what was examined.
  const std::string header = "# Written by coinfer plan from " + fs::absolute(s.file).string() + " (requirement " + format_double(o.throughput) +
                             " req/s, estimator " + rank.describe() +
                             "): " + (met ? "meets it" : "the best scheme found; it does NOT meet the requirement") + ", predicted " +
                             format_double(chosen.predicted) + " req/s.\n";
  write_text_atomic(staged.path("plan.yaml"), plan_yaml(s, o.sets, chosen.scheme, header));
  nlohmann::ordered_json j = {{"scenario", fs::absolute(s.file).string()},
                              {"requirement_rps", o.throughput},
                              {"estimator", rank.describe()},
                              {"design_space", static_cast<double>(space)},
                              {"max_iterations", o.max_iterations},
                              {"examined", examined_until},
                              {"met", met != nullptr},
                              {"scheme", chosen.scheme.to_string()},
                              {"predicted_rps", chosen.predicted}};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (size_t i = 0; i < examined_until && i < 10000; ++i)
    list.push_back({{"scheme", examined[i].scheme.to_string()}, {"predicted_rps", examined[i].predicted}});
  j["candidates"] = list;
  write_text_atomic(staged.path("plan.json"), j.dump(1) + "\n");
  staged.commit();
  if (!o.quiet) {
    std::printf("design space: %s schemes (%zu devices); examined %zu best-first with the %s estimator\n",
                format_double(static_cast<double>(space)).c_str(), devs.size(), examined_until, rank.describe().c_str());
    std::vector<const Examined*> top;
    for (size_t i = 0; i < examined_until; ++i) top.push_back(&examined[i]);
    std::stable_sort(top.begin(), top.end(), [](const Examined* a, const Examined* b) { return a->predicted > b->predicted; });
    for (size_t i = 0; i < top.size() && i < 5; ++i) std::printf("  %10.2f req/s  %s\n", top[i]->predicted, top[i]->scheme.to_string().c_str());
    if (met)
      std::printf("chosen (candidate %zu, the first to meet %s req/s): %s, predicted %.2f req/s\n", examined_until,
                  format_double(o.throughput).c_str(), chosen.scheme.to_string().c_str(), chosen.predicted);
    else
      std::printf("no examined scheme meets %s req/s (%zu examined%s); the best found: %s, predicted %.2f req/s\n",
                  format_double(o.throughput).c_str(), examined_until,
                  static_cast<long double>(examined_until) < space ? ", raise --max-iterations to examine more" : ", the whole design space",
                  chosen.scheme.to_string().c_str(), chosen.predicted);
    std::printf("wrote %s/plan.yaml (static scheduler) and %s/plan.json\n", dir.c_str(), dir.c_str());
  }
  if (o.verify) {
    bool dynamic = !s.events.empty();
    for (const auto& d : s.devices) dynamic = dynamic || !d.link.trace_file.empty() || d.join_at_s > 0;
    if (dynamic && !o.quiet)
      std::printf(
          "note: the scenario has bandwidth traces, events or late joins; the plan is for its state at time 0, the "
          "verification plays the whole scenario\n");
    const SweepRow row = simulate((fs::path(dir) / "plan.yaml").string(), (fs::path(dir) / "verify").string());
    if (!row.ok) throw std::runtime_error("the plan's verification run failed; see coinfer run " + dir + "/plan.yaml");
    // Met only when the simulated throughput reaches the requirement AND no request failed (an open-loop
    // device that saturates shows throughput while its queue fails requests at the end of the run).
    const bool throughput_ok = row.throughput_rps >= o.throughput;
    const bool simulated_meets = throughput_ok && row.failed == 0;
    j["simulated_rps"] = row.throughput_rps;
    j["simulated_mean_latency_ms"] = row.latency_mean_ms;
    j["simulated_completed"] = row.completed;
    j["simulated_failed"] = row.failed;
    j["simulated_meets"] = simulated_meets;
    // How far to trust the search (a plan 662 % off was still "met" without a word).
    const double off_pct = 100 * (chosen.predicted - row.throughput_rps) / std::max(row.throughput_rps, 1e-12);
    j["prediction_error_pct"] = off_pct;
    write_text_atomic((fs::path(dir) / "plan.json").string(), j.dump(1) + "\n");
    if (!o.quiet) {
      std::string verdict = simulated_meets ? "meets the requirement" : "does NOT meet the requirement";
      if (throughput_ok && row.failed > 0)
        verdict += " (" + std::to_string(row.failed) + " of " + std::to_string(row.completed + row.failed) +
                   " requests failed: a device or the server cannot keep up with its arrivals)";
      std::printf("verified by simulation (%s/verify): %.2f req/s (predicted %.2f, %+.1f %%), mean latency %.1f ms, %lld failed: %s\n", dir.c_str(),
                  row.throughput_rps, chosen.predicted, 100 * (chosen.predicted - row.throughput_rps) / std::max(row.throughput_rps, 1e-12),
                  row.latency_mean_ms, row.failed, verdict.c_str());
    }
    if (std::fabs(off_pct) > 50) {
      // The remedy depends on which estimator ranked: the analytic one is the alternative to a learned one.
      const bool analytic = rank.describe() == "analytic";
      log::warn("plan",
                strprintf("the prediction was %+.0f %% off the simulation: the estimator (%s) does not describe this system well, "
                          "so the search ranked its schemes on wrong numbers; check the chosen scheme against others with "
                          "coinfer run%s",
                          off_pct, rank.describe().c_str(),
                          analytic ? " (the analytic estimator predicts the scenario's state at time 0, which later bandwidth changes, events "
                                     "and joins change; and a saturated system is where its queueing model is weakest)"
                                   : ", or use the analytic estimator (scheduler.estimator: analytic)"));
    }
    if (!simulated_meets) return 1;
  }
  return met ? 0 : 1;
}

}  // namespace

void register_plan(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan",
                                     "ACE-GNN's planning phase: examine the design space best-first until a scheme meets a throughput requirement; "
                                     "write it as a ready-to-run scenario and verify it by simulation (exit 1 when no examined scheme meets it)");
  add_scenario_args(*cmd, o->scenario, o->sets, "scenario YAML file (its devices at time 0 are planned)");
  cmd->add_option("--throughput", o->throughput, "required system throughput, requests/s")->required();
  cmd->add_option("--max-iterations", o->max_iterations, "most schemes to examine (default 1000)");
  cmd->add_option("--estimator", o->estimator, "analytic (default) or gin");
  cmd->add_option("--predictor", o->predictor, "with --estimator gin: a model from coinfer predictor train");
  cmd->add_option("--out", o->out, "output folder (default results/plan-<scenario name>): plan.yaml, plan.json, verify/");
  cmd->add_flag("!--no-verify", o->verify, "do not simulate the chosen scheme");
  cmd->callback([o, &exit_code] {
    o->quiet = quiet("plan");
    exit_code = guarded([&] { return plan(*o); });
  });
}

}  // namespace coinfer::cli
