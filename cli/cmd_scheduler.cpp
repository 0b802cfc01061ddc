// coinfer scheduler list: the scheduler names a scenario may give (scheduler.name), one per line, so
// that scripts (tests/golden/matrix.py) pick up a new scheduler by themselves.
// coinfer scheduler estimate SCENARIO: what the analytic estimator (sched/README.md) predicts for the
// scenario's own strategies at time 0 — the prediction schedulers rank schemes by, without simulating.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/system_state.hpp"
#include "core/text_util.hpp"
#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "sched/scheduler_factory.hpp"
#include "sched/scheme_search.hpp"
#include "cli/scenario_args.hpp"

namespace coinfer::cli {

namespace {

struct EstimateOptions {
  std::string scenario;
  std::vector<std::string> sets;
  bool json = false;
};

int estimate(const EstimateOptions& o) {
  const Scenario s = load_scenario(o.scenario, o.sets);
  const ModelCatalog models = ModelCatalog::load(data_path("models"));
  const LutSet luts = load_scenario_luts(s);
  check_scenario_against(s, models, luts, scheduler_traits(s.scheduler.name));
  ModelSpecs specs = scenario_model_specs(s, models);
  const auto est = make_estimator(s, luts, specs);
  const SystemState state = scenario_state(s, 0);
  const Scheme scheme = current_scheme(state);
  const Prediction p = est->predict(state, scheme);
  if (o.json) {
    nlohmann::ordered_json j{
        {"scenario", o.scenario},
        {"scheme", scheme.to_string()},
        {"estimator", "analytic"},
        {"throughput_rps", p.throughput_rps},
        {"mean_latency_ms", p.mean_latency_s * 1e3},
        {"mean_device_latency_ms", p.mean_device_latency_s * 1e3},
        {"server_utilisation", p.server_utilisation},
        {"offered_rps", p.offered_rps},
        {"unserved_rps", p.unserved_rps},
        {"p95_latency_ms", std::isfinite(p.p95_latency_s) ? nlohmann::ordered_json(p.p95_latency_s * 1e3) : nlohmann::ordered_json(nullptr)},
        {"power_w", p.power_w},
        {"energy_j_per_inference",
         std::isfinite(p.energy_per_inference_j) ? nlohmann::ordered_json(p.energy_per_inference_j) : nlohmann::ordered_json(nullptr)}};
    nlohmann::ordered_json devs = nlohmann::ordered_json::array();
    for (const auto& d : p.devices)
      devs.push_back({{"id", d.id},
                      {"throughput_rps", d.throughput_rps},
                      {"latency_ms", d.latency_s * 1e3},
                      {"server_rps", d.server_rps},
                      {"offered_rps", d.offered_rps},
                      {"unserved_rps", d.unserved_rps},
                      {"saturated", d.saturated()}});
    j["devices"] = devs;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("analytic estimate of %s at time 0 (not a simulation): %s\n", s.name.c_str(), scheme.to_string().c_str());
  std::printf("%-12s %10s %10s %12s\n", "device", "thr(rps)", "mean(ms)", "server(rps)");
  for (const auto& d : p.devices)
    std::printf("%-12s %10.2f %10.2f %12.2f%s\n", d.id.c_str(), d.throughput_rps, d.latency_s * 1e3, d.server_rps,
                d.saturated() ? strprintf("  SATURATED: %.2f of %.2f req/s arriving cannot be served; its queue grows for the rest of the run",
                                          d.unserved_rps, d.offered_rps)
                                    .c_str()
                              : "");
  std::printf("%-12s %10.2f %10.2f\n", "total", p.throughput_rps, p.mean_latency_s * 1e3);
  std::printf("p95 %.2f ms; devices' power %.3f W, %.6f J per inference\n", p.p95_latency_s * 1e3, p.power_w, p.energy_per_inference_j);
  for (const auto& [id, u] : p.server_utilisation) std::printf("server %s utilisation %.1f %%\n", id.c_str(), u * 100);
  return 0;
}

}  // namespace

void register_scheduler(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("scheduler", "schedulers a scenario can name, and what their estimator predicts (sched/README.md)");
  cmd->require_subcommand(1);
  CLI::App* list =
      cmd->add_subcommand("list", "print every scheduler with what it does (--names: the names only; --markdown: the table of sched/README.md)");
  auto markdown = std::make_shared<bool>(false), names = std::make_shared<bool>(false);
  list->add_flag("--markdown", *markdown, "each scheduler with what it does and its parameters, as a Markdown table");
  list->add_flag("--names", *names, "the names only, one per line (for scripts)");
  list->callback([&exit_code, markdown, names] {
    exit_code = guarded([markdown, names] {
      if (*markdown) {
        std::cout << scheduler_table_markdown();
        return 0;
      }
      if (*names) {
        for (const auto& n : scheduler_names()) std::cout << n << "\n";
        return 0;
      }
      // Each name with the first sentence of what it does, Markdown marks removed.
      const auto catalog = scheduler_catalog();
      size_t width = 0;
      for (const auto& i : catalog) width = std::max(width, i.name.size());
      for (const auto& i : catalog) {
        std::string what;
        for (const char c : i.summary)
          if (c != '`' && c != '*') what += c;
        const size_t stop = what.find(". ");
        if (stop != std::string::npos) what = what.substr(0, stop + 1);
        if (what.size() > 110) what = what.substr(0, what.rfind(' ', 106)) + " ...";
        std::cout << i.name << std::string(width + 2 - i.name.size(), ' ') << what << "\n";
      }
      std::cout << "(scheduler.name in a scenario; parameters: coinfer scheduler list --markdown, or sched/README.md)\n";
      return 0;
    });
  });
  auto o = std::make_shared<EstimateOptions>();
  CLI::App* est = cmd->add_subcommand("estimate", "the analytic estimator's prediction for the scenario's own strategies at time 0");
  add_scenario_args(*est, o->scenario, o->sets);
  est->add_flag("--json", o->json, "print one JSON document");
  est->callback([o, &exit_code] { exit_code = guarded([&] { return estimate(*o); }); });
}

}  // namespace coinfer::cli
