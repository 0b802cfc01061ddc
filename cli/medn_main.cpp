// coinfer-medn (`coinfer medn`): the MEDN paper's study (docs/PAPERS.md)
// measured on this machine.
//
//   coinfer medn modules                 the nine modules, their features and Table 4's MEDN configuration
//   coinfer medn sample --out DIR        times the nine modules with LibTorch on this CPU: configurations
//                                        drawn from the paper's ranges (models/paper_modules.hpp), under a
//                                        real background load that changes every --load-every samples
//                                        (hw/load_generator.hpp), with the memory available and the CPU
//                                        utilisation by other work read before each (hw/system_meter.hpp);
//                                        one sample set per module, DIR/<module>.csv (io/module_samples.hpp).
//                                        A module whose file exists with the same settings is kept (resume).
//   coinfer medn evaluate DIR [--out F]  fits LR, RF, MLP, MEDN and MEDN's ablations per module
//                                        (models/latency_regressor.hpp), scores them on the held-out test
//                                        split and runs both auto-selections; one JSON document (Table 5,
//                                        Table 6 and Fig. 4's numbers) on stdout or in F.
//
// `coinfer reproduce medn` drives both (reproduce/README.md). Bad options exit 2 naming the option.
#include <CLI/CLI.hpp>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "core/text_util.hpp"
#include "hw/compute_threads.hpp"
#include "hw/load_generator.hpp"
#include "hw/system_meter.hpp"
#include "io/module_samples.hpp"
#include "models/latency_regressor.hpp"
#include "models/paper_modules.hpp"
#include "plumbing/atomic_dir.hpp"

namespace {

using namespace coinfer;
using models::PaperModule;
using models::RegressorKind;

[[noreturn]] void bad(const std::string& option, const std::string& why) { throw InputError(SourceLocation{option, 0, 0}, option, why); }

// Table 4: MEDN's encoder widths and reconstruction : prediction loss weight. The composites take their
// first operator's row (conv* the convolution's, bn+relu batch normalisation's): Table 4 lists five.
struct MednConfig {
  std::vector<std::int64_t> encoder;
  double weight_ratio;
};
MednConfig table4(PaperModule m) {
  if (models::has_convolution(m)) return {{128, 64, 32}, 100.0};
  if (m == PaperModule::bn || m == PaperModule::bn_relu) return {{32, 16, 8}, 1.0};
  if (m == PaperModule::linear) return {{64, 32, 16}, 0.01};
  if (m == PaperModule::avgpool) return {{64, 32, 16}, 0.001};
  return {{64, 32, 16}, 0.01};  // maxpool
}

std::vector<PaperModule> parse_modules(const std::string& list) {
  std::vector<PaperModule> out;
  if (list.empty() || list == "all") return models::paper_modules();
  for (const auto& name : split(list, ',')) {
    const auto m = models::paper_module_named(trim(name));
    if (!m) {
      std::vector<std::string> names;
      for (PaperModule x : models::paper_modules()) names.push_back(models::paper_module_name(x));
      bad("--modules", "'" + name + "' is not a module (" + join(names) + ", or all)");
    }
    if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
  }
  return out;
}

std::string file_of(const std::string& dir, PaperModule m) {
  return (std::filesystem::path(dir) / (std::string(models::paper_module_name(m)) + ".csv")).string();
}

int rank_of(PaperModule m) {
  const auto& all = models::paper_modules();
  return static_cast<int>(std::find(all.begin(), all.end(), m) - all.begin());
}

// --- modules ----------------------------------------------------------------------------------------------

int list_modules() {
  for (PaperModule m : models::paper_modules()) {
    const auto f = models::paper_module_features(m);
    std::vector<std::string> parts;
    for (size_t i = 0; i < f.names.size(); ++i) parts.push_back(f.names[i] + " (" + f.classes[i] + ")");
    const MednConfig c = table4(m);
    std::vector<std::string> enc;
    for (auto w : c.encoder) enc.push_back(std::to_string(w));
    std::cout << models::paper_module_name(m) << ": " << join(parts) << "; MEDN encoder [" << join(enc) << "], weight ratio "
              << format_double(c.weight_ratio) << "\n";
  }
  return 0;
}

// --- sample -----------------------------------------------------------------------------------------------

struct SampleOptions {
  std::string out, modules = "all", device_type = "local-cpu";
  int samples = 2000, warmup = 1, repeats = 3, load_every = 25, threads = 0;
  std::uint64_t seed = 1;
  double max_mflop = 300, max_mib = 64, max_load_mib = 2048, min_timed_ms = 2, settle_s = 0.3;
  bool load = true, quiet = false;
  std::string command_line;
};

// The settings a kept file must match to be reused (its provenance says them).
std::map<std::string, std::string> settings_of(const SampleOptions& o) {
  return {{"samples", std::to_string(o.samples)},
          {"seed", std::to_string(o.seed)},
          {"max_mflop", format_double(o.max_mflop)},
          {"max_mib", format_double(o.max_mib)},
          {"warmup", std::to_string(o.warmup)},
          {"repeats", std::to_string(o.repeats)},
          {"background_load", o.load ? "on" : "off"},
          {"load_every", std::to_string(o.load_every)},
          {"max_load_mib", format_double(o.max_load_mib)},
          {"threads", std::to_string(o.threads)},
          {"min_timed_ms", format_double(o.min_timed_ms)},
          {"settle_s", format_double(o.settle_s)}};
}

bool kept(const std::string& path, const SampleOptions& o) {
  if (!std::filesystem::exists(path)) return false;
  try {
    const ModuleSampleSet s = read_module_samples(path);
    for (const auto& [k, v] : settings_of(o)) {
      auto it = s.provenance.attributes.find("setting_" + k);
      if (it == s.provenance.attributes.end() || it->second != v) return false;
    }
    return static_cast<int>(s.samples.size()) == o.samples;
  } catch (const std::exception&) {
    return false;  // unreadable: measured again
  }
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int sample(const SampleOptions& o, const std::string& self) {
  if (o.out.empty()) bad("--out", "a folder for the sample sets is required");
  if (o.samples < 10 || o.samples > 100000) bad("--samples", "must be 10..100000");
  if (o.warmup < 0 || o.warmup > 100) bad("--warmup", "must be 0..100");
  if (o.repeats < 1 || o.repeats > 1000) bad("--repeats", "must be 1..1000");
  if (o.load_every < 1 || o.load_every > 100000) bad("--load-every", "must be 1..100000");
  if (!(o.max_mflop >= 1 && o.max_mflop <= 1e6)) bad("--max-mflop", "must be 1..1000000");
  if (!(o.max_mib >= 1 && o.max_mib <= 65536)) bad("--max-mib", "must be 1..65536");
  if (!(o.max_load_mib >= 0 && o.max_load_mib <= 1 << 20)) bad("--max-load-mib", "must be 0..1048576");
  if (o.threads < 0 || o.threads > 1024) bad("--threads", "must be 0..1024");
  if (!(o.min_timed_ms >= 0 && o.min_timed_ms <= 10000)) bad("--min-timed-ms", "must be 0..10000");
  if (!(o.settle_s >= 0 && o.settle_s <= 60)) bad("--settle", "must be 0..60 s");
  const std::vector<PaperModule> modules = parse_modules(o.modules);
  std::filesystem::create_directories(o.out);
  if (o.threads > 0) hw::set_compute_threads(o.threads);
  const int threads = torch::get_num_threads();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  models::PaperModuleBounds bounds;
  bounds.max_flops = o.max_mflop * 1e6;
  bounds.max_bytes = o.max_mib * 1048576.0;

  std::vector<PaperModule> todo;
  for (PaperModule m : modules) {
    if (kept(file_of(o.out, m), o)) {
      if (!o.quiet) std::cerr << "medn sample: " << models::paper_module_name(m) << ": kept " << file_of(o.out, m) << "\n";
    } else {
      todo.push_back(m);
    }
  }
  cli::ProgressLine progress("medn sample", o.quiet);
  const double total = static_cast<double>(todo.size()) * o.samples;
  double done = 0;
  hw::LoadGenerator load(self);
  hw::SystemMeter meter;
  for (PaperModule m : todo) {
    RandomStream configs(o.seed, StreamPurpose::paper_module_sampling, static_cast<std::uint64_t>(rank_of(m)));
    RandomStream levels(o.seed, StreamPurpose::background_load, static_cast<std::uint64_t>(rank_of(m)));
    const auto layout = models::paper_module_features(m);
    ModuleSampleSet set;
    set.feature_names = layout.names;
    set.feature_classes = layout.classes;
    models::RejectionCounts rejections;
    std::map<std::string, long long> level_samples;
    double utilisation = 0;
    for (int i = 0; i < o.samples; ++i) {
      if (i % o.load_every == 0) {
        // A new load level (with --no-load: none), then the others' share of the CPUs read while this
        // process waits (--settle): the device's status before the next stretch of samples, over
        // enough kernel ticks to be fine-grained. (A share read over the samples themselves would mix
        // levels: 25 samples of a fast module take milliseconds.)
        if (o.load) {
          const long long cap = std::min<long long>(static_cast<long long>(o.max_load_mib * 1048576.0), meter.available_memory_bytes() / 4);
          load.set(hw::random_load_level(levels, cores, cap));
        }
        meter.mark();
        std::this_thread::sleep_for(std::chrono::duration<double>(o.settle_s));
        utilisation = meter.utilisation_since_mark();
      }
      const models::PaperModuleConfig c = models::sample_paper_module(m, configs, bounds, &rejections);
      models::PaperModuleInstance instance(c);
      for (int w = 0; w < o.warmup; ++w) instance.forward();
      // The memory available as a predictor would read it just before the inference.
      const double available = static_cast<double>(meter.available_memory_bytes());
      // At least --repeats runs and --min-timed-ms of them (at most 1000): a 50 us module timed 3 times
      // is mostly timer and scheduling noise.
      std::vector<double> times;
      double timed = 0;
      while (static_cast<int>(times.size()) < o.repeats || (timed < o.min_timed_ms * 1e-3 && times.size() < 1000)) {
        times.push_back(instance.forward());
        timed += times.back();
      }
      ModuleSample s;
      s.op = models::paper_module_name(m);
      s.device_type = o.device_type;
      s.model = "medn-modules";
      s.stage_name = "";
      s.features = models::paper_module_feature_values(c, available, utilisation);
      double sum = 0;
      for (double t : times) sum += t;
      s.mean_s = std::max(sum / static_cast<double>(times.size()), 1e-7);
      std::sort(times.begin(), times.end());
      s.p50_s = times[times.size() / 2];
      s.count = static_cast<long long>(times.size());
      set.samples.push_back(std::move(s));
      const auto& lv = load.level();
      ++level_samples[lv.threads == 0 && lv.memory_bytes == 0 ? "idle" : "loaded"];
      done += 1;
      progress.update(done, total, std::string(models::paper_module_name(m)) + " " + std::to_string(i + 1) + "/" + std::to_string(o.samples));
    }
    load.stop();
    Provenance& pv = set.provenance;
    pv.kind = "measured";
    pv.attributes["what"] = std::string("the MEDN paper's module ") + models::paper_module_name(m) +
                            " timed with LibTorch on this CPU (forward pass, eval mode, no autograd); the mean of at least " +
                            std::to_string(o.repeats) + " runs and " + format_double(o.min_timed_ms) + " ms of them, after " +
                            std::to_string(o.warmup) + " warm-up";
    pv.attributes["cpu"] = hw::cpu_model_name();
    pv.attributes["cores"] = std::to_string(cores);
    pv.attributes["threads"] = std::to_string(threads);
    pv.attributes["libtorch"] = TORCH_VERSION;
    pv.attributes["date"] = now_utc();
    pv.attributes["command"] = o.command_line;
    pv.attributes["configurations"] = "the paper's ranges (Sec. 2.1), uniform; " + std::to_string(rejections.rejected) + " of " +
                                      std::to_string(rejections.drawn) + " draws redrawn for exceeding " + format_double(o.max_mflop) + " MFLOP or " +
                                      format_double(o.max_mib) + " MiB";
    pv.attributes["background_load"] =
        o.load ? "real: a child process whose threads, duty and touched memory change every " + std::to_string(o.load_every) +
                     " samples (idle with probability 0.3; memory up to min(" + format_double(o.max_load_mib) + " MiB, MemAvailable / 4)); " +
                     std::to_string(level_samples["loaded"]) + " samples under load, " + std::to_string(level_samples["idle"]) + " idle"
               : "none (a static environment)";
    pv.attributes["measurable"] =
        "M: /proc/meminfo MemAvailable before the timed runs; U: /proc/stat's busy share less this process's CPU time, "
        "read over " +
        format_double(o.settle_s) + " s while this process waited, after each load change";
    for (const auto& [k, v] : settings_of(o)) pv.attributes["setting_" + k] = v;
    write_module_samples(file_of(o.out, m), set);
  }
  progress.finish();
  if (!o.quiet) std::cerr << "medn sample: " << modules.size() << " module sample sets in " << o.out << "\n";
  return 0;
}

// --- evaluate ---------------------------------------------------------------------------------------------

struct EvaluateOptions {
  std::string dir, out, modules = "all";
  int epochs = 500;
  std::uint64_t seed = 1;
  bool quiet = false;
};

nlohmann::ordered_json score_json(const models::RegressorScore& s) {
  return {{"p10", s.p10}, {"p20", s.p20}, {"mape", s.mape}, {"r2", s.r2}, {"samples", s.samples}};
}

int evaluate(const EvaluateOptions& o) {
  if (o.dir.empty()) bad("DIR", "the folder of sample sets (coinfer medn sample --out DIR) is required");
  if (o.epochs < 1 || o.epochs > 100000) bad("--epochs", "must be 1..100000");
  const std::vector<PaperModule> modules = parse_modules(o.modules);
  nlohmann::ordered_json j;
  j["what"] = "the MEDN paper's Tables 5 and 6 and Fig. 4 on samples measured on this machine; scores on each module's test split (20 %)";
  j["samples_dir"] = std::filesystem::absolute(o.dir).string();
  j["epochs"] = o.epochs;
  j["seed"] = o.seed;
  const auto& kinds = models::all_regressor_kinds();
  // Per kind: the means over modules of test P10, P20, R^2, time per sample and size.
  std::map<RegressorKind, std::map<std::string, double>> sums;
  std::map<std::string, std::map<std::string, double>> selected_sums;  // "time" / "space" -> metric -> sum
  int fitted = 0;
  cli::ProgressLine progress("medn evaluate", o.quiet);
  for (PaperModule m : modules) {
    const std::string path = file_of(o.dir, m);
    if (!std::filesystem::exists(path)) bad("DIR", path + " is missing (coinfer medn sample --out " + o.dir + " measures it)");
    const ModuleSampleSet set = read_module_samples(path);
    if (set.feature_classes.empty()) bad("DIR", path + " has no feature classes: not a `coinfer medn sample` set");
    if (j["cpu"].is_null()) j["cpu"] = set.provenance.attributes.count("cpu") ? set.provenance.attributes.at("cpu") : "unknown";
    models::RegressorFitOptions fo;
    fo.seed = o.seed;
    fo.epochs = o.epochs;
    fo.kinds = kinds;
    fo.feature_names = set.feature_names;
    fo.feature_classes = set.feature_classes;
    const MednConfig mc = table4(m);
    fo.medn_encoder = mc.encoder;
    fo.medn_weight_ratio = mc.weight_ratio;
    progress.update(fitted, static_cast<double>(modules.size()), std::string("fitting ") + models::paper_module_name(m));
    const models::ModuleLatencyModel model = models::ModuleLatencyModel::fit(set.samples, fo);
    const models::ModuleFit& f = model.fit_of(models::paper_module_name(m));
    auto& mj = j["modules"][models::paper_module_name(m)];
    mj["samples"] = set.samples.size();
    mj["split"] = {{"train", f.train}, {"validation", f.validation}, {"test", f.test}};
    mj["medn_encoder"] = mc.encoder;
    mj["medn_weight_ratio"] = mc.weight_ratio;
    for (RegressorKind k : kinds) {
      auto& r = mj["regressors"][models::regressor_name(k)];
      r["test"] = score_json(f.test_scores.at(k));
      r["validation"] = score_json(f.validation_scores.at(k));
      r["tps_ms"] = f.time_per_sample_ms.at(k);
      r["size_kb"] = static_cast<double>(f.size_bytes.at(k)) / 1000.0;
      r["parameters"] = f.parameters.at(k);
      auto& s = sums[k];
      s["p10"] += f.test_scores.at(k).p10, s["p20"] += f.test_scores.at(k).p20, s["r2"] += f.test_scores.at(k).r2;
      s["tps_ms"] += f.time_per_sample_ms.at(k), s["size_kb"] += static_cast<double>(f.size_bytes.at(k)) / 1000.0;
    }
    mj["space_efficient"] = models::regressor_name(f.chosen);
    mj["time_efficient"] = models::regressor_name(f.chosen_time);
    for (const auto& [name, k] : {std::pair<std::string, RegressorKind>{"space", f.chosen}, {"time", f.chosen_time}}) {
      selected_sums[name]["p20"] += f.test_scores.at(k).p20;
      selected_sums[name]["r2"] += f.test_scores.at(k).r2;
      selected_sums[name]["tps_ms"] += f.time_per_sample_ms.at(k);
      selected_sums[name]["size_kb"] += static_cast<double>(f.size_bytes.at(k)) / 1000.0;
    }
    ++fitted;
  }
  progress.finish();
  const double n = static_cast<double>(fitted);
  // Means over modules, and each regressor's difference from MEDN's mean, in % of MEDN's.
  const auto& medn = sums[RegressorKind::medn];
  auto diff = [&](double x, const std::string& metric) {
    return medn.at(metric) != 0 ? 100.0 * (x - medn.at(metric)) / std::abs(medn.at(metric)) : 0.0;
  };
  for (RegressorKind k : kinds) {
    auto& mean = j["means"][models::regressor_name(k)];
    for (const auto& [metric, v] : sums[k]) mean[metric] = v / n;
    for (const auto& metric : {"p20", "r2", "tps_ms", "size_kb"})
      j["diff_vs_medn_pct"][models::regressor_name(k)][metric] = diff(sums[k][metric], metric);
  }
  for (const auto& [name, s] : selected_sums) {
    auto& sj = j["auto_selection"][name];
    for (const auto& [metric, v] : s) sj["mean"][metric] = v / n;
    for (const auto& metric : {"p20", "r2", "tps_ms", "size_kb"}) sj["diff_vs_medn_pct"][metric] = diff(s.at(metric), metric);
  }
  j["definition"] =
      "means are over the modules evaluated; diff_vs_medn_pct = 100 (mean of the regressor - mean of MEDN) / |mean of MEDN| (the paper's "
      "'Avg diff% vs. MEDN' cannot be re-derived from its own Table 5 by any averaging tried: see reproduce/README.md)";
  const std::string text = j.dump(1) + "\n";
  if (o.out.empty())
    std::cout << text;
  else
    write_text_atomic(o.out, text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "_load-child")  // hw/load_generator's child (not for users)
    return hw::run_load_child(std::atoi(argv[2]), std::atof(argv[3]), std::atoll(argv[4]));
  CLI::App app{"coinfer medn: the MEDN paper's latency-prediction study measured on this machine (reproduce/README.md, models/README.md)"};
  app.name("coinfer medn");
  app.require_subcommand(1);
  auto* modules_cmd = app.add_subcommand("modules", "list the nine modules, their features and MEDN's configuration (Tables 3 and 4)");
  SampleOptions so;
  auto* sample_cmd = app.add_subcommand("sample", "time the paper's modules on this CPU under real background load; one sample set per module");
  sample_cmd->add_option("--out", so.out, "folder of the sample sets (DIR/<module>.csv); required")->required();
  sample_cmd->add_option("--modules", so.modules, "comma-separated modules, or all (default)");
  sample_cmd->add_option("--samples", so.samples, "samples per module (default 2000; the paper: 10,000 for convolutions, 2,000 for the others)");
  sample_cmd->add_option("--seed", so.seed, "configurations and load levels (default 1)");
  sample_cmd->add_option("--max-mflop", so.max_mflop, "redraw configurations above this many MFLOP (default 300)");
  sample_cmd->add_option("--max-mib", so.max_mib, "redraw configurations whose input, output and weights exceed this many MiB (default 64)");
  sample_cmd->add_option("--warmup", so.warmup, "untimed runs per sample (default 1)");
  sample_cmd->add_option("--repeats", so.repeats, "timed runs per sample at least, their mean the latency (default 3)");
  sample_cmd->add_option("--min-timed-ms", so.min_timed_ms, "time each sample at least this long in all (more runs for fast modules; default 2)");
  sample_cmd->add_option("--settle", so.settle_s, "seconds waited after each load change, over which the utilisation U is read (default 0.3)");
  sample_cmd->add_option("--load-every", so.load_every, "samples between background load changes (default 25)");
  sample_cmd->add_option("--max-load-mib", so.max_load_mib, "largest memory the background load holds (default 2048; also at most MemAvailable / 4)");
  sample_cmd->add_flag("!--no-load", so.load, "no background load (a static environment)");
  sample_cmd->add_option("--threads", so.threads, "LibTorch intra-op threads (default: every core)");
  sample_cmd->add_option("--device-type", so.device_type, "device type written with each sample (default local-cpu)");
  EvaluateOptions eo;
  auto* eval_cmd = app.add_subcommand("evaluate", "fit LR, RF, MLP, MEDN and its ablations per module; Tables 5, 6 and Fig. 4 as JSON");
  eval_cmd->add_option("DIR", eo.dir, "folder of the sample sets (coinfer medn sample --out)")->required();
  eval_cmd->add_option("--out", eo.out, "write the JSON here (default: stdout)");
  eval_cmd->add_option("--modules", eo.modules, "comma-separated modules, or all (default)");
  eval_cmd->add_option("--epochs", eo.epochs, "training epochs of the networks (default 500, the paper's)");
  eval_cmd->add_option("--seed", eo.seed, "data split and initial weights (default 1)");
  std::string command;
  if (const int rc = cli::parse_command_line(app, argc, argv, command); rc >= 0) return rc;  // -q and -v as every companion
  so.quiet = eo.quiet = cli::quiet("medn");
  so.command_line = command;
  char self[4096] = {0};
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string self_path = len > 0 ? std::string(self, static_cast<size_t>(len)) : argv[0];
  return cli::guarded([&]() -> int {
    if (*modules_cmd) return list_modules();
    if (*sample_cmd) return sample(so, self_path);
    return evaluate(eo);
  });
}
