// coinfer validate SCENARIO: runs the scenario in the simulator (with LUTs measured on this machine)
// and on the emulated testbed (coinfer-rt testbed), once per scheduler, and reports per metric how far
// the simulation was from the testbed and whether the simulated ranking of schedulers held.
// Writes DIR/validate.json and DIR/validate.csv beside each run's own results (DIR/<scheduler>/sim,
// DIR/<scheduler>/testbed). Metric definitions: hw/README.md, "Validation".
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "io/atomic_dir.hpp"
#include "io/lut_repository.hpp"
#include "io/scenario_loader.hpp"
#include "sched/scheduler_factory.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace coinfer::cli {

namespace {

struct ValidateOptions {
  std::string scenario, out;
  std::vector<std::string> sets;
  std::string schedulers;  // comma-separated; empty = the scenario's
  double tolerance_pct = 10;
  std::string device_cpu = "auto";
  int threads = 1;
  bool strict = false;
  bool loopback = false;
};

// Runs a program with its output appended to `log`; returns its exit status.
int run_logged(const std::vector<std::string>& args, const std::string& log) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* f = std::fopen(log.c_str(), "a");
    if (f) {
      ::dup2(fileno(f), 1);
      ::dup2(fileno(f), 2);
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
    m.push_back({scope, "latency_p95_ms", number(s["latency_ms"]["p95"]), number(r["latency_ms"]["p95"])});
    m.push_back({scope, "energy_j_per_inference", number(s["energy_j_per_inference"]), number(r["energy_j_per_inference"])});
    m.push_back({scope, "failed", number(s["failed"]), number(r["failed"])});
  };
  add("total", sim["total"], real["total"]);
  for (auto it = sim["devices"].begin(); it != sim["devices"].end(); ++it)
    if (real["devices"].contains(it.key())) add(it.key(), it.value(), real["devices"][it.key()]);
  m.push_back({"total", "decisions", number(sim["decisions"]["count"]), number(real["decisions"]["count"])});
  return m;
}

std::string fmt(double v, int prec = 2) {
  if (std::isnan(v)) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

int validate_command(const ValidateOptions& o) {
  Scenario s = load_scenario(o.scenario, o.sets);
  const SourceLocation where{o.scenario, 0, 0};
  const std::string out = o.out.empty() ? "results/" + s.name + "-validate" : o.out;
  check_output_folder(out, "--out");
  const std::string rt = companion_path("coinfer-rt");
  if (!fs::exists(rt)) throw InputError(where, "validate", "this coinfer was built without LibTorch (" + rt + " is missing)");
  std::vector<std::string> schedulers = o.schedulers.empty() ? std::vector<std::string>{s.scheduler.name} : split(o.schedulers, ',');
  const auto known = scheduler_names();
  for (const auto& name : schedulers)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError(SourceLocation{"--schedulers", 0, 0}, "--schedulers", "unknown scheduler '" + name + "' (known: " + join(known, ", ") + ")");
  // The simulator must use LUTs measured on this machine: refuse synthesised ones.
  LutSet luts = load_scenario_luts(s);
  std::vector<double> caps;
  auto check_lut = [&](const std::string& type, const std::string& model, const std::string& dataset, bool device) {
    const LutTable& t = luts.table({type, model, dataset});
    if (t.provenance().kind != "measured")
      throw InputError(where, "luts", "the LUT for " + type + "/" + model + "/" + dataset + " (" + luts.origin({type, model, dataset}) +
                                          ") is " + t.provenance().kind + ", not measured on this machine; make one with coinfer profile --model " +
                                          model + " --dataset " + dataset + " --device-type " + type + " --out FILE");
    if (device) {
      auto it = t.provenance().attributes.find("cpu_cap_cores");
      caps.push_back(it == t.provenance().attributes.end() ? 0 : std::atof(it->second.c_str()));
    }
  };
  for (const auto& d : s.devices) {
    check_lut(d.type, d.model, d.dataset, true);
    check_lut(s.servers[s.server_index(d.server)].type, d.model, d.dataset, false);
  }
  double device_cpu = 0;
  if (o.device_cpu == "auto") {
    device_cpu = caps.empty() ? 0 : caps[0];
    for (double c : caps)
      if (c != device_cpu)
        throw InputError(where, "devices", "device LUTs were measured with different CPU caps; the testbed caps every device alike: pass --device-cpu");
  } else {
    try {
      device_cpu = std::stod(o.device_cpu);
    } catch (const std::exception&) {
      throw InputError(SourceLocation{"--device-cpu", 0, 0}, "--device-cpu", "expected 'auto' or a number of cores, got '" + o.device_cpu + "'");
    }
  }
  fs::create_directories(out);
  const std::string log = out + "/validate.log";
  std::ofstream(log, std::ios::trunc) << "";
  json report{{"scenario", s.name}, {"scenario_file", o.scenario}, {"tolerance_pct", o.tolerance_pct}, {"device_cpu_cores", device_cpu}};
  std::ostringstream csv;
  csv << "scheduler,scope,metric,sim,testbed,error_pct,within_tolerance\n";
  std::vector<std::pair<double, double>> throughput;  // per scheduler: (sim, testbed)
  int failures = 0, off = 0;
  for (const auto& name : schedulers) {
    const std::string dir = out + "/" + name;
    std::vector<std::string> sets_args;
    for (const auto& x : o.sets) sets_args.insert(sets_args.end(), {"--set", x});
    sets_args.insert(sets_args.end(), {"--set", "scheduler.name=" + name});
    std::cerr << "[validate] " << name << ": simulating ..." << std::endl;
    std::vector<std::string> sim_args = {"/proc/self/exe", "run", o.scenario, "-q", "--out", dir + "/sim"};
    sim_args.insert(sim_args.end(), sets_args.begin(), sets_args.end());
    int rc = run_logged(sim_args, log);
    if (rc != 0) {
      std::cerr << "[validate] " << name << ": the simulation failed (exit " << rc << "), see " << log << std::endl;
      ++failures;
      continue;
    }
    std::cerr << "[validate] " << name << ": running the testbed (" << s.duration_s << " s + start-up and drain) ..." << std::endl;
    std::vector<std::string> tb_args = {rt, "testbed", o.scenario, "-q", "--out", dir + "/testbed", "--threads", std::to_string(o.threads)};
    if (device_cpu > 0) tb_args.insert(tb_args.end(), {"--device-cpu", std::to_string(device_cpu)});
    if (o.loopback) tb_args.push_back("--loopback");
    tb_args.insert(tb_args.end(), sets_args.begin(), sets_args.end());
    rc = run_logged(tb_args, log);
    if (rc != 0) {
      std::cerr << "[validate] " << name << ": the testbed failed (exit " << rc << "), see " << log << std::endl;
      ++failures;
      continue;
    }
    const json sim = read_json(dir + "/sim/summary.json"), real = read_json(dir + "/testbed/summary.json");
    const auto metrics = compare(sim, real);
    json rows = json::array();
    std::printf("\nscheduler %s (sim vs testbed; error = (sim - testbed) / testbed)\n", name.c_str());
    std::printf("  %-8s %-24s %12s %12s %9s\n", "scope", "metric", "sim", "testbed", "error");
    for (const auto& m : metrics) {
      const double e = m.error_pct();
      const bool checked = m.name == "throughput_rps" || m.name == "latency_mean_ms";
      const bool within = !std::isnan(e) && std::fabs(e) <= o.tolerance_pct;
      if (checked && !within) ++off;
      std::printf("  %-8s %-24s %12s %12s %8s%% %s\n", m.scope.c_str(), m.name.c_str(), fmt(m.sim).c_str(), fmt(m.real).c_str(),
                  fmt(e, 1).c_str(), checked ? (within ? "ok" : "OFF") : "");
      rows.push_back({{"scope", m.scope}, {"metric", m.name}, {"sim", std::isnan(m.sim) ? json(nullptr) : json(m.sim)},
                      {"testbed", std::isnan(m.real) ? json(nullptr) : json(m.real)},
                      {"error_pct", std::isnan(e) ? json(nullptr) : json(e)}, {"checked", checked}, {"within_tolerance", within}});
      csv << name << "," << m.scope << "," << m.name << "," << fmt(m.sim, 6) << "," << fmt(m.real, 6) << "," << fmt(e, 3) << ","
          << (checked ? (within ? "yes" : "no") : "") << "\n";
      if (m.scope == "total" && m.name == "throughput_rps") throughput.emplace_back(m.sim, m.real);
    }
    report["schedulers"][name] = rows;
  }
  if (throughput.size() == schedulers.size() && schedulers.size() > 1) {
    std::vector<size_t> by_sim(schedulers.size()), by_real(schedulers.size());
    for (size_t i = 0; i < schedulers.size(); ++i) by_sim[i] = by_real[i] = i;
    std::sort(by_sim.begin(), by_sim.end(), [&](size_t a, size_t b) { return throughput[a].first > throughput[b].first; });
    std::sort(by_real.begin(), by_real.end(), [&](size_t a, size_t b) { return throughput[a].second > throughput[b].second; });
    std::string sim_rank, real_rank;
    for (size_t i = 0; i < schedulers.size(); ++i) {
      sim_rank += (i ? " > " : "") + schedulers[by_sim[i]];
      real_rank += (i ? " > " : "") + schedulers[by_real[i]];
    }
    const bool held = by_sim == by_real;
    std::printf("\nranking by total throughput: simulated %s; testbed %s: %s\n", sim_rank.c_str(), real_rank.c_str(),
                held ? "the simulated ranking held" : "the simulated ranking did NOT hold");
    report["ranking"] = {{"simulated", sim_rank}, {"testbed", real_rank}, {"held", held}};
  }
  report["metrics_outside_tolerance"] = off;
  report["failed_runs"] = failures;
  write_text_atomic(out + "/validate.json", report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write_text_atomic(out + "/validate.csv", csv.str());
  std::printf("\n%d checked metrics outside +-%.0f %%; wrote %s/validate.json and validate.csv\n", off, o.tolerance_pct, out.c_str());
  if (failures) return 1;
  return (o.strict && off) ? 1 : 0;
}

}  // namespace

void register_validate(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "run a scenario in the simulator and on the emulated testbed and compare them");
  cmd->add_option("scenario", o->scenario, "scenario YAML file (its LUTs must be measured on this machine)")->required();
  cmd->add_option("--out", o->out, "output folder (default: results/<scenario name>-validate)");
  cmd->add_option("--set", o->sets, "override a scenario key (repeatable)");
  cmd->add_option("--schedulers", o->schedulers, "comma-separated schedulers to compare (default: the scenario's)");
  cmd->add_option("--tolerance", o->tolerance_pct, "target error in percent for mean latency and throughput (default 10)");
  cmd->add_option("--device-cpu", o->device_cpu,
                  "cap each device process at this many cores; 'auto' (default) takes the cap the device LUT was measured with");
  cmd->add_option("--threads", o->threads, "LibTorch threads per device and server worker on the testbed (default 1)");
  cmd->add_flag("--loopback", o->loopback, "run the testbed on loopback (no network namespaces)");
  cmd->add_flag("--strict", o->strict, "exit 1 when a checked metric is outside the tolerance");
  cmd->callback([o, &exit_code] { exit_code = guarded([&] { return validate_command(*o); }); });
}

}  // namespace coinfer::cli
