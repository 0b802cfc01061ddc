// coinfer predictor samples: random systems x random schemes, each simulated (one `coinfer run` per
// sample, locally or on Slurm, resumable), turned into ACE-GNN system graphs with their throughput and
// latencies, and written as an HDF5 sample set (io/predictor_samples.hpp). coinfer predictor add: a
// testbed-measured run as a sample. coinfer predictor train|eval: the LibTorch GIN predictors, carried
// out by the companion program coinfer-predictor (sched/gin_predictor.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "cli/point_runner.hpp"
#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "core/system_state.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/predictor_samples.hpp"
#include "io/scenario_loader.hpp"
#include "io/sweep_table.hpp"
#include "sched/scheduler_factory.hpp"
#include "sched/scheme_search.hpp"
#include "sched/system_graph.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace coinfer::cli {

namespace {

struct SamplesOptions {
  std::string out = "results/predictor-samples", devices = "1..9";
  RunnerOptions runner;
  std::vector<std::string> device_types = {"rpi4b", "rpi3b", "jetson-tx2", "jetson-nano"};
  std::vector<std::string> server_types = {"gtx1060", "i7-7700"};
  std::vector<std::string> models;  // "model/dataset"; default: every pair the LUTs hold for all types
  std::vector<std::string> luts = {"traces/lut"};
  int systems = 100, schemes = 20;
  std::uint64_t seed = 1;
  double duration_s = 10, min_mbps = 1, max_mbps = 100;
  bool quiet = false;
};

// One drawn device of a system.
struct DrawnDevice {
  std::string type, model, dataset;
  double mbps = 10, latency_ms = 2;
  int stages = 1;
};
struct DrawnSystem {
  std::string server;
  int workers = 1, batch_max = 1;
  double window_ms = 0;
  std::vector<DrawnDevice> devices;
};

template <class T>
const T& pick(RandomStream& r, const std::vector<T>& v) {
  return v[std::min(v.size() - 1, static_cast<size_t>(r.next_unit() * static_cast<double>(v.size())))];
}
int uniform_int(RandomStream& r, int lo, int hi) {  // [lo, hi]
  return lo + std::min(hi - lo, static_cast<int>(r.next_unit() * (hi - lo + 1)));
}

// A random system: documented in `coinfer predictor samples --help` and sched/README.md.
DrawnSystem draw_system(const SamplesOptions& o, int lo, int hi, const std::vector<std::pair<std::string, std::string>>& pairs,
                        const ModelCatalog& catalog, std::uint64_t index) {
  RandomStream r(o.seed, StreamPurpose::predictor_systems, index);
  DrawnSystem s;
  s.server = pick(r, o.server_types);
  s.workers = uniform_int(r, 1, 3);
  s.batch_max = pick(r, std::vector<int>{1, 1, 4, 8});
  s.window_ms = s.batch_max == 1 ? 0 : pick(r, std::vector<double>{2, 5, 10});
  const int n = uniform_int(r, lo, hi);
  for (int i = 0; i < n; ++i) {
    DrawnDevice d;
    d.type = pick(r, o.device_types);
    const auto& [m, ds] = pick(r, pairs);
    d.model = m, d.dataset = ds;
    d.mbps = std::exp(std::log(o.min_mbps) + r.next_unit() * (std::log(o.max_mbps) - std::log(o.min_mbps)));
    d.mbps = std::round(d.mbps * 100) / 100;
    d.latency_ms = pick(r, std::vector<double>{1, 2, 5});
    d.stages = catalog.instantiate(m, ds).num_stages();
    s.devices.push_back(d);
  }
  return s;
}

// Up to `count` distinct random schemes (every one when there are fewer).
std::vector<std::vector<std::string>> draw_schemes(const SamplesOptions& o, const DrawnSystem& s, std::uint64_t index) {
  RandomStream r(o.seed, StreamPurpose::predictor_schemes, index);
  std::vector<std::vector<std::string>> options;
  long double total = 1;
  for (const auto& d : s.devices) {
    std::vector<std::string> v = {"local", "offload", "data_parallel"};
    for (int k = 1; k < d.stages; ++k) v.push_back("pp(" + std::to_string(k) + ")");
    total *= v.size();
    options.push_back(v);
  }
  std::vector<std::vector<std::string>> out;
  std::set<std::vector<std::string>> seen;
  const long long want = static_cast<long long>(std::min<long double>(total, o.schemes));
  while (static_cast<long long>(out.size()) < want) {
    std::vector<std::string> c;
    for (const auto& v : options) c.push_back(pick(r, v));
    if (seen.insert(c).second) out.push_back(c);
  }
  return out;
}

std::string scenario_yaml(const SamplesOptions& o, const DrawnSystem& s, const std::vector<std::string>& scheme, const std::string& name,
                          const std::vector<std::string>& luts) {
  std::ostringstream y;
  y << "# Drawn by coinfer predictor samples (seed " << o.seed << "): one system and one static scheme.\n"
    << "name: " << name << "\nseed: 1\nduration_s: " << format_double(o.duration_s) << "\nwarmup_s: " << format_double(o.duration_s / 5)
    << "\ndrain_s: 10\nservice_time: mean\nluts: [";
  for (size_t i = 0; i < luts.size(); ++i) y << (i ? ", " : "") << "\"" << luts[i] << "\"";
  y << "]\nservers:\n  - {id: edge, type: " << s.server << ", workers: " << s.workers << ", batch: {window_ms: " << format_double(s.window_ms)
    << ", max_size: " << s.batch_max << "}}\ndevices:\n";
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const auto& d = s.devices[i];
    y << "  - {id: d" << i << ", type: " << d.type << ", model: " << d.model << ", dataset: " << d.dataset
      << ", link: {bandwidth_mbps: " << format_double(d.mbps) << ", latency_ms: " << format_double(d.latency_ms)
      << "}, workload: {arrival: closed_loop}, strategy: " << scheme[i] << "}\n";
  }
  y << "scheduler: {name: static}\n";
  return y.str();
}

std::string sorted_join(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return join(v, ",");
}

// The sample of one scenario: its graph (with the analytic hint) and the labels of its summary.json.
PredictorSample sample_of(const std::string& scenario_path, const std::string& summary_path, const ModelCatalog& catalog,
                          std::map<std::string, std::unique_ptr<LutSet>>& lut_cache, std::int64_t system, bool measured, const std::string& source) {
  const Scenario sc = load_scenario(scenario_path);
  const std::string key = scenario_luts_identity(sc);
  if (!lut_cache.count(key)) lut_cache[key] = std::make_unique<LutSet>(load_scenario_luts(sc));
  const LutSet& luts = *lut_cache[key];
  check_scenario_against(sc, catalog, luts, scheduler_traits(sc.scheduler.name));
  ModelSpecs specs = scenario_model_specs(sc, catalog);
  const auto est = make_estimator(sc, luts, specs);
  const SystemState state = scenario_state(sc, 0);
  const Scheme scheme = current_scheme(state);
  const SystemGraph g = SystemGraph::build(state, scheme, *est);
  const Prediction p = est->predict(state, scheme);
  SweepRow row;
  read_point_summary(summary_path, row);
  if (!row.ok) throw InputError(SourceLocation{summary_path, 0, 0}, "", "not a readable run summary");
  PredictorSample s;
  s.system = system;
  std::vector<std::string> types, models;
  std::ostringstream k;
  for (const auto& sv : sc.servers)
    k << sv.type << " x" << sv.workers << " batch " << sv.batch.max_size << "/" << format_double(sv.batch.window_ms) << "ms; ";
  for (const auto& d : sc.devices) {
    types.push_back(d.type), models.push_back(d.model + "/" + d.dataset);
    k << d.type << ":" << d.model << "/" << d.dataset << "@" << format_double(d.link.bandwidth_mbps) << "Mbps ";
  }
  s.system_key = k.str();
  s.device_types = sorted_join(types), s.models = sorted_join(models);
  s.scheme = scheme.to_string();
  s.throughput_rps = row.throughput_rps, s.mean_latency_ms = row.latency_mean_ms, s.p95_latency_ms = row.latency_p95_ms;
  s.analytic_throughput_rps = p.throughput_rps, s.analytic_mean_latency_ms = p.mean_latency_s * 1e3;
  s.measured = measured;
  s.source = source;
  GraphInput in = GraphInput::of(g);
  s.node_type = std::move(in.types);
  s.node_latency_ms = std::move(in.latency_ms);
  s.node_settings = std::move(in.settings);
  s.edges = std::move(in.edges);
  return s;
}

std::pair<int, int> parse_range(const std::string& text, const std::string& option) {
  int lo = 0, hi = 0;
  char dots[3] = {0};
  if (std::sscanf(text.c_str(), "%d%2[.]%d", &lo, dots, &hi) == 3 && std::string(dots) == "..") {
  } else if (std::sscanf(text.c_str(), "%d", &lo) == 1 && std::to_string(lo) == text) {
    hi = lo;
  } else {
    throw InputError(SourceLocation{option, 0, 0}, option, "'" + text + "' must be N or A..B");
  }
  if (lo < 1 || hi < lo || hi > 64) throw InputError(SourceLocation{option, 0, 0}, option, "'" + text + "' must lie in 1..64 with A <= B");
  return {lo, hi};
}

int collect_samples(const std::string& dir, const json& m, bool quiet) {
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  std::map<std::string, std::unique_ptr<LutSet>> lut_cache;
  PredictorSampleSet set;
  int missing = 0;
  for (size_t i = 0; i < m["points"].size(); ++i) {
    const json& p = m["points"][i];
    const fs::path summary = point_dir(dir, static_cast<int>(i)) / "summary.json";
    if (!fs::exists(summary)) {
      ++missing;
      continue;
    }
    const std::string scen = p["scenario"].get<std::string>();
    set.samples.push_back(
        sample_of(scen, summary.string(), catalog, lut_cache, p["system"].get<std::int64_t>(), false, fs::relative(scen, dir).string()));
  }
  if (set.samples.empty()) throw std::runtime_error("no sample finished; see the logs under " + dir + "/points");
  const json& o = m["options"];
  set.provenance = "simulated by coinfer " + std::string(m.value("coinfer_version", "")) + ": " + o.dump() +
                   "; each sample one `coinfer run` of DIR/" + "scenarios/<sample>.yaml (closed loop, static scheme, service_time mean)";
  const std::string out = (fs::path(dir) / "samples.h5").string();
  write_predictor_samples(out, set);
  if (!quiet)
    std::printf("wrote %zu samples of %d systems to %s%s\n", set.samples.size(), m["systems"].get<int>(), out.c_str(),
                missing ? (" (" + std::to_string(missing) + " samples did not finish; rerun to retry them)").c_str() : "");
  return missing == 0 ? 0 : 1;
}

int samples(const SamplesOptions& o) {
  o.runner.check();
  if (o.systems < 1 || o.systems > 100000) throw InputError(SourceLocation{"--systems", 0, 0}, "--systems", "must be 1 .. 100000");
  if (o.schemes < 1 || o.schemes > 10000) throw InputError(SourceLocation{"--schemes", 0, 0}, "--schemes", "must be 1 .. 10000");
  if (!(o.duration_s >= 1 && o.duration_s <= 3600)) throw InputError(SourceLocation{"--duration", 0, 0}, "--duration", "must be 1 .. 3600 s");
  // Each bound blamed on the option the user typed (both were blamed on "--mbps").
  if (!(o.min_mbps > 0 && o.min_mbps <= 1e5))
    throw InputError(SourceLocation{"--min-mbps", 0, 0}, "--min-mbps", format_double(o.min_mbps) + " must be in (0, 100000]");
  if (!(o.max_mbps > 0 && o.max_mbps <= 1e5))
    throw InputError(SourceLocation{"--max-mbps", 0, 0}, "--max-mbps", format_double(o.max_mbps) + " must be in (0, 100000]");
  if (o.max_mbps < o.min_mbps)
    throw InputError(SourceLocation{"--max-mbps", 0, 0}, "--max-mbps",
                     format_double(o.max_mbps) + " is below --min-mbps " + format_double(o.min_mbps));
  const auto [lo, hi] = parse_range(o.devices, "--devices");
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  std::vector<std::string> luts;
  for (const auto& l : o.luts) luts.push_back(fs::absolute(fs::exists(l) ? l : data_path(l)).string());
  const LutSet set = load_luts(luts);
  std::vector<std::string> types = o.device_types;
  types.insert(types.end(), o.server_types.begin(), o.server_types.end());
  // Model/dataset pairs: the ones asked for, or every pair the LUTs hold for every type.
  std::vector<std::pair<std::string, std::string>> pairs;
  std::set<std::pair<std::string, std::string>> all;
  for (const auto& k : set.keys()) all.insert({k.model, k.dataset});
  auto covered = [&](const std::string& m, const std::string& ds) {
    for (const auto& t : types)
      if (!set.contains({t, m, ds})) return t;
    return std::string();
  };
  if (o.models.empty()) {
    for (const auto& [m, ds] : all)
      if (covered(m, ds).empty() && catalog.has_model(m)) pairs.push_back({m, ds});
  } else {
    for (const auto& md : o.models) {
      const auto slash = md.find('/');
      if (slash == std::string::npos) throw InputError(SourceLocation{"--models", 0, 0}, "--models", "'" + md + "' must be MODEL/DATASET");
      const std::string m = md.substr(0, slash), ds = md.substr(slash + 1);
      if (const std::string t = covered(m, ds); !t.empty())
        throw InputError(SourceLocation{"--models", 0, 0}, "--models", "the LUTs hold no table " + t + "/" + md);
      pairs.push_back({m, ds});
    }
  }
  if (pairs.empty()) throw InputError(SourceLocation{"--luts", 0, 0}, "--luts", "no model/dataset has a LUT for every device and server type");
  // The manifest: one point per (system, scheme).
  json options = {{"seed", o.seed},
                  {"systems", o.systems},
                  {"schemes", o.schemes},
                  {"devices", o.devices},
                  {"device_types", o.device_types},
                  {"server_types", o.server_types},
                  {"duration_s", o.duration_s},
                  {"mbps", {o.min_mbps, o.max_mbps}},
                  {"luts", luts}};
  json mp = json::array();
  for (const auto& [m, ds] : pairs) mp.push_back(m + "/" + ds);
  options["models"] = mp;
  json manifest = {
      {"kind", "predictor-samples"}, {"coinfer_version", COINFER_VERSION_STRING}, {"options", options}, {"systems", o.systems}, {"scenario", ""},
      {"points", json::array()}};
  std::vector<std::pair<std::string, std::string>> files;  // path, text
  const fs::path dir = o.out;
  for (int i = 0; i < o.systems; ++i) {
    const DrawnSystem s = draw_system(o, lo, hi, pairs, catalog, static_cast<std::uint64_t>(i));
    const auto schemes = draw_schemes(o, s, static_cast<std::uint64_t>(i));
    for (size_t j = 0; j < schemes.size(); ++j) {
      char name[48];
      std::snprintf(name, sizeof name, "s%05d_%04zu", i, j);
      const fs::path path = fs::absolute(dir / "scenarios" / (std::string(name) + ".yaml"));
      files.emplace_back(path.string(), scenario_yaml(o, s, schemes[j], name, luts));
      manifest["points"].push_back({{"scenario", path.string()}, {"sets", json::array()}, {"system", i}});
    }
  }
  check_output_folder(dir.string(), "--out");
  fs::create_directories(dir / "scenarios");
  const fs::path mpath = dir / "sweep.json";
  if (fs::exists(mpath)) {
    const json old = read_manifest(dir.string());
    if (old.value("kind", "") != "predictor-samples" || old["options"] != manifest["options"])
      throw InputError(SourceLocation{dir.string(), 0, 0}, "--out", "this folder holds other samples (different options); choose another --out");
  } else {
    for (const auto& [path, text] : files) write_text_atomic(path, text);
    write_text_atomic(mpath.string(), manifest.dump(1) + "\n");
  }
  const int total = static_cast<int>(manifest["points"].size());
  std::vector<int> todo;
  for (int i = 0; i < total; ++i)
    if (!point_done(dir.string(), i)) todo.push_back(i);
  if (!o.quiet)
    log::info("predictor", strprintf("%d systems, %d samples (%zu model/dataset pairs), %d already simulated, %zu to run", o.systems, total,
                                     pairs.size(), total - static_cast<int>(todo.size()), todo.size()));
  if (o.runner.backend == "slurm" && !todo.empty()) {
    SlurmOptions so = o.runner.slurm;
    so.job_name = "coinfer-samples";
    const std::string job = submit_slurm(dir.string(), total, so);
    std::printf("submitted Slurm job %s; when it is done, run this command again to write %s/samples.h5\n", job.c_str(), dir.c_str());
    if (!so.wait) return 0;
  } else {
    const int failed = run_points(manifest, dir.string(), todo, o.runner.local_jobs(), o.quiet, "samples");
    if (failed > 0) log::warn("predictor", strprintf("%d samples failed (their logs are named above); rerun to retry them", failed));
  }
  return collect_samples(dir.string(), manifest, o.quiet);
}

struct AddOptions {
  std::string samples, run, scenario;
  std::int64_t system = -1;
};

// Appends a run measured on a testbed (its summary.json) as a sample marked measured.
int add_measured(const AddOptions& o) {
  PredictorSampleSet set = read_predictor_samples(o.samples);
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  std::map<std::string, std::unique_ptr<LutSet>> lut_cache;
  const fs::path summary = fs::path(o.run) / "summary.json";
  if (!fs::exists(summary)) throw InputError(SourceLocation{o.run, 0, 0}, "", "not a run folder (no summary.json)");
  std::int64_t system = o.system;
  if (system < 0) {
    system = 0;
    for (const auto& s : set.samples) system = std::max(system, s.system + 1);
  }
  set.samples.push_back(sample_of(o.scenario, summary.string(), catalog, lut_cache, system, true, fs::absolute(o.run).string()));
  const auto& s = set.samples.back();
  if (set.provenance.find("measured samples added") == std::string::npos) set.provenance += "; measured samples added by coinfer predictor add";
  write_predictor_samples(o.samples, set);
  std::printf("added a measured sample (system %lld, %s: %.2f req/s measured, %.2f predicted by the analytic estimator) to %s\n",
              static_cast<long long>(s.system), s.scheme.c_str(), s.throughput_rps, s.analytic_throughput_rps, o.samples.c_str());
  return 0;
}

}  // namespace

void register_predictor(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("predictor", "ACE-GNN's learned system predictors: samples, training, evaluation (sched/README.md)");
  cmd->require_subcommand(1);
  auto o = std::make_shared<SamplesOptions>();
  CLI::App* s = cmd->add_subcommand(
      "samples",
      "draw random systems and schemes, simulate each, write DIR/samples.h5 (system graphs + throughput and latency labels). "
      "A system: one server (--server-types, 1-3 workers, batching off or max 4/8 with a 2/5/10 ms window) and --devices "
      "devices, each of a random type, model/dataset, link (log-uniform in --min-mbps..--max-mbps, 1/2/5 ms) and closed-loop arrivals");
  s->add_option("--out", o->out, "sample folder (default results/predictor-samples); rerunning resumes");
  s->add_option("--systems", o->systems, "random systems (default 100)");
  s->add_option("--schemes", o->schemes, "distinct random schemes per system (default 20; fewer when a system has fewer)");
  s->add_option("--devices", o->devices, "devices per system, N or A..B (default 1..9)");
  s->add_option("--device-types", o->device_types, "device types to draw from (default rpi4b rpi3b jetson-tx2 jetson-nano)");
  s->add_option("--server-types", o->server_types, "server types to draw from (default gtx1060 i7-7700)");
  s->add_option("--models", o->models, "MODEL/DATASET pairs to draw from (default: every pair the LUTs hold for all types)");
  s->add_option("--luts", o->luts, "LUT files or folders (default traces/lut)");
  s->add_option("--seed", o->seed, "seed of the systems and schemes (default 1)");
  s->add_option("--duration", o->duration_s, "simulated seconds per sample (default 10; a fifth is warm-up)");
  s->add_option("--min-mbps", o->min_mbps, "lowest link bandwidth (default 1)");
  s->add_option("--max-mbps", o->max_mbps, "highest link bandwidth (default 100)");
  o->runner.add_to(*s, "samples", 20, "wait for the job, then write samples.h5");
  s->callback([o, &exit_code] {
    o->quiet = quiet("predictor");
    exit_code = guarded([&] { return samples(*o); });
  });

  auto a = std::make_shared<AddOptions>();
  CLI::App* add = cmd->add_subcommand("add", "append a testbed-measured run (coinfer testbed --out RUN) to a sample set, marked measured");
  add->add_option("samples", a->samples, "sample set (samples.h5), rewritten in place")->required();
  add->add_option("--run", a->run, "the run folder (its summary.json)")->required();
  add->add_option("--scenario", a->scenario, "the scenario the run played (static strategies)")->required();
  add->add_option("--system", a->system, "system index (default: a new one)");
  add->callback([a, &exit_code] { exit_code = guarded([&] { return add_measured(*a); }); });

  register_predictor_companion(*cmd, exit_code);
}

}  // namespace coinfer::cli
