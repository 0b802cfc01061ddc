// coinfer-predictor: the LibTorch half of `coinfer predictor` (kept out of the simulator's `coinfer`).
//   train SAMPLES.h5... --out MODEL   the GIN system and relative predictors (sched/gin_predictor.hpp)
//   eval  SAMPLES.h5... --model M...  their accuracy beside the analytic estimator's (ACE-GNN Fig. 18)
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/predictor_samples.hpp"
#include "sched/gin_predictor.hpp"

namespace {

using namespace coinfer;
namespace fs = std::filesystem;

struct Filter {
  std::vector<std::string> exclude_types, exclude_models, require_types, require_models;
  bool measured_only = false, simulated_only = false;
  long long limit = 0;  // keep the samples of the first systems (in a seeded random order) up to this many samples
  std::uint64_t seed = 1;
};

bool mentions(const std::string& csv, const std::string& item) {
  std::stringstream ss(csv);
  std::string x;
  while (std::getline(ss, x, ','))
    if (x == item) return true;
  return false;
}

struct Loaded {
  std::vector<TrainingSample> samples;
  std::vector<double> analytic;  // the analytic estimator's throughput per sample
  std::vector<bool> measured;
  std::vector<std::string> provenance;
};

// Reads the sample files (system ids made distinct across files) and applies the filter.
Loaded load(const std::vector<std::string>& files, const Filter& f) {
  Loaded out;
  std::vector<TrainingSample> all;
  std::vector<double> analytic;
  std::vector<bool> measured;
  std::int64_t base = 0;
  for (const auto& file : files) {
    const PredictorSampleSet set = read_predictor_samples(file);
    out.provenance.push_back(file + ": " + set.provenance);
    std::int64_t top = 0;
    for (const auto& s : set.samples) {
      top = std::max(top, s.system + 1);
      bool keep = !(f.measured_only && !s.measured) && !(f.simulated_only && s.measured);
      for (const auto& t : f.exclude_types) keep = keep && !mentions(s.device_types, t);
      for (const auto& m : f.exclude_models) keep = keep && !mentions(s.models, m);
      if (!f.require_types.empty()) {
        bool any = false;
        for (const auto& t : f.require_types) any = any || mentions(s.device_types, t);
        keep = keep && any;
      }
      if (!f.require_models.empty()) {
        bool any = false;
        for (const auto& m : f.require_models) any = any || mentions(s.models, m);
        keep = keep && any;
      }
      if (!keep) continue;
      TrainingSample t;
      t.graph.types = s.node_type, t.graph.latency_ms = s.node_latency_ms, t.graph.settings = s.node_settings;
      t.graph.hint_ms = s.analytic_throughput_rps > 0 ? 1e3 / s.analytic_throughput_rps : 0;
      t.graph.edges = s.edges;
      t.throughput_rps = s.throughput_rps;
      t.system = base + s.system;
      t.device_types = s.device_types, t.models = s.models;
      all.push_back(std::move(t));
      analytic.push_back(s.analytic_throughput_rps);
      measured.push_back(s.measured);
    }
    base += top;
  }
  std::vector<size_t> keep(all.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = i;
  if (f.limit > 0 && static_cast<long long>(all.size()) > f.limit) {
    // Whole systems in a seeded random order until the limit is reached (pairs stay within systems).
    std::vector<std::int64_t> systems;
    for (const auto& s : all)
      if (std::find(systems.begin(), systems.end(), s.system) == systems.end()) systems.push_back(s.system);
    RandomStream r(f.seed, StreamPurpose::predictor_training, 2);
    for (size_t i = systems.size(); i > 1; --i) std::swap(systems[i - 1], systems[static_cast<size_t>(r.next_u64() % i)]);
    std::set<std::int64_t> chosen;
    long long count = 0;
    for (auto s : systems) {
      if (count >= f.limit) break;
      chosen.insert(s);
      for (const auto& x : all) count += x.system == s;
    }
    keep.clear();
    for (size_t i = 0; i < all.size(); ++i)
      if (chosen.count(all[i].system)) keep.push_back(i);
  }
  for (size_t i : keep) {
    out.samples.push_back(all[i]);
    out.analytic.push_back(analytic[i]);
    out.measured.push_back(measured[i]);
  }
  return out;
}

void add_filter_options(CLI::App& app, Filter& f) {
  app.add_option("--exclude-device-types", f.exclude_types, "leave out samples with any of these device types (held-out systems)");
  app.add_option("--exclude-models", f.exclude_models, "leave out samples with any of these MODEL/DATASET pairs");
  app.add_option("--device-types", f.require_types, "keep only samples with one of these device types");
  app.add_option("--models", f.require_models, "keep only samples with one of these MODEL/DATASET pairs");
  app.add_flag("--measured-only", f.measured_only, "keep only testbed-measured samples");
  app.add_flag("--simulated-only", f.simulated_only, "keep only simulated samples");
  app.add_option("--limit", f.limit, "keep whole systems, in a seeded random order, up to this many samples");
}

std::string pc(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", 100 * v);
  return b;
}

struct TrainOptions {
  std::vector<std::string> samples;
  std::string out, layout = "paper", normalisation = "log_minmax", only, command_line, json_out;
  GinConfig config;
  GinTrainOptions train;
  Filter filter;
  bool quiet = false;
};

int train(TrainOptions& o) {
  if (o.layout == "paper")
    o.config.layout = kFeatureLayoutPaper;
  else if (o.layout == "hint")
    o.config.layout = kFeatureLayoutHint;
  else
    throw InputError(SourceLocation{"--layout", 0, 0}, "--layout", "'" + o.layout + "' is not allowed (paper, hint)");
  if (o.normalisation == "log_minmax")
    o.config.normalisation = FeatureNormalisation::Kind::log_minmax;
  else if (o.normalisation == "minmax")
    o.config.normalisation = FeatureNormalisation::Kind::minmax;
  else if (o.normalisation == "zscore")
    o.config.normalisation = FeatureNormalisation::Kind::zscore;
  else
    throw InputError(SourceLocation{"--normalisation", 0, 0}, "--normalisation",
                     "'" + o.normalisation + "' is not allowed (log_minmax, minmax, zscore)");
  if (o.config.aggregation != "add" && o.config.aggregation != "mean" && o.config.aggregation != "max")
    throw InputError(SourceLocation{"--aggregation", 0, 0}, "--aggregation", "'" + o.config.aggregation + "' is not allowed (add, mean, max)");
  if (!o.only.empty() && o.only != "system" && o.only != "relative")
    throw InputError(SourceLocation{"--only", 0, 0}, "--only", "'" + o.only + "' is not allowed (system, relative)");
  o.train.system = o.only != "relative";
  o.train.relative = o.only != "system";
  o.filter.seed = o.train.seed;
  const Loaded data = load(o.samples, o.filter);
  if (data.samples.size() < 4)
    throw InputError(SourceLocation{o.samples.front(), 0, 0}, "",
                     std::to_string(data.samples.size()) + " samples after the filters; at least 4 are needed");
  cli::check_output_folder(fs::path(fs::absolute(o.out)).parent_path().string(), "--out");
  cli::ProgressLine progress("train", o.quiet, 10);
  o.train.progress = [&](const std::string& which, int epoch, double train_loss, double val_loss) {
    const bool sys = which == "system";
    progress.update(epoch, o.train.epochs,
                    which + " predictor epoch " + std::to_string(epoch) + ": " +
                        (sys ? "|log error| " + format_double(train_loss) + ", validation " + format_double(val_loss)
                             : "cross-entropy " + format_double(train_loss) + ", validation " + format_double(val_loss)));
  };
  std::ostringstream prov;
  prov << "trained by `" << o.command_line << "` on " << data.samples.size() << " samples (" << join(data.provenance, "; ") << ")";
  if (!o.quiet)
    log::info("train", strprintf("%zu samples, %s layout, hidden %d, %d GIN layers, %s aggregation, %s normalisation", data.samples.size(),
                                 o.config.layout.c_str(), o.config.hidden, o.config.layers, o.config.aggregation.c_str(), o.normalisation.c_str()));
  GinPredictor p = GinPredictor::train(data.samples, o.config, o.train, prov.str());
  progress.finish();
  p.save(o.out);
  const auto& m = p.meta();
  // The file's metadata with the held-out 30 %'s accuracy (validation: within_10, within_20, mape, pairwise,
  // pairs), machine-readable: coinfer reproduce ace-gnn/fig18 reads it.
  if (!o.json_out.empty()) write_text_atomic(o.json_out, nlohmann::json::parse(p.meta_json_text()).dump(2) + "\n");
  if (!o.quiet) {
    std::printf("wrote %s: %lld training and %lld validation samples, %lld training pairs\n", o.out.c_str(), m.train_samples, m.validation_samples,
                m.train_pairs);
    std::printf("validation (held-out 30 %%): within 10 %% %s, within 20 %% %s, MAPE %s, pairwise ranking %s (%lld pairs)\n",
                m.has_system ? pc(m.validation.within_10).c_str() : "-", m.has_system ? pc(m.validation.within_20).c_str() : "-",
                m.has_system ? pc(m.validation.mape).c_str() : "-", pc(m.validation.pairwise).c_str(), m.validation.pairs);
  }
  return 0;
}

struct EvalOptions {
  std::vector<std::string> samples, models;
  std::string json_out;
  Filter filter;
};

int eval(const EvalOptions& o) {
  std::vector<GinPredictor> predictors;
  for (const auto& m : o.models) predictors.push_back(GinPredictor::load(m));
  const Loaded data = load(o.samples, o.filter);
  if (data.samples.empty()) throw InputError(SourceLocation{o.samples.front(), 0, 0}, "", "no samples after the filters");
  const auto pairs = ranking_pairs(data.samples);
  nlohmann::ordered_json out = {
      {"samples", data.samples.size()}, {"pairs", pairs.size()}, {"sample_files", o.samples}, {"rows", nlohmann::ordered_json::array()}};
  auto row = [&](const std::string& name, const PredictorAccuracy& a, bool has_thr, const std::string& note) {
    std::printf("| %s | %s | %s | %s | %s (%lld pairs) |%s\n", name.c_str(), has_thr ? pc(a.within_10).c_str() : "-",
                has_thr ? pc(a.within_20).c_str() : "-", has_thr ? pc(a.mape).c_str() : "-", pc(a.pairwise).c_str(), a.pairs,
                note.empty() ? "" : (" " + note).c_str());
    out["rows"].push_back({{"estimator", name},
                           {"within_10", has_thr ? a.within_10 : NAN},
                           {"within_20", has_thr ? a.within_20 : NAN},
                           {"mape", has_thr ? a.mape : NAN},
                           {"pairwise", a.pairwise},
                           {"pairs", a.pairs},
                           {"note", note}});
  };
  std::printf("%zu samples, %zu ranking pairs (one system, throughputs more than 1 %% apart)\n\n", data.samples.size(), pairs.size());
  std::printf("| estimator | within 10 %% | within 20 %% | MAPE | pairwise ranking |\n|---|---|---|---|---|\n");
  {
    std::vector<double> better;
    for (const auto& [i, j] : pairs) better.push_back(data.analytic[i] > data.analytic[j] ? 1.0 : data.analytic[i] < data.analytic[j] ? 0.0 : 0.5);
    row("analytic", accuracy(data.samples, data.analytic, pairs, better), true, "");
  }
  std::vector<const GraphInput*> graphs;
  for (const auto& s : data.samples) graphs.push_back(&s.graph);
  for (size_t k = 0; k < predictors.size(); ++k) {
    const GinPredictor& p = predictors[k];
    std::vector<double> thr(data.samples.size(), 0);
    for (size_t start = 0; start < graphs.size() && p.meta().has_system; start += 512) {
      std::vector<const GraphInput*> chunk(graphs.begin() + static_cast<long>(start),
                                           graphs.begin() + static_cast<long>(std::min(graphs.size(), start + 512)));
      const auto t = p.throughput(chunk);
      std::copy(t.begin(), t.end(), thr.begin() + static_cast<long>(start));
    }
    std::vector<double> better;
    for (size_t start = 0; start < pairs.size(); start += 512) {
      std::vector<std::pair<const GraphInput*, const GraphInput*>> chunk;
      for (size_t q = start; q < std::min(pairs.size(), start + 512); ++q) chunk.emplace_back(graphs[pairs[q].first], graphs[pairs[q].second]);
      const auto b = p.better_probability(chunk);
      better.insert(better.end(), b.begin(), b.end());
    }
    // How many samples lie outside the predictor's training range.
    long long outside = 0;
    for (const auto& s : data.samples) {
      std::vector<std::string> types, models;
      std::stringstream a(s.device_types), b(s.models);
      for (std::string x; std::getline(a, x, ',');) types.push_back(x);
      for (std::string x; std::getline(b, x, ',');) models.push_back(x);
      outside += !p.range_warnings(s.graph, types, models).empty();
    }
    std::string note = std::string(p.meta().config.layout == kFeatureLayoutHint ? "hint layout" : "paper layout") + ", " +
                       p.meta().config.aggregation + ", " + normalisation_name(p.meta().config.normalisation) +
                       (p.meta().has_relative ? "" : ", ranking by the system predictor");
    if (outside > 0) note += "; " + std::to_string(outside) + " samples outside its training range";
    row(fs::path(o.models[k]).filename().string(), accuracy(data.samples, thr, pairs, better), p.meta().has_system, note);
  }
  if (!o.json_out.empty()) write_text_atomic(o.json_out, out.dump(2) + "\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"coinfer predictor: ACE-GNN's learned system predictors (GIN) — train and evaluate"};
  app.name("coinfer predictor");
  app.require_subcommand(1);
  TrainOptions t;
  CLI::App* tr = app.add_subcommand("train", "train the system-throughput and relative predictors on sample sets (coinfer predictor samples)");
  tr->add_option("samples", t.samples, "sample sets (samples.h5)")->required();
  tr->add_option("--out", t.out, "model file to write (e.g. predictor.pt)")->required();
  tr->add_option("--layout", t.layout, "features: paper (ACE-GNN's node latencies, default) or hint (plus the analytic estimator's prediction)");
  tr->add_option("--hidden", t.config.hidden, "GIN hidden width (default 512, the paper's)")->check(CLI::Range(1, 8192));
  tr->add_option("--layers", t.config.layers, "GIN layers (default 2, the paper's)")->check(CLI::Range(1, 16));
  tr->add_option("--aggregation", t.config.aggregation, "add (default, the paper's), mean or max");
  tr->add_option("--normalisation", t.normalisation, "log_minmax (default, the paper's equation 1), minmax or zscore");
  tr->add_option("--only", t.only, "train only the system or only the relative predictor");
  tr->add_option("--epochs", t.train.epochs, "most epochs (default 200)")->check(CLI::Range(1, 100000));
  tr->add_option("--patience", t.train.patience, "early stopping: epochs without a better validation loss (default 20)")
      ->check(CLI::Range(1, 100000));
  tr->add_option("--batch", t.train.batch_size, "graphs or pairs per step (default 64)")->check(CLI::Range(1, 100000));
  tr->add_option("--pairs-per-epoch", t.train.pairs_per_epoch, "relative pairs drawn per epoch (default 4096)")->check(CLI::Range(1, 10000000));
  tr->add_option("--lr", t.train.learning_rate, "Adam learning rate (default 0.001)")->check(CLI::Range(1e-7, 1.0));
  tr->add_option("--seed", t.train.seed, "seed of the split, the weights and the batches (default 1)");
  tr->add_option("--json", t.json_out, "also write the held-out 30 %'s accuracy as JSON to this file");
  tr->add_option("--threads", t.train.threads, "intra-op threads (default 1; results are reproducible for a seed and thread count)")
      ->check(CLI::Range(1, 256));
  add_filter_options(*tr, t.filter);
  EvalOptions e;
  CLI::App* ev = app.add_subcommand("eval", "accuracy of predictors and of the analytic estimator on sample sets (ACE-GNN Fig. 18)");
  ev->add_option("samples", e.samples, "sample sets (samples.h5)")->required();
  ev->add_option("--model", e.models, "a trained predictor file (repeatable); without, only the analytic estimator");
  ev->add_option("--json", e.json_out, "also write the table as JSON to this file");
  add_filter_options(*ev, e.filter);
  if (const int rc = coinfer::cli::parse_command_line(app, argc, argv, t.command_line); rc >= 0) return rc;
  t.quiet = coinfer::cli::quiet("train");
  if (tr->parsed()) return coinfer::cli::guarded([&] { return train(t); });
  return coinfer::cli::guarded([&] { return eval(e); });
}
