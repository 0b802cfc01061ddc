// coinfer-lutfill: the LibTorch half of `coinfer lut fill` (kept out of the simulator's `coinfer`).
// Fills the LUT entries a scenario needs and its LUTs lack with estimates from per-module latency
// regressors (the MEDN paper: LR, MLP, MEDN per op, Algorithm 1's choice) fitted on the measured
// single-stage entries of the scenario's LUTs and on sample sets from `coinfer profile --modules`.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "core/log.hpp"
#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "core/input_error.hpp"
#include "core/lut_fill.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/data_root.hpp"
#include "io/lut_h5.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/module_samples.hpp"
#include "io/scenario_loader.hpp"
#include "models/latency_regressor.hpp"
#include "sched/scheduler_factory.hpp"
#include "cli/scenario_args.hpp"

namespace {

using namespace coinfer;
using models::RegressorKind;

struct FillOptions {
  std::string scenario, out;
  std::vector<std::string> sets, samples, check_against;
  models::RegressorFitOptions fit;
  bool quiet = false;
  std::string command_line;
};

nlohmann::ordered_json score_json(const models::RegressorScore& s) {
  return {{"p10", s.p10}, {"p20", s.p20}, {"mape", s.mape}, {"r2", s.r2}, {"samples", s.samples}};
}

bool is_measured(const LutTable& t) { return t.provenance().kind == "measured" || t.provenance().kind == "imported"; }

// The sample sets named by --samples, read whether or not anything needs filling: a file that is
// missing or malformed is an error, never ignored.
std::vector<std::pair<std::string, ModuleSampleSet>> read_sample_sets(const std::vector<std::string>& files) {
  std::vector<std::pair<std::string, ModuleSampleSet>> sets;
  for (const auto& f : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec))
      throw InputError(SourceLocation{f, 0, 0}, "--samples", std::filesystem::exists(f, ec) ? "is not a file" : "no such file");
    sets.emplace_back(f, read_module_samples(f));
  }
  return sets;
}

using Gaps = std::map<LutKey, std::vector<const LutNeed*>>;

// The gaps: entries the run may consult that are absent (tables, ranges or batch sizes), by the table
// that answers them. Throws InputError when a table's stage count is not its model spec's.
Gaps find_gaps(const std::vector<LutNeed>& needs, const LutSet& luts) {
  Gaps gaps;
  for (const LutNeed& n : needs) {
    if (luts.contains(n.key)) {
      const LutTable& t = luts.table(n.key);
      if (t.num_stages() != n.num_stages)
        throw InputError(SourceLocation{luts.origin(n.key), 0, 0}, n.key.to_string(),
                         "has " + std::to_string(t.num_stages()) + " stages, the model spec " + std::to_string(n.num_stages));
      if (n.table_only) continue;  // it exists: that is all the run asks of it
      if (!n.helper_for.empty() && n.batch > t.max_batch()) continue;
      if (t.has_latency(n.begin, n.end, n.batch)) continue;
      gaps[t.key()].push_back(&n);  // the table that answers the need (its processor named or not: core/lut.hpp)
      continue;
    }
    gaps[n.key].push_back(&n);
  }
  return gaps;
}

// The regressors' training samples: measured single stages of every measured table of a known model,
// and the sample sets given.
struct TrainingSamples {
  std::vector<ModuleSample> samples;
  std::vector<const LutTable*> measured_tables;
  long long from_luts = 0;
};

TrainingSamples training_samples(const LutSet& luts, const ModelCatalog& cat, const std::vector<std::pair<std::string, ModuleSampleSet>>& sets) {
  TrainingSamples ts;
  for (const LutKey& k : luts.keys()) {
    const LutTable& t = luts.table(k);
    if (!is_measured(t)) continue;
    ts.measured_tables.push_back(&t);
    if (!cat.has_model(k.model)) continue;
    const auto& ds = cat.datasets_for(k.model);
    if (std::find(ds.begin(), ds.end(), k.dataset) == ds.end()) continue;
    try {
      for (auto& x : module_samples_from_lut(t, cat.instantiate(k.model, k.dataset))) ts.samples.push_back(std::move(x)), ++ts.from_luts;
    } catch (const std::invalid_argument& e) {
      log::info("lut", "note: LUT " + k.to_string() + " (" + luts.origin(k) + ") gives no samples: " + e.what());
    }
  }
  for (const auto& set : sets)
    for (const auto& x : set.second.samples) ts.samples.push_back(x);
  return ts;
}

// A table's hardware (CPU cores, LibTorch threads): its own when measured, else that of a measured
// table of its device type. Throws InputError naming the file and how to record what it lacks.
MeasurableParams hardware_of(const LutKey& key, const LutSet& luts, const std::vector<const LutTable*>& measured_tables,
                             const std::string& scenario_file) {
  auto params_of = [&](const LutTable& t) -> MeasurableParams {
    try {
      return measurable_params_of(t.provenance());
    } catch (const std::invalid_argument& e) {
      throw InputError(SourceLocation{luts.origin(t.key()), 0, 0}, "luts",
                       "LUT " + t.key().to_string() + " (" + t.provenance().kind + "): " + e.what() +
                           "; lut fill estimates from a table's hardware (CPU cores, LibTorch threads): re-import it with "
                           "coinfer lut import ... --cores N --threads T, or measure with coinfer profile (which records both)");
    }
  };
  if (luts.contains(key) && is_measured(luts.table(key))) return params_of(luts.table(key));
  for (const LutTable* t : measured_tables)
    if (t->key().device_type == key.device_type) return params_of(*t);
  throw InputError(SourceLocation{scenario_file, 0, 0}, "luts",
                   "cannot fill " + key.to_string() + ": no measured LUT of device type " + key.device_type +
                       " says what its hardware offers (cpu cores, threads); profile one model on it first (coinfer profile)");
}

// The chosen regressor inside its op's training range; outside it, LR: a power law in log space
// extrapolates along the law, the networks do not (measured: the MLP predicted fc latencies falling
// with the batch beyond the batch sizes it was trained on). `outside` collects, per op, the features
// predicted outside their training range; it and `model` must outlive the predictor.
ModulePredictor regressor_predictor(const models::ModuleLatencyModel& model, std::map<std::string, std::set<std::string>>& outside) {
  return [&model, &outside](const ModelSpec& spec, int stage, int batch, const MeasurableParams& hw,
                            const std::string& method) -> std::optional<ModulePrediction> {
    const std::string& op = spec.stages[static_cast<size_t>(stage)].op;
    if (!model.has_op(op)) return std::nullopt;
    const std::vector<double> f = module_features(spec, stage, batch, hw);
    const std::vector<std::string> out_of_range = model.outside_training_range(op, f);
    for (const auto& name : out_of_range) outside[op].insert(name);
    const models::ModuleFit& fit = model.fit_of(op);
    RegressorKind kind = out_of_range.empty() ? fit.chosen : RegressorKind::lr;
    if (!method.empty())
      for (RegressorKind k : {RegressorKind::lr, RegressorKind::mlp, RegressorKind::medn})
        if (method.rfind(models::regressor_name(k), 0) == 0) kind = k;
    const models::RegressorScore& held_out = fit.test_scores.at(kind).samples > 0 ? fit.test_scores.at(kind) : fit.validation_scores.at(kind);
    std::string name = models::regressor_name(kind);
    if (kind != fit.chosen) name += " (extrapolating)";
    return ModulePrediction{model.predict_seconds(op, kind, f), held_out.mape, name};
  };
}

// A table made for a gap no measured table answers: the spec's split bytes, marked ESTIMATED.
LutTable estimated_table(const LutKey& key, const ModelSpec& spec, int max_batch, const MeasurableParams& hw) {
  LutTable t(key, spec.num_stages(), max_batch);
  for (int k = 0; k <= spec.num_stages(); ++k) t.bytes_per_split()[k] = spec.bytes_at_split(k);
  t.provenance().kind = "estimated";
  t.provenance().attributes["note"] = "ESTIMATED by coinfer lut fill: no entry of this table was measured";
  t.provenance().attributes["bytes_per_split"] = "the model spec's tensor bytes (models/README.md formulas)";
  t.provenance().attributes["cpu_cap_cores"] = format_double(hw.cpu_cores);
  t.provenance().attributes["threads"] = format_double(hw.threads);
  return t;
}

// What filling the gaps made: every table (filled or not), the filled cells as the report lists them,
// and the count filled per table.
struct FilledTables {
  std::map<LutKey, LutTable> tables;
  nlohmann::ordered_json filled_json = nlohmann::ordered_json::array();
  std::map<LutKey, long long> filled_per_key;
  FillOutcome outcome;
};

FilledTables fill_gaps(const Gaps& gaps, const LutSet& luts, const ModelCatalog& cat, const ModulePredictor& predict, double sum_rule,
                       const TrainingSamples& ts, const FillOptions& o) {
  FilledTables f;
  for (const LutKey& k : luts.keys()) f.tables.emplace(k, luts.table(k));
  for (const auto& [key, list] : gaps) {
    const ModelSpec spec = cat.instantiate(key.model, key.dataset);
    int max_batch = 1;
    for (const LutNeed* n : list) max_batch = std::max(max_batch, n->batch);
    const MeasurableParams hw = hardware_of(key, luts, ts.measured_tables, o.scenario);
    auto it = f.tables.find(key);
    if (it == f.tables.end())
      it = f.tables.emplace(key, estimated_table(key, spec, max_batch, hw)).first;
    else if (max_batch > it->second.max_batch())
      it->second = it->second.with_max_batch(max_batch);
    LutTable& t = it->second;
    const long long before = f.outcome.filled;
    for (const LutNeed* n : list) fill_entry(t, spec, n->begin, n->end, n->batch, hw, predict, sum_rule, f.outcome);
    f.filled_per_key[key] = f.outcome.filled - before;
    for (const auto& [i, j, b] : t.estimated_cells()) {
      const LutTable::Estimate* e = t.estimate(i, j, b);
      f.filled_json.push_back({{"lut", key.to_string()},
                               {"begin", i},
                               {"end", j},
                               {"batch", b},
                               {"mean_s", t.mean_seconds(i, j, b)},
                               {"method", e->method},
                               {"relative_error", e->relative_error}});
    }
    auto& a = t.provenance().attributes;
    a["estimated_entries"] = std::to_string(t.estimated_entries()) +
                             " entries ESTIMATED by coinfer lut fill (per-module regressors; "
                             "each entry's method and held-out error in latency_estimate_*)";
    a["fill_command"] = o.command_line;
    a["fill_samples"] = std::to_string(ts.from_luts) + " measured single-stage entries of the scenario's LUTs" +
                        (o.samples.empty() ? std::string() : " + the sample sets " + join(o.samples));
  }
  return f;
}

// Throws InputError when some entry could not be filled, naming the ops with too few samples.
void refuse_unfillable(const FillOutcome& outcome, const models::ModuleLatencyModel& model, const FillOptions& o) {
  if (outcome.unfillable.empty()) return;
  std::string why = outcome.unfillable.front();
  if (outcome.unfillable.size() > 1) why += " (and " + std::to_string(outcome.unfillable.size() - 1) + " more)";
  std::string ops;
  for (const auto& [op, n] : model.skipped()) ops += (ops.empty() ? "" : ", ") + op + " (" + std::to_string(n) + " samples)";
  throw InputError(SourceLocation{o.scenario, 0, 0}, "luts",
                   "cannot fill " + why + "; ops with too few samples (need " + std::to_string(o.fit.min_samples) +
                       "): " + (ops.empty() ? "none" : ops) + ". Measure samples of that op: coinfer profile --modules N --out samples.csv");
}

// Held-out check: filled entries against measured LUTs the user kept aside (null without
// --check-against). `measured_count` gets how many filled entries were measured there.
nlohmann::ordered_json check_against(const std::map<LutKey, LutTable>& tables, const std::vector<std::string>& files, size_t& measured_count) {
  measured_count = 0;
  if (files.empty()) return nullptr;
  std::vector<double> pred, meas;
  LutSet ref = load_luts(files);
  for (const auto& [key, t] : tables) {
    if (!ref.contains(key)) continue;
    const LutTable& r = ref.table(key);
    for (const auto& [i, j, b] : t.estimated_cells())
      if (r.has_latency(i, j, b) && !r.estimate(i, j, b)) pred.push_back(t.mean_seconds(i, j, b)), meas.push_back(r.mean_seconds(i, j, b));
  }
  measured_count = meas.size();
  nlohmann::ordered_json check = score_json(models::score_predictions(pred, meas));
  check["against"] = files;
  return check;
}

// fill_report.json (described in traces/README.md beside `coinfer lut fill`).
nlohmann::ordered_json fill_report(const FillOptions& o, const TrainingSamples& ts, double sum_rule, const models::ModuleLatencyModel& model,
                                   const std::map<std::string, std::set<std::string>>& outside, const FilledTables& f,
                                   const nlohmann::ordered_json& check) {
  nlohmann::ordered_json report{{"scenario", o.scenario}, {"seed", o.fit.seed}, {"command", o.command_line}};
  report["samples"] = {{"from_lut_single_stages", ts.from_luts}, {"from_files", o.samples}, {"total", ts.samples.size()}};
  report["sum_rule_error"] = sum_rule;
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto& fit : model.fits()) {
    nlohmann::ordered_json j{
        {"op", fit.op}, {"train", fit.train}, {"validation", fit.validation}, {"test", fit.test}, {"chosen", models::regressor_name(fit.chosen)}};
    for (const auto& [k, sc] : fit.test_scores) j["test_scores"][models::regressor_name(k)] = score_json(sc);
    for (const auto& [k, sc] : fit.validation_scores) j["validation_scores"][models::regressor_name(k)] = score_json(sc);
    for (const auto& [k, p] : fit.parameters) j["parameters"][models::regressor_name(k)] = p;
    ops.push_back(j);
  }
  report["ops"] = ops;
  report["skipped_ops"] = model.skipped();
  nlohmann::ordered_json ext = nlohmann::ordered_json::object();
  for (const auto& [op, names] : outside) ext[op] = std::vector<std::string>(names.begin(), names.end());
  report["outside_training_range"] = ext;
  report["filled"] = f.filled_json;
  report["check_against"] = check;
  return report;
}

// The regressors' held-out scores, what was filled and the held-out check, on stdout.
void print_summary(const FillOptions& o, const models::ModuleLatencyModel& model, double sum_rule,
                   const std::map<std::string, std::set<std::string>>& outside, const FilledTables& f, const nlohmann::ordered_json& check,
                   size_t checked) {
  std::printf("per-module latency regressors (held-out test split; P10/P20 = share within 10 %%/20 %%; chosen by Algorithm 1 on validation):\n");
  std::printf("%-10s %6s %6s  %-25s %-25s %-25s %s\n", "op", "train", "test", "lr P10/P20/MAPE", "mlp P10/P20/MAPE", "medn P10/P20/MAPE", "chosen");
  for (const auto& fit : model.fits()) {
    std::string cols[3];
    int c = 0;
    for (RegressorKind k : {RegressorKind::lr, RegressorKind::mlp, RegressorKind::medn}) {
      const auto& sc = fit.test_scores.at(k);
      cols[c++] = format_percent(sc.p10) + "/" + format_percent(sc.p20) + "/" + format_percent(sc.mape);
    }
    std::printf("%-10s %6lld %6lld  %-25s %-25s %-25s %s\n", fit.op.c_str(), fit.train, fit.test, cols[0].c_str(), cols[1].c_str(), cols[2].c_str(),
                models::regressor_name(fit.chosen));
  }
  for (const auto& [op, n] : model.skipped())
    std::printf("%-10s %6lld samples: too few for a regressor (need %d)\n", op.c_str(), n, o.fit.min_samples);
  std::printf("sum rule (a range = the sum of its stages) error on measured tables: %s\n", format_percent(sum_rule).c_str());
  for (const auto& [k, n] : f.filled_per_key) std::printf("filled %lld entries of %s\n", n, k.to_string().c_str());
  for (const auto& [op, names] : outside)
    if (!names.empty())
      log::warn("lut", "op " + op + " predicted outside its training range in " + join(std::vector<std::string>(names.begin(), names.end())) +
                           ": an extrapolation, trust its error less");
  if (!check.is_null())
    std::printf("check against %s: %zu filled entries measured there: P10 %s, P20 %s, MAPE %s\n", join(o.check_against).c_str(), checked,
                format_percent(check["p10"].get<double>()).c_str(), format_percent(check["p20"].get<double>()).c_str(),
                format_percent(check["mape"].get<double>()).c_str());
  std::printf("wrote %s (LUTs with %lld estimated entries, fill_report.json)\nrun with: coinfer run %s --set luts=[%s] --set luts_fill=allow\n",
              o.out.c_str(), f.outcome.filled, o.scenario.c_str(), o.out.c_str());
}

int fill(const FillOptions& o) {
  Scenario s = load_scenario(o.scenario, o.sets);
  cli::check_output_folder(o.out, "--out");
  check_replaceable_output(o.out, "--out");
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  LutSet luts = load_all_scenario_luts(s);  // every type: the regressors learn from every measured table
  const std::vector<LutNeed> needs = lut_entries_needed(s, cat, scheduler_traits(s.scheduler.name));
  const auto sets = read_sample_sets(o.samples);
  const Gaps gaps = find_gaps(needs, luts);
  if (gaps.empty()) {
    std::printf("every LUT entry scenario %s needs is in its LUTs (%s): nothing to fill, nothing written\n", s.name.c_str(), join(s.luts).c_str());
    return 0;
  }
  const TrainingSamples ts = training_samples(luts, cat, sets);
  // Every table to fill needs a measured table of its device type (its hardware): checked before the
  // regressors are trained, so a fill that cannot succeed fails at once.
  for (const auto& gap : gaps) hardware_of(gap.first, luts, ts.measured_tables, o.scenario);
  if (ts.samples.empty())
    throw InputError(SourceLocation{o.scenario, 0, 0}, "luts",
                     "no measured module samples to fit regressors on: the scenario's LUTs hold no measured table of a known "
                     "model and no --samples were given (coinfer profile --modules N --out samples.csv measures some)");

  cli::ProgressLine progress("lut fill", o.quiet);
  const models::ModuleLatencyModel model = models::ModuleLatencyModel::fit(
      ts.samples, o.fit, [&](int done, int all, const std::string& op) { progress.update(done, all, op.empty() ? "fitted" : "fitting " + op); });
  progress.finish();
  const double sum_rule = sum_rule_error(ts.measured_tables);
  std::map<std::string, std::set<std::string>> outside;  // op -> features outside the training range
  const ModulePredictor predict = regressor_predictor(model, outside);
  const FilledTables filled = fill_gaps(gaps, luts, cat, predict, sum_rule, ts, o);
  refuse_unfillable(filled.outcome, model, o);
  size_t checked = 0;
  const nlohmann::ordered_json check = check_against(filled.tables, o.check_against, checked);
  const nlohmann::ordered_json report = fill_report(o, ts, sum_rule, model, outside, filled, check);

  StagedOutput staged(o.out, "--out");
  std::map<std::string, std::vector<LutTable>> by_device;
  for (const auto& [k, t] : filled.tables) by_device[k.device_type].push_back(t);
  for (const auto& [device, list] : by_device) write_lut_file(staged.path(device + ".h5"), list);
  write_text_atomic(staged.path("fill_report.json"), report.dump(2) + "\n");
  staged.commit();
  if (!o.quiet) print_summary(o, model, sum_rule, outside, filled, check, checked);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"coinfer lut fill: estimate the LUT entries a scenario needs and its LUTs lack (per-module regressors, MEDN paper)"};
  app.name("coinfer lut fill");
  FillOptions o;
  cli::add_scenario_args(app, o.scenario, o.sets);
  app.add_option("--out", o.out, "folder for the filled LUTs (one file per device type) and fill_report.json")->required();
  app.add_option("--samples", o.samples, "module sample sets from coinfer profile --modules (repeatable)");
  app.add_option("--check-against", o.check_against, "measured LUT files or folders: compare every filled entry they hold (a held-out check)");
  app.add_option("--seed", o.fit.seed, "seed of the data split and the networks' initial weights (default 1)");
  app.add_option("--epochs", o.fit.epochs, "training epochs of the MLP and MEDN (default 500, as the paper)")->check(CLI::Range(1, 100000));
  app.add_option("--min-samples", o.fit.min_samples, "fewest samples an op needs for a regressor (default 10)")->check(CLI::Range(3, 1000000));
  if (const int rc = coinfer::cli::parse_command_line(app, argc, argv, o.command_line); rc >= 0) return rc;
  o.quiet = coinfer::cli::quiet("lut");
  return coinfer::cli::guarded([&] { return fill(o); });
}
