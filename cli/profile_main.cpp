// coinfer-profile: the LibTorch half of `coinfer profile` (kept in its own program so that the
// simulator's `coinfer` does not load Torch). Measures a LUT on this machine.
#include <cmath>
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "hw/compute_threads.hpp"
#include "hw/cpu_cap.hpp"
#include "cli/progress_line.hpp"
#include "hw/lut_profiler.hpp"
#include "hw/operator_class_bench.hpp"
#include "hw/system_meter.hpp"
#include "io/lut_h5.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"
#include "io/module_samples.hpp"
#include "core/random_model_variant.hpp"
#include "models/variant_accuracy.hpp"

namespace {

// --cpu-quota: caps this process (a cgroup) and records the cap in the options' provenance fields.
// --background-load S takes the share S of those cores for other work: the cap is cores x (1 - S).
std::unique_ptr<coinfer::hw::CpuCap> apply_cpu_quota(double cores, coinfer::hw::ProfileOptions& o, double background_load) {
  using namespace coinfer;
  if (background_load > 0 && cores <= 0)
    throw InputError(SourceLocation{"--background-load", 0, 0}, "--background-load",
                     "takes its share from the CPU cap: give --cpu-quota CORES too (the device's cores)");
  if (cores <= 0) return nullptr;
  std::unique_ptr<hw::CpuCap> cap;
  try {
    cap = hw::CpuCap::apply(cores * (1 - background_load));
  } catch (const std::runtime_error& e) {
    throw InputError(SourceLocation{"--cpu-quota", 0, 0}, "--cpu-quota", e.what());
  }
  o.cpu_cap = cap->description();
  o.cpu_cap_cores = cores;
  o.background_load = background_load;
  return cap;
}

// coinfer profile --modules N: module latency samples for the regressors of coinfer lut fill.
int profile_modules(const coinfer::ModelCatalog& cat, const std::string& only_model, long long count, coinfer::hw::ProfileOptions o,
                    const std::string& out, bool quiet, double cpu_quota, double background_load) {
  using namespace coinfer;
  std::vector<ModelSpec> bases;
  for (const auto& m : cat.model_names()) {
    if (!only_model.empty() && m != only_model) continue;
    for (const auto& d : cat.datasets_for(m)) bases.push_back(cat.instantiate(m, d));
  }
  if (bases.empty())
    throw InputError(SourceLocation{"--model", 0, 0}, "--model", "unknown model '" + only_model + "' (models: " + join(cat.model_names()) + ")");
  cli::check_output_folder(std::filesystem::path(std::filesystem::absolute(out)).parent_path().string(), "--out");
  o.single_stages_only = true;
  o.whole_model_only = false;
  std::unique_ptr<hw::CpuCap> cap = apply_cpu_quota(cpu_quota, o, background_load);
  auto progress = std::make_shared<cli::ProgressLine>("profile --modules", quiet);
  ModuleSampleSet set;
  long long skipped = 0;
  for (long long i = 0; i < count; ++i) {
    const ModelSpec& base = bases[static_cast<size_t>(i) % bases.size()];
    ModelSpec v;
    LutTable t;
    try {
      v = random_model_variant(base, o.seed, static_cast<std::uint64_t>(i));
      t = hw::profile_model(v, o);
    } catch (const std::invalid_argument& e) {  // a variant the builder cannot realise
      log::info("profile", strprintf("note: variant %lld of %s/%s skipped: %s", i, base.name.c_str(), base.dataset.name.c_str(), e.what()));
      ++skipped;
      continue;
    }
    for (auto& s : module_samples_from_lut(t, v)) set.samples.push_back(std::move(s));
    if (set.provenance.kind.empty()) set.provenance = t.provenance();
    progress->update(static_cast<double>(i + 1), static_cast<double>(count), v.name + "/" + v.dataset.name);
  }
  cap.reset();
  progress->finish();
  if (set.samples.empty()) throw InputError(SourceLocation{"--modules", 0, 0}, "--modules", "no variant could be measured");
  auto& a = set.provenance.attributes;
  a.erase("wire_bytes");
  a.erase("bytes_per_split");
  a.erase("peak_memory");
  a.erase("inputs");
  a["note"] = "MEASURED by coinfer profile --modules on this machine with the LibTorch models";
  a["samples"] = std::to_string(count - skipped) + " random variants (core/random_model_variant.hpp, seed " + std::to_string(o.seed) + ") of " +
                 (only_model.empty() ? std::string("every model") : only_model) +
                 "; every single stage [i,i+1) at every batch size; synthetic inputs of each variant's dataset";
  std::filesystem::create_directories(std::filesystem::absolute(out).parent_path());
  write_module_samples(out, set);
  std::printf("wrote %s: %zu module samples from %lld model variants [MEASURED]\n", out.c_str(), set.samples.size(), count - skipped);
  return 0;
}

// The journal of a profile in progress, OUT.partial (JSON lines): the first line says what is being
// profiled and how (every option that changes a measurement), each further line one measured (range,
// batch) entry, appended and flushed as soon as it is measured. A killed profile run again with the
// same options resumes from it; the journal goes when the LUT is written. A last line cut by the kill
// is ignored.
class ProfileJournal {
 public:
  ProfileJournal(std::string path, nlohmann::json identity) : path_(std::move(path)), identity_(std::move(identity)) {}

  // Entries of an interrupted run with the same identity (empty when there is none). InputError when
  // the journal belongs to other options (nothing is removed: the user decides).
  std::map<coinfer::hw::ProfiledKey, coinfer::hw::ProfiledEntry> load() const {
    using namespace coinfer;
    std::map<hw::ProfiledKey, hw::ProfiledEntry> done;
    std::ifstream in(path_);
    if (!in) return done;
    std::stringstream text;
    text << in.rdbuf();
    std::string all = text.str(), line;
    if (!all.empty() && all.back() != '\n') all.erase(all.rfind('\n') == std::string::npos ? 0 : all.rfind('\n') + 1);  // cut last line
    std::istringstream lines(all);
    int n = 0;
    while (std::getline(lines, line)) {
      ++n;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const std::exception& e) {
        throw InputError(SourceLocation{path_, n, 1}, "",
                         std::string("not a profile journal line (") + e.what() + "); delete the file to profile from the start");
      }
      if (n == 1) {
        if (j != identity_)
          throw InputError(SourceLocation{path_, 1, 1}, "",
                           "an interrupted profile with other options (" + j.dump() +
                               ") is waiting in this file; run that command "
                               "again to resume it, or delete the file to profile from the start with these options");
        continue;
      }
      try {
        hw::ProfiledEntry e;
        e.stats = {j.at("mean_s"), j.at("p50_s"), j.at("p95_s"), j.at("std_s"), j.at("count")};
        e.quantiles = j.at("quantiles").get<std::vector<double>>();
        e.peak_bytes = j.at("peak_bytes").is_null() ? std::nan("") : j.at("peak_bytes").get<double>();  // null: not measured
        done[{j.at("i").get<int>(), j.at("j").get<int>(), j.at("batch").get<int>()}] = e;
      } catch (const std::exception& e) {
        throw InputError(SourceLocation{path_, n, 1}, "",
                         std::string("a corrupt profile journal entry (") + e.what() + "); delete the file to profile from the start");
      }
    }
    return done;
  }

  // Appends each entry as it comes; the file is made (identity line first, unless one is resumed) with
  // the first entry, so that a profile refused before measuring anything (bad input) leaves none.
  void resume_into_existing(bool resuming) { resuming_ = resuming; }
  void append(const coinfer::hw::ProfiledKey& k, const coinfer::hw::ProfiledEntry& e) {
    if (!out_.is_open()) {
      std::filesystem::create_directories(std::filesystem::absolute(path_).parent_path());
      out_.open(path_, resuming_ ? std::ios::app : std::ios::trunc);
      if (!out_) throw std::runtime_error("cannot write the profile journal " + path_);
      if (!resuming_) out_ << identity_.dump() << "\n" << std::flush;
    }
    nlohmann::json j{{"i", std::get<0>(k)},      {"j", std::get<1>(k)},    {"batch", std::get<2>(k)}, {"mean_s", e.stats.mean_s},
                     {"p50_s", e.stats.p50_s},   {"p95_s", e.stats.p95_s}, {"std_s", e.stats.std_s},  {"count", e.stats.count},
                     {"quantiles", e.quantiles}, {"peak_bytes", nullptr}};
    if (std::isfinite(e.peak_bytes)) j["peak_bytes"] = e.peak_bytes;
    out_ << j.dump() << "\n" << std::flush;
  }
  void remove() {
    out_.close();
    std::filesystem::remove(path_);
  }

 private:
  std::string path_;
  nlohmann::json identity_;
  std::ofstream out_;
  bool resuming_ = false;
};

// coinfer profile --operator-classes: this CPU's rate per operator class, written as a profile's
// `operator_classes` entry (traces/README.md "Operator classes") with every measured point as a comment.
int profile_operator_classes(const std::string& out, int threads, int repeats, int warmup, bool quiet, const std::string& command_line) {
  using namespace coinfer;
  if (out.size() < 5 || (out.substr(out.size() - 5) != ".yaml" && out.substr(out.size() - 4) != ".yml"))
    throw InputError(SourceLocation{"--out", 0, 0}, "--out", "with --operator-classes: a .yaml file (the profile entry is written there)");
  cli::check_output_folder(std::filesystem::path(std::filesystem::absolute(out)).parent_path().string(), "--out");
  std::filesystem::create_directories(std::filesystem::absolute(out).parent_path());  // before the measurement, as a LUT's profile
  hw::OperatorClassOptions o;
  o.threads = threads;
  o.repeats = repeats;
  o.warmup = warmup;
  auto progress = std::make_shared<cli::ProgressLine>("profile --operator-classes", quiet);
  o.progress = [progress](double done, double all, const std::string& what) { progress->update(done, all, what); };
  const hw::OperatorClassMeasurement m = hw::measure_operator_classes(o);
  progress->finish();
  char day[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(day, sizeof day, "%Y-%m-%d", std::gmtime(&now));
  const std::string source = "MEASURED on " + hw::cpu_model_name() + ", " + std::to_string(threads) + " LibTorch thread" + (threads == 1 ? "" : "s") +
                             ", by coinfer " + COINFER_VERSION_STRING + " profile --operator-classes on " + day + " (median of " +
                             std::to_string(repeats) +
                             " runs per size at five sizes of the shipped models' range; gbps: the median, gbps_by_bytes: each size)";
  std::ostringstream y;
  y << "# " << command_line << "\n# Every measured point (work, median seconds) and the class's median rate over them:\n";
  for (const hw::ClassLine& l : m.lines) {
    y << "#   " << l.cls << " (" << l.work << "): " << l.what << ": rate " << format_double(l.rate_per_s / 1e9) << " G" << l.work
      << "/s, launch subtracted " << format_double(l.intercept_s * 1e6) << " us; points";
    for (const auto& [x, t] : l.points) y << " (" << format_double(x) << ", " << format_double(t) << ")";
    y << "\n";
  }
  y << "# launch (the median of the smallest operators, seconds):";
  for (const auto& [what, t] : m.launches) y << " " << what << " " << format_double(t) << ";";
  y << "\nstage_overhead_ms: " << format_double(m.stage_overhead_ms)
    << "  # the model runner's cost per stage beyond its operators (a one-row, one-Linear stage, less a launch)";
  y << "\noperator_classes:\n  source: \"" << source << "\"\n  launch_us: " << format_double(m.classes.launch_us) << "\n";
  for (int c = 0; c < kOperatorClassCount; ++c) {
    const auto& r = m.classes.rates[c];
    y << "  " << kOperatorClassNames.name(static_cast<OperatorClass>(c)) << ": {";
    if (r.gflops > 0) y << "gflops: " << format_double(r.gflops) << ", ";
    y << "gbps: " << format_double(r.gbps);
    if (r.ns_per_row > 0) y << ", ns_per_row: " << format_double(r.ns_per_row);
    if (!r.gbps_by_bytes.empty()) {
      y << ", gbps_by_bytes: [";
      for (size_t i = 0; i < r.gbps_by_bytes.size(); ++i)
        y << (i ? ", " : "") << "[" << format_double(r.gbps_by_bytes[i].first) << ", " << format_double(r.gbps_by_bytes[i].second) << "]";
      y << "]";
    }
    y << "}\n";
  }
  const std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp);
    f << y.str();
    if (!f) throw InputError(SourceLocation{out, 0, 0}, "--out", "cannot write " + tmp);
  }
  std::filesystem::rename(tmp, out);
  std::fputs(y.str().c_str(), stdout);
  std::printf("wrote %s [MEASURED]\n", out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  coinfer::hw::keep_tensor_memory();  // as the runtime does, so the LUT matches it
  CLI::App app{"coinfer profile: measure a LUT of a model on this machine (real LibTorch runs)"};
  app.name("coinfer profile");  // usage lines read the way users call it
  std::string model, dataset, out, batches = "1..8", variant;
  int accuracy_samples = 4;
  bool replace = false;
  coinfer::hw::ProfileOptions o;
  app.add_option("--model", model, "model name (coinfer model list); with --modules: only this model's variants (default: every model)");
  app.add_option("--dataset", dataset, "dataset (default: the model's first)");
  app.add_option(
      "--variant", variant,
      "execution variant (GraNNite's techniques, models/README.md \"Variants\"): parts joined by '+' from dense_mask, "
      "cap<N> (node capacity), symmetric, uncached, select_mask, grasp, int8, grax1, grax2, fd<P>, e.g. dense_mask+int8; the LUT's model is then "
      "MODEL@VARIANT and its provenance holds the variant's output error against the base model");
  app.add_option("--accuracy-samples", accuracy_samples, "with --variant: generated samples the output error is measured on (default 4; at least 1)");
  app.add_option("--out", out,
                 "LUT file to write (e.g. traces/lut/my-board.h5): an existing one keeps its other tables; with --modules: the sample set (.csv)")
      ->required();
  app.add_flag("--replace", replace, "measure again a table the --out file already holds (else refused)");
  long long modules = 0;
  app.add_option("--modules", modules,
                 "measure module latency samples instead of a LUT: N random variants of the models (widths, k, nodes, "
                 "features drawn at random, core/random_model_variant.hpp), every single stage at every batch size, written as "
                 "a sample set for coinfer lut fill --samples (traces/README.md)");
  app.add_option("--input", o.input_file, "real inputs: a PointNet HDF5 (point clouds) or graph HDF5 file (models/README.md)");
  app.add_option("--device-type", o.device_type, "device type name stored in the LUT (default this-machine)");
  app.add_option("--batch", batches, "batch sizes 1..B (default 1..8)");
  app.add_option("--warmup", o.warmup, "untimed runs per range and batch (default 2)");
  app.add_option("--repeats", o.repeats, "timed runs per range and batch (default 10)");
  app.add_option("--threads", o.threads, "LibTorch intra-op threads (default 1)");
  app.add_option("--feature-chunks", o.feature_chunks, "feature decomposition slices (default: the variant's, fd<P> in --variant, else 1)");
  std::string ranges = "all";
  app.add_option("--ranges", ranges, "which stage ranges: all (default), whole (only [0,n): a quick calibration) or stages (only [i,i+1))")
      ->check(CLI::IsMember({"all", "whole", "stages"}));
  std::string processor;
  app.add_option("--processor", processor,
                 "which processor runs the model and which the LUT describes: cpu (LibTorch on the CPU; the table's processor is "
                 "'cpu') or cuda (a CUDA LibTorch's GPU; the table's processor is 'gpu'). Default: the CPU, as the device type's only "
                 "processor (no processor named in the file)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  std::string as_processor;
  app.add_option("--as-processor", as_processor,
                 "with --processor: the processor name the table gives what it measured, instead of cpu/gpu: e.g. the CPU standing for a "
                 "board's GPU in a rehearsal of a placement where there is no GPU (its provenance says what ran it)");
  double cpu_quota = 0;
  app.add_option("--cpu-quota", cpu_quota, "emulate a slower device: cap this process at this many cores (cgroup; root)");
  double background_load = 0;
  app.add_option("--background-load", background_load,
                 "profile under background load: other work takes this share (0..0.99) of the --cpu-quota cores, so the process runs "
                 "under a cap of CORES x (1 - SHARE), as a load event does on the testbed; the LUT's provenance says so")
      ->check(CLI::Range(0.0, 0.99));
  bool operator_classes = false;
  app.add_flag("--operator-classes", operator_classes,
               "measure this CPU's rate per operator class instead of a LUT (dense, irregular, elementwise, reduction, select, movement "
               "and the launch cost; traces/README.md \"Operator classes\"): --out FILE.yaml receives a profile's operator_classes entry; "
               "--threads, --repeats (default 15 here) and --warmup apply");
  if (const int rc = coinfer::cli::parse_command_line(app, argc, argv, o.command_line); rc >= 0) return rc;
  return coinfer::cli::guarded([&] {
    using namespace coinfer;
    if (operator_classes) {
      if (o.repeats < 1 || o.warmup < 0 || o.threads < 1 || o.threads > 1024)
        throw InputError(SourceLocation{"profile", 0, 0}, "--repeats", "need repeats >= 1, warmup >= 0, threads in 1..1024");
      const bool repeats_given = app.get_option("--repeats")->count() > 0;
      return profile_operator_classes(out, o.threads, repeats_given ? o.repeats : 15, o.warmup, cli::quiet("profile"), o.command_line);
    }
    auto dots = batches.find("..");
    int hi = 0;
    try {
      if (batches.substr(0, dots) != "1" || dots == std::string::npos) throw std::invalid_argument(batches);
      hi = std::stoi(batches.substr(dots + 2));
    } catch (const std::exception&) {
      throw InputError(SourceLocation{"--batch", 0, 0}, "--batch", "expected 1..B, e.g. 1..8");
    }
    if (hi < 1 || hi > 64) throw InputError(SourceLocation{"--batch", 0, 0}, "--batch", "B must be in 1..64");
    o.batch_sizes.clear();
    for (int b = 1; b <= hi; ++b) o.batch_sizes.push_back(b);
    if (!processor.empty()) {
      o.torch_device = processor;
      o.processor = processor == "cuda" ? "gpu" : "cpu";  // the processor names traces/devices.yaml gives them
    }
    if (!as_processor.empty()) {
      if (processor.empty()) throw InputError(SourceLocation{"--as-processor", 0, 0}, "--as-processor", "needs --processor (which device runs it)");
      if (as_processor.find_first_of(" /:[],*+") != std::string::npos)
        throw InputError(SourceLocation{"--as-processor", 0, 0}, "--as-processor", "'" + as_processor + "' is not a processor name");
      o.processor = as_processor;
    }
    if (!processor.empty()) try {
        hw::check_profiling_device(o.torch_device);
      } catch (const std::invalid_argument& e) {
        throw InputError(SourceLocation{"--processor", 0, 0}, "--processor", e.what());
      }
    if (modules > 0 && !processor.empty())
      throw InputError(SourceLocation{"--processor", 0, 0}, "--processor", "module samples (--modules) are measured on the CPU only");
    o.whole_model_only = ranges == "whole";
    o.single_stages_only = ranges == "stages";
    if (o.repeats < 1 || o.warmup < 0 || o.threads < 1 || o.feature_chunks < 0)
      throw InputError(SourceLocation{"profile", 0, 0}, "--repeats", "need repeats >= 1, warmup >= 0, threads >= 1, feature-chunks >= 1");
    ModelCatalog cat = ModelCatalog::load(data_path("models"));
    if (modules < 0 || modules > 100000) throw InputError(SourceLocation{"--modules", 0, 0}, "--modules", "N must be in 1..100000");
    if (modules > 0) return profile_modules(cat, model, modules, o, out, cli::quiet("profile"), cpu_quota, background_load);
    if (model.empty()) throw InputError(SourceLocation{"--model", 0, 0}, "--model", "required (coinfer model list)");
    if (dataset.empty()) dataset = cat.datasets_for(model).at(0);
    if (!variant.empty() && model.find('@') != std::string::npos)
      throw InputError(SourceLocation{"--variant", 0, 0}, "--variant", "--model already names a variant ('" + model + "'); give it once");
    if (!variant.empty()) {
      try {
        model = variant_model_name(model, ModelVariant::parse(variant));
      } catch (const std::invalid_argument& e) {
        throw InputError(SourceLocation{"--variant", 0, 0}, "--variant", e.what());
      }
    }
    if (model.find('@') != std::string::npos && (accuracy_samples < 1 || accuracy_samples > 1000))
      throw InputError(SourceLocation{"--accuracy-samples", 0, 0}, "--accuracy-samples",
                       "must be in 1..1000 (the output error of a variant is measured on generated samples)");
    ModelSpec spec;
    try {
      spec = cat.instantiate(model, dataset);
    } catch (const InputError& e) {
      if (model.find('@') == std::string::npos) throw;
      throw InputError(SourceLocation{"--variant", 0, 0}, "--variant", e.what());
    }
    cli::check_output_folder(std::filesystem::path(std::filesystem::absolute(out)).parent_path().string(), "--out");
    // An existing LUT file keeps its other tables: the new table is added to them (profiling a second
    // dataset keeps the first). Its own table is replaced only with --replace. Checked now, before the
    // (long) profile.
    std::vector<LutTable> kept;
    {
      std::error_code ec;
      if (std::filesystem::exists(out, ec)) {
        try {
          kept = read_lut_file(out);
        } catch (const std::exception& e) {
          throw InputError(SourceLocation{out, 0, 0}, "--out",
                           std::string("exists and is not a LUT file coinfer can add to (") + e.what() + "); give another file");
        }
        if (!kept.empty() && kept.front().key().device_type != o.device_type)
          throw InputError(SourceLocation{out, 0, 0}, "--out",
                           "holds device type " + kept.front().key().device_type + ", this profile is " + o.device_type +
                               " (--device-type); one LUT file holds one device type: give another file");
        if (!kept.empty() && kept.front().key().processor != o.processor)
          throw InputError(SourceLocation{out, 0, 0}, "--out",
                           "holds tables of processor '" + kept.front().key().processor + "', this profile is of processor '" + o.processor +
                               "' (--processor); one LUT file holds one processor's tables: give another file");
        const LutKey key{o.device_type, model, dataset, o.processor};
        for (auto it = kept.begin(); it != kept.end(); ++it)
          if (it->key() == key) {
            if (!replace)
              throw InputError(
                  SourceLocation{out, 0, 0}, "--out",
                  "already holds " + key.to_string() + " (" + it->provenance().kind + "); add --replace to measure it again, or give another file");
            kept.erase(it);
            break;
          }
      }
    }
    // A profile runs for minutes to hours: its entries are journaled as they are measured, and a
    // killed run resumes where it stopped when it is run again with the same options.
    ProfileJournal journal(out + ".partial", nlohmann::json{{"format", "coinfer-profile-journal"},
                                                            {"device_type", o.device_type},
                                                            {"model", model},
                                                            {"dataset", dataset},
                                                            {"batch_max", hi},
                                                            {"warmup", o.warmup},
                                                            {"repeats", o.repeats},
                                                            {"threads", o.threads},
                                                            {"feature_chunks", o.feature_chunks},
                                                            {"seed", o.seed},
                                                            {"ranges", ranges},
                                                            {"input", o.input_file},
                                                            {"cpu_quota", cpu_quota},
                                                            {"background_load", background_load},
                                                            {"processor", processor}});
    o.resume = journal.load();
    if (!o.resume.empty())
      log::info("profile", "resuming an interrupted profile: " + std::to_string(o.resume.size()) + " entries measured before (" + out + ".partial)");
    journal.resume_into_existing(!o.resume.empty());
    o.measured = [&journal](const hw::ProfiledKey& k, const hw::ProfiledEntry& e) { journal.append(k, e); };
    // Progress with an ETA whether or not stderr is a terminal (a line every 10 s under Slurm or nohup).
    auto progress = std::make_shared<coinfer::cli::ProgressLine>("profile " + model + "/" + dataset, cli::quiet("profile"));
    o.progress = [progress](double done, double all, const std::string& what) { progress->update(done, all, what); };
    std::unique_ptr<hw::CpuCap> cap = apply_cpu_quota(cpu_quota, o, background_load);
    LutTable t;
    try {
      t = hw::profile_model(spec, o);
    } catch (const std::invalid_argument& e) {  // inputs or a spec the builder cannot realise
      throw InputError(SourceLocation{o.input_file.empty() ? spec.file : o.input_file, 0, 0}, "", e.what());
    }
    cap.reset();
    progress->finish();
    if (!spec.variant.is_default()) {
      // The quality side of the trade: the variant's outputs against the base model's (same weights).
      const models::VariantAccuracy a = models::measure_variant_accuracy(cat.spec(spec.base_name(), dataset), spec, accuracy_samples, o.seed);
      auto& at = t.provenance().attributes;
      at["variant"] = spec.variant.name();
      at["output_max_abs_error"] = format_double(a.max_abs_error);
      at["output_mean_abs_error"] = format_double(a.mean_abs_error);
      at["output_mean_abs"] = format_double(a.output_scale);
      at["output_top1_agreement"] = format_double(a.top1_agreement);
      at["output_error_samples"] = std::to_string(a.samples) + " generated samples of " + dataset + " (indices 1000..), against " + spec.base_name() +
                                   " with the same weights (seed " + std::to_string(o.seed) + ")";
      if (spec.variant.int8()) at["quantized_engine"] = hw::quantized_engine_name();
      std::printf("variant %s: output error max %.3g, mean %.3g (outputs average %.3g), top-1 agreement %.1f %% on %d samples\n",
                  spec.variant.name().c_str(), a.max_abs_error, a.mean_abs_error, a.output_scale, 100 * a.top1_agreement, a.samples);
    }
    std::filesystem::create_directories(std::filesystem::absolute(out).parent_path());
    if (!kept.empty()) std::printf("%s keeps its %zu other table%s; this one is added\n", out.c_str(), kept.size(), kept.size() == 1 ? "" : "s");
    kept.push_back(t);
    write_lut_file(out, kept);  // atomic: the old file stays whole until the new one replaces it
    journal.remove();
    const bool whole = t.has_latency(0, t.num_stages(), 1);  // --ranges stages measures no whole model
    std::printf("wrote %s: %s/%s on %s%s, %d stages, batch 1..%d%s [MEASURED]\n", out.c_str(), model.c_str(), dataset.c_str(),
                t.provenance().attributes.at("cpu").c_str(), o.processor.empty() ? "" : (" (processor " + o.processor + ")").c_str(), t.num_stages(),
                hi, whole ? (", whole model at batch 1: " + strprintf("%.3f", t.mean_seconds(0, t.num_stages(), 1) * 1e3) + " ms").c_str() : "");
    return 0;
  });
}
