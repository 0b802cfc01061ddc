// coinfer run SCENARIO: simulate a scenario, write results.h5 and summary.json, print a table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/text_util.hpp"
#include "core/log.hpp"
#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "core/input_error.hpp"
#include "io/decisions_jsonl.hpp"
#include "io/lut_repository.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"
#include "io/results_h5.hpp"
#include "io/scenario_loader.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/summary_json.hpp"
#include "sim/simulation.hpp"

namespace fs = std::filesystem;

namespace coinfer::cli {

void print_run_table(const RunResults& r, std::ostream& os) {
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-14s %9s %7s %9s %9s %9s %9s %10s\n", "device", "strategy", "completed", "failed",
                "thr(rps)", "mean(ms)", "p95(ms)", "p99(ms)", "J/infer");
  os << line;
  // Beyond kMaxRows devices the console shows the first ones and the total (summary.json has all).
  constexpr size_t kMaxRows = 40, kShown = 20;
  const size_t devices = r.summary.empty() ? 0 : r.summary.size() - 1;
  for (size_t i = 0; i < r.summary.size(); ++i) {
    const auto& m = r.summary[i];
    const bool total = m.id == "total";
    if (!total && devices > kMaxRows && i >= kShown) {
      if (i == kShown) os << "... " << devices - kShown << " more devices (summary.json and results.h5 have every one)\n";
      continue;
    }
    std::snprintf(line, sizeof line, "%-12s %-14s %9lld %7lld %9.2f %9.2f %9.2f %9.2f %10.4f\n", m.id.c_str(),
                  total ? "" : r.devices[i].strategy.c_str(), m.completed, m.failed, m.throughput_rps,
                  m.latency.mean_ms, m.latency.p95_ms, m.latency.p99_ms, m.energy_j_per_inference);
    if (total) os << std::string(96, '-') << "\n";
    os << line;
  }
}

namespace {

struct RunOptions {
  std::string scenario;
  std::string out;
  std::vector<std::string> sets;
  bool quiet = false;
  bool timing = false;
  std::vector<std::string> cfg, log;
};


int run_command(const RunOptions& o) {
  log::PhaseTimer phase("run");  // coinfer -v: where the time goes
  Scenario s = load_scenario(o.scenario, o.sets);
  phase.mark("loaded the scenario");
  const std::string out = o.out.empty() ? "results/" + s.name : o.out;
  check_output_folder(out, "--out");
  check_replaceable_output(out, "--out");  // before the run, not after it
  ModelCatalog models = ModelCatalog::load(data_path("models"));
  phase.mark("loaded the model specs");
  LutSet luts = load_scenario_luts(s);
  phase.mark("loaded the LUTs");
  sim::SimulationOptions so;
  so.engine_config = o.cfg;
  so.engine_log = o.log;
  ProgressLine progress("run " + s.name, o.quiet);
  so.progress = [&](double t, long long n) {
    char what[96];
    std::snprintf(what, sizeof what, "simulated %.1f / %.1f s, %lld requests", t, s.duration_s, n);
    progress.update(t, s.duration_s, what);
  };
  RunResults r = sim::run_simulation(s, models, luts, so);
  r.data_files = run_data_files(s, luts);
  stamp_provenance(r);
  progress.finish();
  phase.mark("simulated (sim/: checks, platform, actors, engine)");
  if (!r.estimated_lut_entries.empty()) {
    log::warn("run", strprintf("%zu LUT entries this run may consult are ESTIMATED by fitted regressors, not measured (luts_fill: allow); "
                               "listed in summary.json (estimated_lut_entries); first: %s",
                               r.estimated_lut_entries.size(), r.estimated_lut_entries.front().c_str()));
  }
  // Everything appears together or not at all (plumbing/atomic_dir.hpp); nothing exists before this point.
  StagedOutput staged(out, "--out");
  write_results_h5(staged.path("results.h5"), r);
  write_summary_json(staged.path("summary.json"), r);
  write_text_atomic(staged.path("timing.json"), timing_json_text(r));
  write_text_atomic(staged.path("decisions.jsonl"), decisions_jsonl_text(r.decisions));
  staged.commit();
  phase.mark("wrote the results");
  if (o.timing)
    std::fprintf(stderr, "timing: requests=%zu engine_wall_s=%.6f\n", r.requests.size(), r.engine_wall_s);  // asked for: not a log message
  if (!o.quiet) {
    std::cout << "scenario " << s.name << " (seed " << s.seed << "), measured " << s.warmup_s << ".." << s.duration_s
              << " s simulated\n";
    print_run_table(r, std::cout);
    if (!r.decisions.empty()) {
      int switches = 0;
      double total_wall = 0, max_wall = 0;
      for (const auto& d : r.decisions) {
        switches += d.switched;
        total_wall += d.wall_s;
        max_wall = std::max(max_wall, d.wall_s);
      }
      std::string last = r.decisions.back().scheme;
      if (last.size() > 300) {  // thousands of devices: the start, then where the whole scheme is
        last.resize(last.rfind(' ', 300));
        last += " ... (decisions.jsonl has the whole scheme)";
      }
      std::printf("scheduler %s: %zu decisions (mean %.3f ms, max %.3f ms of wall time), %d strategy switches; last: %s\n",
                  r.scheduler.c_str(), r.decisions.size(), total_wall / r.decisions.size() * 1e3, max_wall * 1e3, switches, last.c_str());
      std::fflush(stdout);
    }
    std::cout << "wrote " << out << "/results.h5, summary.json, decisions.jsonl and timing.json\n";
  }
  return 0;
}

}  // namespace

void register_run(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "simulate a scenario; writes DIR/results.h5 and DIR/summary.json");
  cmd->add_option("scenario", opts->scenario, "scenario YAML file (see scenarios/README.md)")->required();
  cmd->add_option("--out", opts->out, "output folder (default: results/<scenario name>)");
  cmd->add_option("--set", opts->sets, "override a scenario key, e.g. --set devices.0.link.bandwidth_mbps=5 (repeatable)");
  cmd->add_flag("--timing", opts->timing, "print the engine's wall-clock time and request count on stderr");
  cmd->add_option("--cfg", opts->cfg, "a SimGrid setting KEY:VALUE, applied after coinfer's (repeatable), e.g. --cfg=network/model:LV08");
  cmd->add_option("--log", opts->log, "a SimGrid log threshold CATEGORY.thresh:LEVEL (repeatable), e.g. --log=root.thresh:info");
  cmd->callback([opts, &exit_code] {
    opts->quiet = quiet("run");
    exit_code = guarded([&] { return run_command(*opts); });
  });
}

}  // namespace coinfer::cli
