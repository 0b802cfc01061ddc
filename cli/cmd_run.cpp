// coinfer run SCENARIO: simulate a scenario, write results.h5 and summary.json, print a table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

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
#include "cli/scenario_args.hpp"

namespace fs = std::filesystem;

namespace coinfer::cli {

void print_run_table(const RunResults& r, std::ostream& os) {
  // Beyond kMaxRows devices the console shows the first ones and the total (summary.json has all).
  constexpr size_t kMaxRows = 40, kShown = 20;
  const size_t devices = r.summary.empty() ? 0 : r.summary.size() - 1;
  const auto shown = [&](size_t i) { return i >= devices || devices <= kMaxRows || i < kShown; };
  // Columns as wide as their longest shown entry: strategies such as local[cpu:0-1,gpu:1-9] are long.
  size_t wid = 6, wsv = 6, wst = 8;
  for (size_t i = 0; i < r.summary.size(); ++i) {
    if (!shown(i)) continue;
    wid = std::max(wid, r.summary[i].id.size());
    if (i < r.devices.size()) {
      wsv = std::max(wsv, r.devices[i].server.size());
      wst = std::max(wst, r.devices[i].strategy.size());
    }
  }
  const auto row = [&](const std::string& id, const std::string& server, const std::string& strategy, const std::string& rest) {
    std::string line = id + std::string(wid + 1 - std::min(wid, id.size()), ' ') + server + std::string(wsv + 1 - std::min(wsv, server.size()), ' ') +
                       strategy + std::string(wst + 1 - std::min(wst, strategy.size()), ' ') + rest + "\n";
    os << line;
    return line.size();
  };
  char rest[192];
  std::snprintf(rest, sizeof rest, "%9s %7s %9s %9s %9s %9s %10s", "completed", "failed", "thr(rps)", "mean(ms)", "p95(ms)", "p99(ms)", "J/infer");
  const size_t width = row("device", "server", "strategy", rest) - 1;
  for (size_t i = 0; i < r.summary.size(); ++i) {
    const auto& m = r.summary[i];
    const bool total = m.id == "total";
    if (!shown(i)) {
      if (i == kShown) os << "... " << devices - kShown << " more devices (summary.json and results.h5 have every one)\n";
      continue;
    }
    std::snprintf(rest, sizeof rest, "%9lld %7lld %9.2f %9.2f %9.2f %9.2f %10.4f%s", m.completed, m.failed, m.throughput_rps, m.latency.mean_ms,
                  m.latency.p95_ms, m.latency.p99_ms, m.energy_j_per_inference, m.saturated ? "  SATURATED" : "");
    if (total) os << std::string(width, '-') << "\n";
    const bool has = !total && i < r.devices.size();
    row(m.id, has ? (r.devices[i].server.empty() ? "-" : r.devices[i].server) : "", has ? r.devices[i].strategy : "", rest);
  }
  if (!r.summary.empty() && r.summary.back().saturated) {
    const MetricsSummary& t = r.summary.back();
    char line[512];
    std::snprintf(line, sizeof line,
                  "SATURATED: queues grew over the measurement window (%d of %zu devices): %lld requests waiting at its end against %lld at "
                  "its start. Arrivals %.2f req/s, delivered in the window %.2f req/s (thr); the window's requests completed with the "
                  "drain: %.2f req/s (%lld finished after the window). Figures of this run describe an overloaded system.\n",
                  t.saturated_devices, devices, t.backlog_end, t.backlog_start, t.offered_rps, t.throughput_rps, t.throughput_incl_drain_rps,
                  t.completed_in_drain);
    os << line;
  }
  // Why requests failed: the most frequent reasons (results.h5 /requests/failure has each one's).
  long long failed = 0;
  for (const auto& [why, n] : r.failure_reasons) failed += n;
  if (failed > 0) {
    std::vector<std::pair<long long, std::string>> top;
    for (const auto& [why, n] : r.failure_reasons) top.emplace_back(n, why);
    std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    constexpr size_t kReasons = 3;
    os << "failed requests by reason (" << failed << " in the window; results.h5 /requests/failure has each one's):\n";
    for (size_t k = 0; k < top.size() && k < kReasons; ++k) {
      std::string why = top[k].second;
      if (why.size() > 200) why = why.substr(0, 197) + "...";
      os << "  " << top[k].first << " x " << why << "\n";
    }
    if (top.size() > kReasons) os << "  ... " << top.size() - kReasons << " other reasons\n";
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
  // Everything appears together or not at all (plumbing/atomic_dir.hpp): the staging folder holds the
  // requests as they finish (a run's length does not set its memory) and goes away if the run throws.
  StagedOutput staged(out, "--out");
  // Testing knob as COINFER_REQUEST_CHUNK below: fewer requests held before results.h5's /requests
  // columns grow block by block.
  const char* buffer = std::getenv("COINFER_RESULTS_BUFFER_ROWS");
  ResultsH5Writer results(staged.path("results.h5"),
                          buffer ? static_cast<std::size_t>(std::max(0L, std::atol(buffer))) : ResultsH5Writer::kBufferRows);
  so.stream_requests = [&results](std::vector<RequestRecord>& block) { results.add_requests(block); };
  // Testing knob (sim/README.md "Results written as requests finish"): a smaller ledger chunk hands
  // requests over mid-run in short runs too. Results do not depend on it.
  if (const char* chunk = std::getenv("COINFER_REQUEST_CHUNK")) so.request_chunk = static_cast<std::size_t>(std::max(1L, std::atol(chunk)));
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
  results.finish(r);
  write_summary_json(staged.path("summary.json"), r);
  write_text_atomic(staged.path("timing.json"), timing_json_text(r));
  write_text_atomic(staged.path("decisions.jsonl"), decisions_jsonl_text(r.decisions));
  staged.commit();
  phase.mark("wrote the results");
  if (o.timing) std::fprintf(stderr, "timing: requests=%lld engine_wall_s=%.6f\n", r.request_count, r.engine_wall_s);  // asked for: not a log message
  if (!o.quiet) {
    std::cout << "scenario " << s.name << " (seed " << s.seed << "), measured " << s.warmup_s << ".." << s.duration_s << " s simulated\n";
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
      std::printf("scheduler %s: %zu decisions (mean %.3f ms, max %.3f ms of wall time), %d strategy switches; last: %s\n", r.scheduler.c_str(),
                  r.decisions.size(), total_wall / r.decisions.size() * 1e3, max_wall * 1e3, switches, last.c_str());
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
  add_scenario_args(*cmd, opts->scenario, opts->sets, "scenario YAML file (see scenarios/README.md)");
  cmd->add_option("--out", opts->out, "output folder (default: results/<scenario name>)");
  cmd->add_flag("--timing", opts->timing, "print the engine's wall-clock time and request count on stderr");
  cmd->add_option("--cfg", opts->cfg, "a SimGrid setting KEY:VALUE, applied after coinfer's (repeatable), e.g. --cfg=network/model:LV08");
  cmd->add_option("--log", opts->log, "a SimGrid log threshold CATEGORY.thresh:LEVEL (repeatable), e.g. --log=root.thresh:info");
  cmd->callback([opts, &exit_code] {
    opts->quiet = quiet("run");
    exit_code = guarded([&] { return run_command(*opts); });
  });
}

}  // namespace coinfer::cli
