// coinfer sweep SCENARIO --grid key=values ... : runs every grid point x seed, each as its own
// `coinfer run` process (one SimGrid engine per process), locally with a process pool or as a Slurm job
// array; resumable; merges into sweep.h5 and sweep.csv. coinfer sweep collect DIR merges again.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "cli/point_runner.hpp"
#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/lut_repository.hpp"
#include "io/data_root.hpp"
#include "io/input_fingerprint.hpp"
#include "core/metrics.hpp"
#include "core/run_results.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "io/sweep_table.hpp"
#include "io/yaml_util.hpp"
#include "sim/simulation.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace coinfer::cli {

namespace {

struct SweepOptions {
  std::string scenario, out, dir;
  RunnerOptions runner;
  std::vector<std::string> grids, sets;
  int seeds = 1, task = -1;
  bool quiet = false;
};

// Friendly grid names for common keys; anything else is a key path ("*" = every list entry).
const std::map<std::string, std::string> kAliases = {
    {"devices", "devices.0.count"},
    {"bandwidth_mbps", "devices.*.link.bandwidth_mbps"},
    {"scheduler", "scheduler.name"},
    {"max_batch", "servers.*.batch.max_size"},
    {"window_ms", "servers.*.batch.window_ms"},
    {"workers", "servers.*.workers"},
};

struct Axis {
  std::string name, path;
  std::vector<std::string> values;
};

Axis parse_grid(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InputError(SourceLocation{"--grid", 0, 0}, text, "expected KEY=v1,v2,... or KEY=a..b");
  Axis a;
  a.name = text.substr(0, eq);
  auto it = kAliases.find(a.name);
  a.path = it == kAliases.end() ? a.name : it->second;
  const std::string vals = text.substr(eq + 1);
  auto dots = vals.find("..");
  if (dots != std::string::npos && vals.find(',') == std::string::npos) {
    long long lo = 0, hi = 0;
    try {
      size_t u1 = 0, u2 = 0;
      lo = std::stoll(vals.substr(0, dots), &u1);
      hi = std::stoll(vals.substr(dots + 2), &u2);
      if (u1 != dots || u2 != vals.size() - dots - 2) throw std::invalid_argument(vals);
    } catch (const std::exception&) {
      throw InputError(SourceLocation{"--grid", 0, 0}, a.name, "range '" + vals + "' must be two integers a..b");
    }
    if (lo > hi) throw InputError(SourceLocation{"--grid", 0, 0}, a.name, "range " + vals + " is empty");
    if (hi - lo > 100000) throw InputError(SourceLocation{"--grid", 0, 0}, a.name, "range " + vals + " is too large");
    for (long long v = lo; v <= hi; ++v) a.values.push_back(std::to_string(v));
  } else {
    // Commas inside (), [] or {} belong to the value: pp(0,1), local[cpu:0-1,gpu:1-9], {x_m: 1, y_m: 2}.
    std::string v;
    int depth = 0;
    for (const char c : vals) {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      if (c == ',' && depth == 0) {
        if (!v.empty()) a.values.push_back(v);
        v.clear();
      } else {
        v += c;
      }
    }
    if (!v.empty()) a.values.push_back(v);
  }
  if (a.values.empty()) throw InputError(SourceLocation{"--grid", 0, 0}, a.name, "no values");
  return a;
}

int collect(const std::string& dir, bool quiet) {
  json m = read_manifest(dir);
  SweepTable t;
  t.scenario = m["scenario"].get<std::string>();
  for (const auto& a : m["axes"]) t.axes.push_back(a.get<std::string>());
  if (m.contains("axis_labels"))  // sweeps made before version 0.1 with labels have none
    for (const auto& l : m["axis_labels"]) t.axis_labels.push_back(l.get<std::string>());
  int missing = 0;
  for (size_t i = 0; i < m["points"].size(); ++i) {
    const json& p = m["points"][i];
    SweepRow r;
    r.point = static_cast<int>(i);
    r.seed = p["seed"].get<long long>();
    for (const auto& v : p["values"]) r.values.push_back(v.get<std::string>());
    // A point whose inputs changed since it ran (its digest differs) has no result yet: its old one is stale.
    if (point_done(dir, static_cast<int>(i), m)) read_point_summary((point_dir(dir, static_cast<int>(i)) / "summary.json").string(), r);
    if (!r.ok) ++missing;
    t.rows.push_back(r);
  }
  write_sweep_h5((fs::path(dir) / "sweep.h5").string(), t);
  write_sweep_csv((fs::path(dir) / "sweep.csv").string(), t);
  if (!quiet) std::printf("merged %zu points (%d without results) into %s/sweep.h5 and sweep.csv\n", t.rows.size(), missing, dir.c_str());
  return missing == 0 ? 0 : 1;
}

// What an axis varies on this scenario, for the figures' axis labels (the x axis read
// "devices" when only the first entry's count varied, "link bandwidth" when some devices follow a
// trace). `s` is the scenario with the sweep's --set overrides and the axis's first value.
std::string axis_label(const Axis& a, const Scenario& s) {
  if (a.path == "devices.0.count") {
    // Devices expanded from one YAML entry share its location.
    std::set<std::pair<int, int>> entries;
    size_t first_entry = 0;
    for (const auto& d : s.devices) entries.insert({d.where.line, d.where.column});
    for (const auto& d : s.devices)
      if (d.where.line == s.devices.front().where.line && d.where.column == s.devices.front().where.column) ++first_entry;
    if (entries.size() <= 1) return "devices";
    const size_t others = s.devices.size() - first_entry;
    return "devices of the first device entry (" + std::to_string(others) + " other device" + (others == 1 ? "" : "s") + " fixed)";
  }
  if (a.path == "devices.*.link.bandwidth_mbps") {
    std::vector<std::string> fixed;  // devices whose bandwidth a trace or an event at 0 s sets instead
    for (const auto& d : s.devices) {
      bool by_event = false;
      for (const auto& e : s.events) by_event |= e.of_device<event::Bandwidth>(d.id) && e.at_s <= 0;
      if ((!d.link.trace.empty() && d.link.trace.front().t_s <= 0) || by_event) fixed.push_back(d.id);
    }
    if (fixed.empty()) return "link bandwidth (Mbit/s)";
    const size_t varied = s.devices.size() - fixed.size();
    if (fixed.size() > 3) fixed = {fixed[0], fixed[1], "..."};
    return "link bandwidth (Mbit/s) of " + std::to_string(varied) + " of " + std::to_string(s.devices.size()) + " devices (" + join(fixed, ", ") +
           ": trace or event)";
  }
  return a.name == a.path ? a.name : a.name + " (" + a.path + ")";
}

int sweep(const SweepOptions& o) {
  // Everything is checked before anything runs.
  o.runner.check();
  if (o.seeds < 1) throw InputError(SourceLocation{"--seeds", 0, 0}, "--seeds", "must be >= 1");
  std::vector<Axis> axes;
  std::set<std::string> names;
  for (const auto& g : o.grids) {
    Axis a = parse_grid(g);
    if (!names.insert(a.name).second) throw InputError(SourceLocation{"--grid", 0, 0}, a.name, "given twice");
    if (a.path == "seed") throw InputError(SourceLocation{"--grid", 0, 0}, a.name, "use --seeds for seeds");
    // A grid key is what `run --set` takes: also keys the file leaves at their defaults. Each value is
    // tried now (an unknown key gets the loader's "did you mean"), so a bad axis stops the sweep
    // before any point runs.
    std::vector<std::string> tried = a.values;
    if (tried.size() > 50) tried = {a.values.front(), a.values[a.values.size() / 2], a.values.back()};  // ranges: ends and middle
    for (const std::string& v : tried) {
      std::vector<std::string> trial = o.sets;
      trial.push_back(a.path + "=" + v);
      try {
        load_scenario(o.scenario, trial);
      } catch (const InputError& e) {
        throw InputError(SourceLocation{"--grid " + a.name + "=" + v, 0, 0}, a.name,
                         std::string(e.what()) + (a.path != a.name ? " (" + a.name + " means " + a.path + ")" : std::string()));
      }
    }
    axes.push_back(a);
  }
  Scenario base = load_scenario(o.scenario);
  const std::string dir = o.out.empty() ? "results/sweep-" + base.name : o.out;
  check_output_folder(dir, "--out");
  // Points: the grid's cartesian product (first axis slowest), seeds 1..N innermost.
  json manifest;
  manifest["scenario"] = fs::absolute(o.scenario).string();
  manifest["axes"] = json::array();
  for (const auto& a : axes) manifest["axes"].push_back(a.name);
  manifest["grid"] = json::array();
  for (const auto& a : axes) manifest["grid"].push_back({{"name", a.name}, {"path", a.path}, {"values", a.values}});
  manifest["axis_labels"] = json::array();
  for (const auto& a : axes) {
    std::vector<std::string> sets = o.sets;
    sets.push_back(a.path + "=" + a.values.front());
    manifest["axis_labels"].push_back(axis_label(a, load_scenario(o.scenario, sets)));
  }
  manifest["seeds"] = o.seeds;
  manifest["sets"] = o.sets;
  {
    RunResults stamp;  // this invocation: program, commit, command line (cli/cmd_version.cpp)
    stamp_provenance(stamp);
    manifest["made_by"] = {{"program", stamp.made_by.program},
                           {"commit", stamp.made_by.commit},
                           {"command", stamp.made_by.command_line},
                           {"working_directory", stamp.made_by.working_directory},
                           {"scenario_copy", "scenario_as_run.yaml"},
                           {"note",
                            "each point's scenario as run (overrides applied) is in points/pNNNNN/summary.json made_by.scenario_as_run; "
                            "a point's inputs digest covers it and every file it read (io/input_fingerprint.hpp)"}};
  }
  manifest["points"] = json::array();
  ModelCatalog models = ModelCatalog::load(data_path("models"));
  ContentDigests digests;
  std::map<std::string, std::unique_ptr<LutSet>> lut_cache;
  size_t combos = 1;
  for (const auto& a : axes) combos *= a.values.size();
  size_t seedless = 0;  // grid points where seeds change nothing (run once, with seed 1)
  for (size_t c = 0; c < combos; ++c) {
    // Mixed radix, last axis fastest.
    std::vector<size_t> idx(axes.size(), 0);
    size_t rest = c;
    for (size_t a = axes.size(); a-- > 0;) {
      idx[a] = rest % axes[a].values.size();
      rest /= axes[a].values.size();
    }
    for (int seed = 1; seed <= o.seeds; ++seed) {
      json p;
      p["values"] = json::array();
      p["sets"] = json::array();
      for (const auto& fixed : o.sets) p["sets"].push_back(fixed);
      for (size_t a = 0; a < axes.size(); ++a) {
        p["values"].push_back(axes[a].values[idx[a]]);
        p["sets"].push_back(axes[a].path + "=" + axes[a].values[idx[a]]);
      }
      p["sets"].push_back("seed=" + std::to_string(seed));
      p["seed"] = seed;
      std::vector<std::string> sets;
      for (const auto& x : p["sets"]) sets.push_back(x.get<std::string>());
      bool random = true;
      try {
        Scenario sc = load_scenario(o.scenario, sets);
        const std::string key = scenario_luts_identity(sc);
        if (!lut_cache.count(key)) lut_cache[key] = std::make_unique<LutSet>(load_scenario_luts(sc));
        random = scenario_uses_seed(sc, !sim::sampled_service_luts(sc, *lut_cache[key]).empty());
        sim::validate_simulation(sc, models, *lut_cache[key]);
        p["inputs"] = input_fingerprint(sc, *lut_cache[key], digests, kMetricsRules);
      } catch (const InputError& e) {
        throw InputError(std::string("grid point ") + join(sets, " ") + ": " + e.what());
      }
      manifest["points"].push_back(p);
      if (!random) {
        if (o.seeds > 1) ++seedless;
        break;  // identical results for every seed: one point stands for all
      }
    }
  }
  if (seedless > 0 && !o.quiet)
    log::info("sweep", strprintf("note: %zu of %zu grid points have no random element (no Poisson arrivals): seeds 2..%d would "
                                 "repeat seed 1 exactly, so those points run once, with seed 1",
                                 seedless, combos, o.seeds));
  const fs::path mpath = fs::path(dir) / "sweep.json";
  if (fs::exists(mpath)) {
    json old = read_manifest(dir);
    if (old["scenario"] != manifest["scenario"] || old["grid"] != manifest["grid"] || old["seeds"] != manifest["seeds"] ||
        old.value("sets", json::array()) != manifest["sets"])
      throw InputError(SourceLocation{dir, 0, 0}, "--out", "this folder holds a different sweep; choose another --out");
  }
  const int total = static_cast<int>(manifest["points"].size());
  std::vector<int> todo;
  int stale = 0;  // finished once, but their scenario or data files changed since
  for (int i = 0; i < total; ++i) {
    if (point_done(dir, i, manifest)) continue;
    todo.push_back(i);
    if (point_done(dir, i)) ++stale;
  }
  // The manifest (and the scenario's copy) describe the sweep as this invocation runs it.
  std::error_code ec;
  const bool new_folder = !fs::exists(dir, ec);
  fs::create_directories(dir);
  write_text_atomic(mpath.string(), manifest.dump(1) + "\n");
  {
    std::ifstream in(o.scenario, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    write_text_atomic((fs::path(dir) / "scenario_as_run.yaml").string(), text.str());
  }
  if (!o.quiet) {
    log::info("sweep", strprintf("%d points (%zu grid axes x %d seeds), %d already done, %zu to run", total, axes.size(), o.seeds,
                                 total - static_cast<int>(todo.size()), todo.size()));
    if (stale > 0)
      log::info("sweep", strprintf("%d of them ran before with other inputs (the scenario file, a LUT, trace or model spec changed, or "
                                   "a coinfer whose figures meant something else): running them again",
                                   stale));
  }
  if (o.runner.backend == "slurm") {
    const int chunk = o.runner.slurm.chunk;
    std::string job;
    try {
      job = submit_slurm(dir, total, o.runner.slurm);
    } catch (...) {
      // Nothing was submitted: leave no sweep folder (or, in an earlier one, no script) behind.
      if (new_folder)
        fs::remove_all(dir, ec);
      else
        fs::remove(fs::path(dir) / "sweep.sbatch", ec);
      throw;
    }
    std::printf("submitted Slurm job %s (%d array tasks of %d points); when it is done: coinfer sweep collect %s\n", job.c_str(),
                (total + chunk - 1) / chunk, chunk, dir.c_str());
    if (o.runner.slurm.wait) return collect(dir, o.quiet);
    return 0;
  }
  const int failed = run_points(manifest, dir, todo, o.runner.local_jobs(), o.quiet);
  const int rc = collect(dir, o.quiet);
  if (failed > 0) log::warn("sweep", strprintf("%d points failed (their logs are named above); rerun to retry them", failed));
  return failed > 0 || rc != 0 ? 1 : 0;
}

int run_task(const SweepOptions& o) {
  json m = read_manifest(o.dir);
  const int total = static_cast<int>(m["points"].size());
  std::vector<int> todo;
  const int chunk = o.runner.slurm.chunk;
  for (int i = o.task * chunk; i < std::min(total, (o.task + 1) * chunk); ++i)
    if (!point_done(o.dir, i, m)) todo.push_back(i);
  return run_points(m, o.dir, todo, 1, true) > 0 ? 1 : 0;
}

}  // namespace

void register_sweep(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand("sweep", "run a scenario over a grid of keys and seeds; merge into sweep.h5/sweep.csv");
  cmd->add_option("scenario", o->scenario, "scenario YAML file");
  cmd->add_option("--grid", o->grids,
                  "KEY=v1,v2,... or KEY=a..b (repeatable; a comma inside (), [] or {} is part of a value: pp(0,1)). KEY is a scenario key path "
                  "(devices.0.link.latency_ms, * for "
                  "every list entry) or devices, bandwidth_mbps, scheduler, max_batch, window_ms, workers");
  cmd->add_option("--set", o->sets, "a fixed override for every point, e.g. --set duration_s=20 (repeatable)");
  cmd->add_option("--seeds", o->seeds, "run every grid point with seeds 1..N (default 1)");
  cmd->add_option("--out", o->out, "sweep folder (default results/sweep-<scenario name>); rerunning resumes");
  o->runner.add_to(*cmd, "points", 10, "wait for the job and merge");
  cmd->callback([o, cmd, &exit_code] {
    if (cmd->get_subcommands().empty()) {
      if (o->scenario.empty()) {
        std::cerr << "error: give a scenario (or: sweep collect DIR)\n";
        exit_code = 2;
        return;
      }
      o->quiet = quiet("sweep");
      exit_code = guarded([&] { return sweep(*o); });
    }
  });
  CLI::App* col = cmd->add_subcommand("collect", "merge a sweep folder's finished points into sweep.h5 and sweep.csv");
  col->add_option("dir", o->dir, "sweep folder")->required();
  col->callback([o, &exit_code] { exit_code = guarded([&] { return collect(o->dir, quiet("sweep")); }); });
  CLI::App* task = cmd->add_subcommand("run-task", "(used by the Slurm script) run one array task's points");
  task->add_option("dir", o->dir, "sweep folder")->required();
  task->add_option("--task", o->task, "array task index")->required();
  task->add_option("--chunk", o->runner.slurm.chunk, "points per task")->required();
  task->callback([o, &exit_code] { exit_code = guarded([&] { return run_task(*o); }); });
}

}  // namespace coinfer::cli
