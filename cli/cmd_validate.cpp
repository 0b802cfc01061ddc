// coinfer validate SCENARIO: checks that the machine is quiet and that the LUTs describe it (a short
// calibration, or --reprofile), then runs the scenario in the simulator
// and on the emulated testbed (coinfer-rt testbed), once per scheduler, and reports per metric how far
// the simulation was from the testbed and whether the simulated ranking of schedulers held.
// Writes DIR/validate.json and DIR/validate.csv beside each run's own results (DIR/<scheduler>/sim,
// DIR/<scheduler>/testbed). Metric definitions: hw/README.md, "Validation".
// Named phases (validate_command below): choose_runs, check_machine, choose_luts, reprofile, calibrate,
// then compare_scheduler for each scheduler (run_testbed_for inside), rank_schedulers, the report.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "plumbing/child_process.hpp"
#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/decisions_jsonl.hpp"
#include "io/lut_h5.hpp"
#include "io/lut_repository.hpp"
#include "io/results_h5.hpp"
#include "io/scenario_loader.hpp"
#include "sched/scheduler_factory.hpp"
#include "cli/scenario_args.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace coinfer::cli {

namespace {

struct ValidateOptions {
  std::string scenario, out;
  std::vector<std::string> sets;
  std::string schedulers;         // comma-separated; empty = the scenario's
  double tolerance_pct = 5;       // mean latency and throughput
  double p95_tolerance_pct = 10;  // p95 latency
  double calibration_tolerance_pct = 5;
  bool reprofile = false;  // re-profile every LUT the scenario uses and validate against those
  int reprofile_repeats = 5;
  bool calibrate = true;
  bool allow_loaded = false;
  double max_busy_pct = 25, max_steal_pct = 5;
  std::string device_cpu = "auto";
  int threads = 1;
  bool strict = false;
  bool loopback = false;
  // Real runs made elsewhere (coinfer testbed --inventory, coinfer collect): each folder's run is
  // compared with a simulation of the scenario under that run's scheduler; no testbed is started.
  std::vector<std::string> real;
};

// CPU time of the whole machine from /proc/stat's first line: busy (user, nice, system, irq,
// softirq), idle (idle, iowait) and steal (time a hypervisor gave to someone else), in ticks.
struct CpuTicks {
  unsigned long long busy = 0, idle = 0, steal = 0;
};

CpuTicks read_cpu_ticks() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {0};
  in >> cpu;
  for (auto& x : v) in >> x;
  CpuTicks t;
  t.busy = v[0] + v[1] + v[2] + v[5] + v[6];
  t.idle = v[3] + v[4];
  t.steal = v[7];
  return t;
}

// Busy and stolen shares (percent of all cores' time) between two readings.
std::pair<double, double> load_between(const CpuTicks& a, const CpuTicks& b) {
  const double busy = static_cast<double>(b.busy - a.busy), idle = static_cast<double>(b.idle - a.idle),
               steal = static_cast<double>(b.steal - a.steal);
  const double all = busy + idle + steal;
  if (all <= 0) return {0, 0};
  return {busy / all * 100, steal / all * 100};
}

// What else runs on this machine while nothing of ours does: two seconds of /proc/stat.
std::pair<double, double> sample_idle_machine() {
  const CpuTicks a = read_cpu_ticks();
  ::sleep(2);
  return load_between(a, read_cpu_ticks());
}

// Runs a program with its output appended to `log`; returns its exit status.
int run_logged(const std::vector<std::string>& args, const std::string& log) {
  ChildSpec spec;
  spec.argv = args;
  spec.stdout_file = log;
  spec.stderr_file = "&1";
  spec.append = true;
  return run_child(spec).status;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

double number(const json& j) { return j.is_number() ? j.get<double>() : NAN; }

struct Metric {
  std::string scope, name;  // scope: "total" or a device id
  double sim = NAN, real = NAN;
  double error_pct() const { return (std::isnan(sim) || std::isnan(real) || real == 0) ? NAN : (sim - real) / real * 100; }
};

std::vector<Metric> compare(const json& sim, const json& real) {
  std::vector<Metric> m;
  auto add = [&](const std::string& scope, const json& s, const json& r) {
    m.push_back({scope, "throughput_rps", number(s["throughput_rps"]), number(r["throughput_rps"])});
    m.push_back({scope, "latency_mean_ms", number(s["latency_ms"]["mean"]), number(r["latency_ms"]["mean"])});
    m.push_back({scope, "latency_p50_ms", number(s["latency_ms"]["p50"]), number(r["latency_ms"]["p50"])});
    m.push_back({scope, "latency_p95_ms", number(s["latency_ms"]["p95"]), number(r["latency_ms"]["p95"])});
    m.push_back({scope, "completed", number(s["completed"]), number(r["completed"])});
    m.push_back({scope, "energy_j_per_inference", number(s["energy_j_per_inference"]), number(r["energy_j_per_inference"])});
    m.push_back({scope, "failed", number(s["failed"]), number(r["failed"])});
  };
  add("total", sim["total"], real["total"]);
  for (auto it = sim["devices"].begin(); it != sim["devices"].end(); ++it)
    if (real["devices"].contains(it.key())) add(it.key(), it.value(), real["devices"][it.key()]);
  m.push_back({"total", "decisions", number(sim["decisions"]["count"]), number(real["decisions"]["count"])});
  return m;
}

// One LUT a validation uses and how the testbed runs it.
struct LutUse {
  LutKey key;
  bool device = false;  // run by a (capped) device process, else by the server
  int max_batch = 1;    // the largest batch the scenario runs on it
};

std::vector<LutUse> lut_uses(const Scenario& s) {
  std::vector<LutUse> uses;
  auto add = [&](const LutKey& k, bool device, int batch) {
    for (auto& u : uses)
      if (u.key == k && u.device == device) {
        u.max_batch = std::max(u.max_batch, batch);
        return;
      }
    uses.push_back({k, device, batch});
  };
  for (const auto& d : s.devices) {
    const ServerSpec& sv = s.servers[s.server_index(d.server)];
    // An idle helper runs the server's part of its server's batches.
    add(d.lut_key(d.model), true, d.workload.arrival == WorkloadSpec::Arrival::none ? sv.batch.max_size : 1);
    add({sv.type, d.model, d.dataset}, false, sv.batch.max_size);
    // Its server's cloud runs the cloud part of pp(k,m) (a cloud tier; hw/README.md "Cloud tier").
    if (!sv.cloud.empty()) {
      const ServerSpec& cloud = s.servers[static_cast<size_t>(s.server_index(sv.cloud))];
      add({cloud.type, d.model, d.dataset}, false, cloud.batch.max_size);
    }
    // A scheduler choosing servers may move the device to any of them.
    if (s.scheduler.choose_servers)
      for (const ServerSpec& other : s.servers) add({other.type, d.model, d.dataset}, false, other.batch.max_size);
  }
  return uses;
}

std::string lut_file_name(const LutKey& k) { return k.device_type + "--" + k.model + "--" + k.dataset + ".h5"; }

// Runs coinfer-profile on one LUT's model as the testbed will run it (the device cap, the threads).
void profile_as_testbed(const LutUse& u, bool whole_only, int max_batch, int repeats, double device_cpu, int threads, const std::string& out_file,
                        const std::string& log) {
  std::vector<std::string> args = {companion_path("coinfer-profile"),
                                   "--model",
                                   u.key.model,
                                   "--dataset",
                                   u.key.dataset,
                                   "--device-type",
                                   u.key.device_type,
                                   "--ranges",
                                   whole_only ? "whole" : "all",
                                   "--batch",
                                   "1.." + std::to_string(max_batch),
                                   "--repeats",
                                   std::to_string(repeats),
                                   "--warmup",
                                   "3",
                                   "--threads",
                                   std::to_string(threads),
                                   "--out",
                                   out_file,
                                   "--replace",
                                   "-q"};  // a scratch file, measured again on a second attempt
  if (u.device && device_cpu > 0) args.insert(args.end(), {"--cpu-quota", std::to_string(device_cpu)});
  const int rc = run_logged(args, log);
  if (rc != 0)
    throw InputError(SourceLocation{u.key.to_string(), 0, 0}, whole_only ? "calibration" : "--reprofile",
                     "coinfer profile failed (exit " + std::to_string(rc) + "), see " + log);
}

// The sequence of schemes a run decided, with their triggers ("trigger -> scheme" per decision).
std::vector<std::string> decision_sequence(const std::string& dir) {
  std::vector<std::string> seq;
  if (!fs::exists(dir + "/decisions.jsonl")) return seq;
  for (const auto& d : read_decisions_jsonl(dir + "/decisions.jsonl")) seq.push_back(d.trigger + " -> " + d.scheme);
  return seq;
}

// Where each completed request ran, counted by route: "dev<i> split <k> server <s> helper <h>" (h = -1:
// none; data_parallel requests show their side as split 0 or n), and by the batch size its server part
// ran at (0: it ran whole on its device). Both engines must route alike.
struct Routes {
  std::map<std::string, long long> routes;
  std::map<int, long long> batch_sizes;
};
Routes routes_of(const std::string& dir) {
  Routes r;
  if (!fs::exists(dir + "/results.h5")) return r;
  for (const RequestRecord& q : read_request_records(dir + "/results.h5")) {
    if (q.status != RequestRecord::Status::ok) continue;
    ++r.routes["dev" + std::to_string(q.device) + " split " + std::to_string(q.split) + " server " + std::to_string(q.server) + " helper " +
               std::to_string(q.helper)];
    ++r.batch_sizes[q.batch_size];
  }
  return r;
}

std::string fmt(double v, int prec = 2) {
  if (std::isnan(v)) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

// What the phases of one validation share.
struct Validation {
  explicit Validation(const ValidateOptions& opts) : o(opts), where{opts.scenario, 0, 0} {}
  const ValidateOptions& o;
  SourceLocation where;
  Scenario s;                // with --reprofile: reloaded with the fresh LUTs
  std::string out, rt, log;  // output folder, the coinfer-rt program, the log of every child run
  bool real_mode = false;    // --real: compare with runs made elsewhere
  std::vector<std::string> schedulers;
  std::map<std::string, std::string> real_dir;  // scheduler -> the real run's folder
  std::vector<std::string> sets;                // the runs' overrides (--set, and the fresh LUTs)
  LutSet luts;
  std::vector<LutUse> uses;
  double device_cpu = 0;  // the testbed's device cap, cores (0 = none)
  json report;            // validate.json
  // The comparison, scheduler by scheduler.
  std::ostringstream csv;
  std::vector<std::pair<double, double>> throughput;  // per scheduler: (sim, testbed)
  int failures = 0, off = 0;
};

// A LUT the comparison may use: measured, not synthesised (a warning only for real runs made elsewhere).
const LutTable& check_measured(const Validation& v, const LutSet& set, const LutKey& k) {
  const LutTable& t = set.table(k);
  if (t.provenance().kind != "measured" && v.real_mode) {
    log::warn("validate", "the LUT for " + k.to_string() + " (" + set.origin(k) + ") is " + t.provenance().kind +
                              ", not measured: the comparison tells how far those numbers are from the real run");
    return t;
  }
  if (t.provenance().kind != "measured")
    throw InputError(v.where, "luts",
                     "the LUT for " + k.to_string() + " (" + set.origin(k) + ") is " + t.provenance().kind +
                         ", not measured on this machine; make one with coinfer profile --model " + k.model + " --dataset " + k.dataset +
                         " --device-type " + k.device_type + " --out FILE, or pass --reprofile");
  return t;
}

// Phase 1: which schedulers to compare, and with --real which runs made elsewhere.
void choose_runs(Validation& v) {
  const ValidateOptions& o = v.o;
  v.s = load_scenario(o.scenario, o.sets);
  const Scenario& s = v.s;
  const SourceLocation& where = v.where;
  v.out = o.out.empty() ? "results/" + s.name + "-validate" : o.out;
  check_output_folder(v.out, "--out");
  v.rt = companion_path("coinfer-rt");
  const std::string& rt = v.rt;
  v.real_mode = !o.real.empty();
  const bool real_mode = v.real_mode;
  if (!real_mode && !fs::exists(rt)) throw InputError(where, "validate", "this coinfer was built without LibTorch (" + rt + " is missing)");
  std::vector<std::string>& schedulers = v.schedulers;
  schedulers = o.schedulers.empty() ? std::vector<std::string>{s.scheduler.name} : split(o.schedulers, ',');
  std::map<std::string, std::string>& real_dir = v.real_dir;
  if (real_mode) {
    if (!o.schedulers.empty())
      throw InputError(SourceLocation{"--schedulers", 0, 0}, "--schedulers", "not with --real: each real run says which scheduler it ran");
    schedulers.clear();
    for (const auto& d : o.real) {
      const std::string summary = d + "/summary.json";
      if (!fs::is_regular_file(summary) || !fs::is_regular_file(d + "/results.h5"))
        throw InputError(SourceLocation{d, 0, 0}, "--real",
                         "not a run's results folder (no summary.json and results.h5; coinfer collect makes one from journals)");
      json j;
      try {
        j = read_json(summary);
      } catch (const std::exception& e) {
        throw InputError(SourceLocation{summary, 0, 0}, "--real", e.what());
      }
      const std::string name = j.value("scheduler", std::string());
      if (name.empty()) throw InputError(SourceLocation{summary, 0, 0}, "scheduler", "the run does not say which scheduler it ran");
      if (real_dir.count(name))
        throw InputError(SourceLocation{d, 0, 0}, "--real", "a second real run of scheduler '" + name + "' (the first: " + real_dir[name] + ")");
      if (j.value("scenario", std::string()) != s.name)
        log::warn("validate", d + " is a run of scenario '" + j.value("scenario", std::string()) + "', compared with '" + s.name + "'");
      real_dir[name] = d;
      schedulers.push_back(name);
    }
  }
  const auto known = scheduler_names();
  for (const auto& name : schedulers)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError(SourceLocation{"--schedulers", 0, 0}, "--schedulers", "unknown scheduler '" + name + "' (known: " + join(known, ", ") + ")");
}

// Phase 3: is the machine quiet enough to measure? What else runs now shows in /proc/stat. (Not for
// real runs made elsewhere: nothing is measured here.)
void check_machine(Validation& v) {
  const ValidateOptions& o = v.o;
  const bool real_mode = v.real_mode;
  json& report = v.report;
  if (!real_mode) {
    const auto [busy, steal] = sample_idle_machine();
    // `loaded`: measured beyond the limits, reported only because of --allow-loaded (the comparison's
    // testbed side may be slower than on an idle machine; a reader must see it in the file).
    report["machine"] = {{"busy_pct_before", busy},
                         {"steal_pct_before", steal},
                         {"allow_loaded", o.allow_loaded},
                         {"loaded", busy > o.max_busy_pct || steal > o.max_steal_pct}};
    if (o.allow_loaded && (busy > o.max_busy_pct || steal > o.max_steal_pct))
      log::warn("validate", "the machine is loaded (" + fmt(busy, 1) + " % busy, " + fmt(steal, 1) +
                                " % stolen): measuring anyway (--allow-loaded; recorded in validate.json as machine.loaded)");
    log::info("validate", "machine before the runs: " + fmt(busy, 1) + " % busy, " + fmt(steal, 1) + " % stolen");
    if (!o.allow_loaded && (busy > o.max_busy_pct || steal > o.max_steal_pct))
      throw InputError(SourceLocation{"validate", 0, 0}, "machine",
                       "too loaded to measure: " + fmt(busy, 1) + " % of all cores busy with other programs (limit " + fmt(o.max_busy_pct, 0) +
                           " %) and " + fmt(steal, 1) + " % stolen by the hypervisor (limit " + fmt(o.max_steal_pct, 0) +
                           " %) over 2 s; a testbed sharing the CPU runs slower than its LUTs say. Validate on an idle machine, or pass "
                           "--allow-loaded to report anyway (recorded in validate.json)");
  }
}

// Phase 2: the LUTs: measured (not synthesised), and the device CPU cap they were measured with.
void choose_luts(Validation& v) {
  const ValidateOptions& o = v.o;
  Scenario& s = v.s;
  const SourceLocation& where = v.where;
  const bool real_mode = v.real_mode;
  json& report = v.report;
  v.luts = load_scenario_luts(s);
  const LutSet& luts = v.luts;
  v.uses = lut_uses(s);
  const std::vector<LutUse>& uses = v.uses;
  double& device_cpu = v.device_cpu;
  if (real_mode) {
    for (const auto& u : uses) check_measured(v, luts, u.key);  // warnings only
  } else if (o.device_cpu == "auto") {
    std::vector<double> caps;
    for (const auto& u : uses) {
      if (!u.device) continue;
      const LutTable& t = o.reprofile ? luts.table(u.key) : check_measured(v, luts, u.key);
      auto it = t.provenance().attributes.find("cpu_cap_cores");
      caps.push_back(it == t.provenance().attributes.end() ? 0 : std::atof(it->second.c_str()));
    }
    device_cpu = caps.empty() ? 0 : caps[0];
    for (double c : caps)
      if (c != device_cpu)
        throw InputError(where, "devices",
                         "device LUTs were measured with different CPU caps; the testbed caps every device alike: pass --device-cpu");
  } else {
    try {
      device_cpu = std::stod(o.device_cpu);
    } catch (const std::exception&) {
      throw InputError(SourceLocation{"--device-cpu", 0, 0}, "--device-cpu", "expected 'auto' or a number of cores, got '" + o.device_cpu + "'");
    }
  }
  report["device_cpu_cores"] = device_cpu;
}

// Phase 4: --reprofile: every LUT the scenario uses, measured now as the testbed runs it; the runs use these.
void reprofile(Validation& v) {
  const ValidateOptions& o = v.o;
  Scenario& s = v.s;
  const std::string& out = v.out;
  const std::string& log = v.log;
  const bool real_mode = v.real_mode;
  json& report = v.report;
  std::vector<std::string>& sets = v.sets;
  sets = o.sets;
  if (o.reprofile) {
    const std::string dir = fs::absolute(out + "/luts").string();
    fs::create_directories(dir);
    json fresh = json::array();
    for (const auto& u : v.uses) {
      log::info("validate", "re-profiling " + u.key.to_string() + " (" + (u.device ? "device" : "server") + ", batch 1.." +
                                std::to_string(u.max_batch) + ") ...");
      profile_as_testbed(u, false, u.max_batch, o.reprofile_repeats, v.device_cpu, o.threads, dir + "/" + lut_file_name(u.key), log);
      fresh.push_back(dir + "/" + lut_file_name(u.key));
    }
    sets.push_back("luts=[" + dir + "]");
    s = load_scenario(o.scenario, sets);
    v.luts = load_scenario_luts(s);
    report["luts"] = {{"reprofiled", true}, {"files", fresh}};
  } else {
    report["luts"] = {{"reprofiled", false}};
  }
  if (!real_mode)
    for (const auto& u : v.uses) check_measured(v, v.luts, u.key);
}

// Phase 5: calibration: does each LUT describe this machine as the testbed will run it? When it does not
// run, validate.json says so and why (a reader could not tell).
void calibrate(Validation& v) {
  const ValidateOptions& o = v.o;
  const SourceLocation& where = v.where;
  const std::string& out = v.out;
  const std::string& log = v.log;
  const bool real_mode = v.real_mode;
  json& report = v.report;
  if (!o.calibrate || real_mode)
    report["calibration"] = {{"done", false},
                             {"why", real_mode ? "a real run's journals: nothing is measured on this machine"
                                               : "--no-calibration: the LUTs may describe another machine"}};
  if (o.calibrate && !real_mode) {
    const std::string dir = out + "/calibration";
    fs::create_directories(dir);
    json rows = json::array();
    std::vector<std::string> off_entries;
    std::printf("calibration (median of the whole model at batch 1, 10 runs as the testbed runs it, vs the LUT's; tolerance %.0f %%)\n",
                o.calibration_tolerance_pct);
    for (const auto& u : v.uses) {
      const std::string file = dir + "/" + lut_file_name(u.key);
      const LutTable& lut = v.luts.table(u.key);
      const int n = lut.num_stages();
      // Medians: one slow run (a page fault, a timer) moves a mean of ten by percents. A measurement
      // beyond the tolerance is taken a second time before it counts (a transient on a shared
      // machine, or CFS throttling under a cap, moves one process's median by up to kNoisePct); the
      // closer of the two is kept. One further than the tolerance plus that noise counts at once: a
      // second measurement could not bring it within the tolerance.
      constexpr double kNoisePct = 10;
      const double lut_ms = lut.latency(0, n, 1).p50_s * 1e3;
      double now_ms = 0, diff = 0;
      int measurements = 0;
      for (int attempt = 0; attempt < 2; ++attempt) {
        profile_as_testbed(u, true, 1, 10, v.device_cpu, o.threads, file, log);
        ++measurements;
        const double ms = read_lut_file(file).at(0).latency(0, n, 1).p50_s * 1e3;
        const double d = (lut_ms - ms) / ms * 100;
        if (attempt == 0 || std::fabs(d) < std::fabs(diff)) now_ms = ms, diff = d;
        if (std::fabs(diff) <= o.calibration_tolerance_pct || std::fabs(diff) > o.calibration_tolerance_pct + kNoisePct) break;
      }
      const bool ok = std::fabs(diff) <= o.calibration_tolerance_pct;
      const std::string entry = u.key.to_string() + " [0," + std::to_string(n) + ") batch 1";
      std::printf("  %-48s %-6s LUT %9.3f ms  now %9.3f ms  %+6.1f %% %s\n", entry.c_str(), u.device ? "device" : "server", lut_ms, now_ms, diff,
                  ok ? "ok" : "OFF");
      if (!ok)
        off_entries.push_back(entry + " (" + v.luts.origin(u.key) + "): LUT " + fmt(lut_ms, 3) + " ms, measured now " + fmt(now_ms, 3) + " ms (" +
                              (diff > 0 ? "+" : "") + fmt(diff, 1) + " %)");
      rows.push_back({{"lut", u.key.to_string()},
                      {"role", u.device ? "device" : "server"},
                      {"lut_ms", lut_ms},
                      {"measured_ms", now_ms},
                      {"difference_pct", diff},
                      {"within_tolerance", ok},
                      {"measurements", measurements}});
    }
    report["calibration"] = {{"done", true}, {"tolerance_pct", o.calibration_tolerance_pct}, {"entries", rows}};
    if (!off_entries.empty() && !o.reprofile)
      throw InputError(where, "luts",
                       "the LUTs do not describe this machine as the testbed runs it (beyond +-" + fmt(o.calibration_tolerance_pct, 0) +
                           " %): " + join(off_entries, "; ") +
                           ". Pass --reprofile to measure fresh LUTs and validate against them, or --no-calibration to compare anyway");
    if (!off_entries.empty())
      std::printf("  note: freshly profiled LUTs differ from a second measurement beyond the tolerance: this machine's timing is noisy\n");
  }
}

// The testbed run of one scheduler, with the simulation's overrides; false when it failed or cannot be
// reported (the hypervisor took the CPU meanwhile).
bool run_testbed_for(Validation& v, const std::string& name, const std::string& dir, const std::vector<std::string>& sets_args) {
  const ValidateOptions& o = v.o;
  const std::string& log = v.log;
  log::info("validate", name + ": running the testbed (" + format_double(v.s.duration_s) + " s + start-up and drain) ...");
  std::vector<std::string> tb_args = {v.rt, "testbed", o.scenario, "-q", "--out", dir + "/testbed", "--threads", std::to_string(o.threads)};
  if (v.device_cpu > 0) tb_args.insert(tb_args.end(), {"--device-cpu", std::to_string(v.device_cpu)});
  if (o.loopback) tb_args.push_back("--loopback");
  tb_args.insert(tb_args.end(), sets_args.begin(), sets_args.end());
  const CpuTicks before = read_cpu_ticks();
  const int rc = run_logged(tb_args, log);
  const double steal = load_between(before, read_cpu_ticks()).second;
  v.report["machine"]["steal_pct_during"][name] = steal;
  if (rc != 0) {
    log::warn("validate", name + ": the testbed failed (exit " + std::to_string(rc) + "), see " + log);
    return false;
  }
  if (steal > o.max_steal_pct && !o.allow_loaded) {
    log::warn("validate", name + ": NOT REPORTED: the hypervisor took " + fmt(steal, 1) + " % of the CPU during the testbed run (limit " +
                              fmt(o.max_steal_pct, 0) + " %): its timings describe the neighbours, not this testbed (--allow-loaded reports anyway)");
    v.report["not_reported"][name] = "CPU steal " + fmt(steal, 1) + " % during the testbed run";
    return false;
  }
  return true;
}

// Phase 6, per scheduler: the simulation, the testbed run (or the real run given), and their comparison:
// metrics, decision sequences, routes and batch sizes.
void compare_scheduler(Validation& v, const std::string& name) {
  const ValidateOptions& o = v.o;
  const std::string& out = v.out;
  const std::string& log = v.log;
  const bool real_mode = v.real_mode;
  json& report = v.report;
  const std::string dir = out + "/" + name;
  std::vector<std::string> sets_args;
  for (const auto& x : v.sets) sets_args.insert(sets_args.end(), {"--set", x});
  sets_args.insert(sets_args.end(), {"--set", "scheduler.name=" + name});
  log::info("validate", name + ": simulating ...");
  std::vector<std::string> sim_args = {"/proc/self/exe", "run", o.scenario, "-q", "--out", dir + "/sim"};
  sim_args.insert(sim_args.end(), sets_args.begin(), sets_args.end());
  const int rc = run_logged(sim_args, log);
  if (rc != 0) {
    log::warn("validate", name + ": the simulation failed (exit " + std::to_string(rc) + "), see " + log);
    ++v.failures;
    return;
  }
  const std::string real_run = real_mode ? v.real_dir[name] : dir + "/testbed";
  if (real_mode) {
    report["real_runs"][name] = fs::absolute(real_run).string();
  } else if (!run_testbed_for(v, name, dir, sets_args)) {
    ++v.failures;
    return;
  }
  const json sim = read_json(dir + "/sim/summary.json"), real = read_json(real_run + "/summary.json");
  const auto metrics = compare(sim, real);
  json rows = json::array();
  std::printf("\nscheduler %s (sim vs testbed; error = (sim - testbed) / testbed)\n", name.c_str());
  std::printf("  %-8s %-24s %12s %12s %9s\n", "scope", "metric", "sim", "testbed", "error");
  for (const auto& m : metrics) {
    const double e = m.error_pct();
    const bool checked = m.name == "throughput_rps" || m.name == "latency_mean_ms" || m.name == "latency_p95_ms";
    const double tolerance = m.name == "latency_p95_ms" ? o.p95_tolerance_pct : o.tolerance_pct;
    const bool within = !std::isnan(e) && std::fabs(e) <= tolerance;
    if (checked && !within) ++v.off;
    std::printf("  %-8s %-24s %12s %12s %8s%% %s\n", m.scope.c_str(), m.name.c_str(), fmt(m.sim).c_str(), fmt(m.real).c_str(), fmt(e, 1).c_str(),
                checked ? (within ? "ok" : "OFF") : "");
    rows.push_back({{"scope", m.scope},
                    {"metric", m.name},
                    {"sim", std::isnan(m.sim) ? json(nullptr) : json(m.sim)},
                    {"testbed", std::isnan(m.real) ? json(nullptr) : json(m.real)},
                    {"error_pct", std::isnan(e) ? json(nullptr) : json(e)},
                    {"checked", checked},
                    {"within_tolerance", within}});
    v.csv << name << "," << m.scope << "," << m.name << "," << fmt(m.sim, 6) << "," << fmt(m.real, 6) << "," << fmt(e, 3) << ","
          << (checked ? (within ? "yes" : "no") : "") << "\n";
    if (m.scope == "total" && m.name == "throughput_rps") v.throughput.emplace_back(m.sim, m.real);
  }
  report["schedulers"][name] = rows;
  // The decision sequence: the same schemes chosen at the same triggers?
  const auto sim_seq = decision_sequence(dir + "/sim"), real_seq = decision_sequence(real_run);
  json dj{{"sim", sim_seq.size()}, {"testbed", real_seq.size()}, {"identical", sim_seq == real_seq}};
  if (sim_seq != real_seq) {
    size_t k = 0;
    while (k < sim_seq.size() && k < real_seq.size() && sim_seq[k] == real_seq[k]) ++k;
    dj["first_difference"] = {{"index", k},
                              {"sim", k < sim_seq.size() ? json(sim_seq[k]) : json(nullptr)},
                              {"testbed", k < real_seq.size() ? json(real_seq[k]) : json(nullptr)}};
    ++v.off;
  }
  std::printf("  decisions: %zu simulated, %zu on the testbed: %s\n", sim_seq.size(), real_seq.size(),
              sim_seq == real_seq ? "the same sequence of triggers and schemes" : "the sequences DIFFER (validate.json: first_difference)");
  v.csv << name << ",total,decision_sequence," << sim_seq.size() << "," << real_seq.size() << ",," << (sim_seq == real_seq ? "yes" : "no") << "\n";
  report["decisions"][name] = dj;
  // Routes and batch sizes: the same set of routes in both engines; the histograms for the reader.
  const Routes sim_routes = routes_of(dir + "/sim"), real_routes = routes_of(real_run);
  std::set<std::string> sim_keys, real_keys;
  for (const auto& [k, n] : sim_routes.routes) sim_keys.insert(k);
  for (const auto& [k, n] : real_routes.routes) real_keys.insert(k);
  json rj{{"sim", sim_routes.routes}, {"testbed", real_routes.routes}, {"same_set", sim_keys == real_keys}};
  json bj{{"sim", json::object()}, {"testbed", json::object()}};
  for (const auto& [b, n] : sim_routes.batch_sizes) bj["sim"][std::to_string(b)] = n;
  for (const auto& [b, n] : real_routes.batch_sizes) bj["testbed"][std::to_string(b)] = n;
  report["routes"][name] = rj;
  report["batch_sizes"][name] = bj;
  std::printf("  routes: %zu simulated, %zu on the testbed: %s\n", sim_keys.size(), real_keys.size(),
              sim_keys == real_keys ? "the same set" : "the sets DIFFER (validate.json: routes)");
}

// Phase 7: did the simulated ranking of schedulers by total throughput hold?
void rank_schedulers(Validation& v) {
  json& report = v.report;
  if (v.throughput.size() != v.schedulers.size() || v.schedulers.size() < 2) return;
  std::vector<size_t> by_sim(v.schedulers.size()), by_real(v.schedulers.size());
  for (size_t i = 0; i < v.schedulers.size(); ++i) by_sim[i] = by_real[i] = i;
  std::sort(by_sim.begin(), by_sim.end(), [&](size_t a, size_t b) { return v.throughput[a].first > v.throughput[b].first; });
  std::sort(by_real.begin(), by_real.end(), [&](size_t a, size_t b) { return v.throughput[a].second > v.throughput[b].second; });
  std::string sim_rank, real_rank;
  for (size_t i = 0; i < v.schedulers.size(); ++i) {
    sim_rank += (i ? " > " : "") + v.schedulers[by_sim[i]];
    real_rank += (i ? " > " : "") + v.schedulers[by_real[i]];
  }
  const bool held = by_sim == by_real;
  std::printf("\nranking by total throughput: simulated %s; testbed %s: %s\n", sim_rank.c_str(), real_rank.c_str(),
              held ? "the simulated ranking held" : "the simulated ranking did NOT hold");
  report["ranking"] = {{"simulated", sim_rank}, {"testbed", real_rank}, {"held", held}};
}

// The validation's phases, in order.
int validate_command(const ValidateOptions& o) {
  Validation v(o);
  choose_runs(v);
  // A refusal (bad LUTs, a loaded machine, a failed calibration) leaves no output behind: what this
  // command created goes away unless it reaches the runs.
  struct Cleanup {
    std::vector<fs::path> created;
    bool keep = false;
    ~Cleanup() {
      std::error_code ec;
      if (!keep)
        for (auto it = created.rbegin(); it != created.rend(); ++it) fs::remove_all(*it, ec);
    }
  } cleanup;
  const std::string& out = v.out;
  if (!fs::exists(out)) cleanup.created.push_back(out);
  fs::create_directories(out);
  v.log = out + "/validate.log";
  const std::string& log = v.log;
  for (const char* name : {"validate.log", "calibration", "luts"})
    if (!fs::exists(out + "/" + name)) cleanup.created.push_back(out + "/" + name);
  std::ofstream(log, std::ios::trunc) << "";
  v.report =
      json{{"scenario", v.s.name}, {"scenario_file", o.scenario}, {"tolerance_pct", o.tolerance_pct}, {"p95_tolerance_pct", o.p95_tolerance_pct}};

  // The inputs before the machine: a LUT that cannot be compared is the user's to fix, however busy
  // the machine is now.
  choose_luts(v);
  check_machine(v);
  reprofile(v);
  calibrate(v);
  cleanup.keep = true;  // from here on, runs and their logs are results
  v.csv << "scheduler,scope,metric,sim,testbed,error_pct,within_tolerance\n";
  for (const auto& name : v.schedulers) compare_scheduler(v, name);
  rank_schedulers(v);
  json& report = v.report;
  report["metrics_outside_tolerance"] = v.off;  // kept for old readers: the same count as checks_missed
  report["checks_missed"] = v.off;
  report["failed_runs"] = v.failures;
  write_text_atomic(out + "/validate.json", report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write_text_atomic(out + "/validate.csv", v.csv.str());
  std::printf(
      "\n%d checks missed (mean latency and throughput within +-%.0f %%, p95 within +-%.0f %%, decision sequences identical); wrote "
      "%s/validate.json and validate.csv\n",
      v.off, o.tolerance_pct, o.p95_tolerance_pct, out.c_str());
  if (v.failures) return 1;
  return (o.strict && v.off) ? 1 : 0;
}

}  // namespace

void register_validate(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "run a scenario in the simulator and on the emulated testbed and compare them");
  add_scenario_args(*cmd, o->scenario, o->sets, "scenario YAML file (its LUTs must be measured on this machine)");
  cmd->add_option("--out", o->out, "output folder (default: results/<scenario name>-validate)");
  cmd->add_option("--schedulers", o->schedulers, "comma-separated schedulers to compare (default: the scenario's)");
  cmd->add_option("--tolerance", o->tolerance_pct, "target error in percent for mean latency and throughput (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--p95-tolerance", o->p95_tolerance_pct, "target error in percent for p95 latency (default 10)")->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--calibration-tolerance", o->calibration_tolerance_pct,
                  "refuse when a LUT's whole-model time differs from a fresh measurement by more than this, percent (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_flag("--reprofile", o->reprofile, "profile every LUT the scenario uses now, as the testbed runs it, and validate against those");
  cmd->add_option("--reprofile-repeats", o->reprofile_repeats, "timed runs per range with --reprofile (default 5)")->check(CLI::Range(1, 1000));
  cmd->add_flag(
      "--no-calibration", [o](std::int64_t) { o->calibrate = false; }, "skip the calibration (compare with LUTs that may describe another machine)");
  cmd->add_flag("--allow-loaded", o->allow_loaded, "report even when other programs load the machine or the hypervisor steals CPU");
  cmd->add_option("--device-cpu", o->device_cpu,
                  "cap each device process at this many cores; 'auto' (default) takes the cap the device LUT was measured with");
  cmd->add_option("--threads", o->threads, "LibTorch threads per device and server worker on the testbed (default 1)");
  cmd->add_flag("--loopback", o->loopback, "run the testbed on loopback (no network namespaces)");
  cmd->add_flag("--strict", o->strict, "exit 1 when a checked metric is outside the tolerance");
  cmd->add_option("--real", o->real,
                  "compare with this real run's results folder instead of running a testbed (coinfer testbed --inventory, coinfer collect; "
                  "repeatable, one per scheduler)");
  cmd->callback([o, &exit_code] { exit_code = guarded([&] { return validate_command(*o); }); });
}

}  // namespace coinfer::cli
