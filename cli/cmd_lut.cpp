// coinfer lut show | check | import | synth: LUT files (traces/README.md).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/execution_time.hpp"
#include "core/input_error.hpp"
#include "core/lut_synth.hpp"
#include "core/text_util.hpp"
#include "io/device_profile_loader.hpp"
#include "io/lut_csv.hpp"
#include "io/lut_h5.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"

namespace fs = std::filesystem;

namespace coinfer::cli {

namespace {

struct LutOptions {
  std::string file, out, out_dir, source, device, model, dataset, profiles, output_error_from;
  std::vector<std::string> kinds;  // synth: only models whose dataset is of these kinds (empty: all)
  std::string processor;           // synth: which processor of the type ("" = its default)
  int max_batch = 16;
  int min_batch_coverage = 8;
  bool json = false;
  double cores = 0;  // import: CPU cores and LibTorch threads of the measuring machine (lut fill's hardware features)
  int threads = 0;
};

nlohmann::json provenance_json(const Provenance& p) { return {{"kind", p.kind}, {"attributes", p.attributes}}; }

long long entries_with_distributions(const LutTable& t) {
  long long n = 0;
  for (int i = 0; i < t.num_stages(); ++i)
    for (int j = i + 1; j <= t.num_stages(); ++j)
      for (int b = 1; b <= t.max_batch(); ++b) n += t.quantiles(i, j, b) != nullptr;
  return n;
}

// The whole model's distribution at batch 1 at a few levels (ms), for show; empty without one.
std::vector<std::pair<double, double>> whole_model_quantiles_ms(const LutTable& t) {
  std::vector<std::pair<double, double>> out;
  const double* q = t.quantiles(0, t.num_stages(), 1);
  if (!q) return out;
  for (double u : {0.0, 0.05, 0.5, 0.95, 0.99, 1.0}) out.emplace_back(u, quantile_at(t.quantile_levels(), q, u) * 1e3);
  return out;
}

int lut_show(const LutOptions& o) {
  const std::vector<LutTable> tables = read_lut_file(o.file);
  if (o.json) {
    nlohmann::json j{{"file", o.file}, {"tables", nlohmann::json::array()}};
    for (const auto& t : tables) {
      const auto& k = t.key();
      nlohmann::json whole = nlohmann::json::object(), stages = nlohmann::json::array();
      for (int b = 1; b <= t.max_batch(); ++b)
        if (t.has_latency(0, t.num_stages(), b)) whole[std::to_string(b)] = t.mean_seconds(0, t.num_stages(), b) * 1e3;
      for (int st = 0; st < t.num_stages(); ++st)
        stages.push_back(t.has_latency(st, st + 1, 1) ? nlohmann::json(t.mean_seconds(st, st + 1, 1) * 1e3) : nlohmann::json(nullptr));
      j["tables"].push_back(
          {{"device_type", k.device_type},
           {"processor", k.processor},
           {"model", k.model},
           {"dataset", k.dataset},
           {"stages", t.num_stages()},
           {"max_batch", t.max_batch()},
           {"provenance", provenance_json(t.provenance())},
           {"whole_model_mean_ms_by_batch", whole},
           {"stage_mean_ms_batch1", stages},
           {"bytes_per_split", t.bytes_per_split()},
           {"distributions",
            {{"levels", t.has_distributions() ? t.quantile_levels() : std::vector<double>{}}, {"entries", entries_with_distributions(t)}}}});
      nlohmann::json wq = nlohmann::json::object();
      for (const auto& [u, ms] : whole_model_quantiles_ms(t)) wq[format_double(u)] = ms;
      j["tables"].back()["distributions"]["whole_model_batch1_ms"] = wq;
      nlohmann::json wire = nlohmann::json::array();
      for (int k = 0; k <= t.num_stages(); ++k) {
        const double* q = t.wire_bytes_quantiles(k);
        wire.push_back(q ? nlohmann::json{{"median", quantile_at(t.quantile_levels(), q, 0.5)},
                                          {"min", q[0]},
                                          {"max", q[t.quantile_levels().size() - 1]},
                                          {"compress_s", t.wire_compress_seconds(k)},
                                          {"decompress_s", t.wire_decompress_seconds(k)}}
                         : nlohmann::json(nullptr));
      }
      j["tables"].back()["wire_bytes_per_split"] = wire;
      nlohmann::json est = nlohmann::json::array();
      for (const auto& [i, jj, b] : t.estimated_cells()) {
        const LutTable::Estimate* e = t.estimate(i, jj, b);
        est.push_back({{"begin", i},
                       {"end", jj},
                       {"batch", b},
                       {"mean_ms", t.mean_seconds(i, jj, b) * 1e3},
                       {"method", e->method},
                       {"relative_error", e->relative_error}});
      }
      j["tables"].back()["estimated_entries"] = est;
      // Peak memory of the whole model per batch size, and each stage's output sparsity (null: none).
      nlohmann::json peak = nlohmann::json::object(), sparsity = nlohmann::json::array();
      for (int b = 1; b <= t.max_batch(); ++b)
        if (auto m = t.peak_memory(0, t.num_stages(), b)) peak[std::to_string(b)] = *m;
      for (int st = 0; st < t.num_stages(); ++st)
        sparsity.push_back(t.stage_output_sparsity(st) ? nlohmann::json(*t.stage_output_sparsity(st)) : nlohmann::json(nullptr));
      j["tables"].back()["whole_model_peak_memory_bytes_by_batch"] = peak;
      j["tables"].back()["stage_output_sparsity"] = sparsity;
    }
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  // Provenance: what every table shares is printed once; each table then lists only what differs.
  std::map<std::string, std::string> common;
  bool same_kind = !tables.empty();
  if (!tables.empty()) common = tables.front().provenance().attributes;
  for (const auto& t : tables) {
    same_kind = same_kind && t.provenance().kind == tables.front().provenance().kind;
    for (auto it = common.begin(); it != common.end();) {
      auto f = t.provenance().attributes.find(it->first);
      it = (f == t.provenance().attributes.end() || f->second != it->second) ? common.erase(it) : std::next(it);
    }
  }
  if (!tables.empty()) {
    std::printf("%zu tables; common provenance: %s\n", tables.size(), same_kind ? tables.front().provenance().kind.c_str() : "(differs per table)");
    for (const auto& kv : common) std::printf("  %s: %s\n", kv.first.c_str(), kv.second.c_str());
  }
  for (const auto& t : tables) {
    const auto& k = t.key();
    std::printf("%s%s  model %s  dataset %s  stages %d  batch 1..%d\n", k.device_type.c_str(),
                k.processor.empty() ? "" : ("  processor " + k.processor).c_str(), k.model.c_str(), k.dataset.c_str(), t.num_stages(), t.max_batch());
    if (!same_kind) std::printf("  provenance: %s\n", t.provenance().kind.c_str());
    for (const auto& kv : t.provenance().attributes)
      if (!common.count(kv.first)) std::printf("  %s: %s\n", kv.first.c_str(), kv.second.c_str());
    std::printf("  whole model [0,%d):", t.num_stages());
    for (int b : {1, 2, 4, 8, 16})
      if (b <= t.max_batch() && t.has_latency(0, t.num_stages(), b)) std::printf("  b=%d %.3f ms", b, t.mean_seconds(0, t.num_stages(), b) * 1e3);
    std::printf("\n  per stage at batch 1 (ms):");
    for (int st = 0; st < t.num_stages(); ++st)
      std::printf(" %s", t.has_latency(st, st + 1, 1) ? format_double(std::round(t.mean_seconds(st, st + 1, 1) * 1e6) / 1e3).c_str() : "-");
    std::printf("\n  bytes per split (KB):");
    for (double b : t.bytes_per_split()) std::printf(" %.1f", b / 1024);
    if (t.has_distributions()) {
      std::printf("\n  distributions: %lld entries, %zu levels; whole model at batch 1 (ms):", entries_with_distributions(t),
                  t.quantile_levels().size());
      for (const auto& [u, ms] : whole_model_quantiles_ms(t)) std::printf(" q%s %.3f", format_double(u).c_str(), ms);
    } else {
      std::printf("\n  distributions: none (the simulator times every execution with the entry's mean)");
    }
    if (t.has_wire_bytes()) {
      std::printf("\n  wire bytes per request, median (KB):");
      for (int k = 0; k <= t.num_stages(); ++k) {
        const double* q = t.wire_bytes_quantiles(k);
        std::printf(" %s", q ? format_double(std::round(quantile_at(t.quantile_levels(), q, 0.5) / 102.4) / 10).c_str() : "-");
      }
    } else {
      std::printf("\n  wire bytes: none (the simulator sends the model spec's tensor bytes)");
    }
    std::printf("\n  peak memory, whole model (MB):");
    bool any_peak = false;
    for (int b : {1, 2, 4, 8, 16})
      if (auto m = t.peak_memory(0, t.num_stages(), b); m && b <= t.max_batch()) std::printf("  b=%d %.2f", b, *m / 1e6), any_peak = true;
    if (!any_peak) std::printf(" none");
    if (t.has_stage_output_sparsity()) {
      std::printf("\n  stage output sparsity (share of zeros):");
      for (int st = 0; st < t.num_stages(); ++st)
        std::printf(" %s", t.stage_output_sparsity(st) ? format_double(std::round(*t.stage_output_sparsity(st) * 1000) / 1000).c_str() : "-");
    }
    if (t.estimated_entries() > 0) {
      const auto cells = t.estimated_cells();
      const auto& [i, j, b] = cells.front();
      const LutTable::Estimate* e = t.estimate(i, j, b);
      std::printf(
          "\n  ESTIMATED entries: %lld (coinfer lut fill; used only where a scenario says luts_fill: allow); first [%d,%d) batch %d: %s, error %s",
          t.estimated_entries(), i, j, b, e->method.c_str(), format_percent(e->relative_error).c_str());
    }
    std::printf("\n");
  }
  return 0;
}

int lut_upgrade(const LutOptions& o) {
  const int version = lut_file_schema_version(o.file);
  const std::vector<LutTable> tables = read_lut_file(o.file);
  const std::string out = o.out.empty() ? o.file : o.out;
  const int target = lut_schema_version_for(tables);
  if (version == target && out == o.file) {
    std::printf("%s: already schema %d; nothing to do\n", o.file.c_str(), target);
    return 0;
  }
  write_lut_file(out, tables);  // atomic: the old file stays whole until the new one is complete
  std::printf("%s: schema %d -> %d, %zu tables, same numbers; written to %s%s\n", o.file.c_str(), version, target, tables.size(), out.c_str(),
              version < 2 ? " (schema 1 had no distributions: re-profile to get them)" : "");
  return 0;
}

int lut_check(const LutOptions& o) {
  bool gaps = false;
  nlohmann::json report{{"file", o.file}, {"tables", nlohmann::json::array()}};
  for (const auto& t : read_lut_file(o.file)) {
    const auto& k = t.key();
    auto missing = t.latency_gaps();
    int mem_missing = 0;
    for (int i = 0; i < t.num_stages(); ++i)
      for (int j = i + 1; j <= t.num_stages(); ++j) mem_missing += t.peak_memory(i, j) ? 0 : 1;
    const int ranges = t.num_stages() * (t.num_stages() + 1) / 2;
    bool zero_bytes = false;
    for (double b : t.bytes_per_split()) zero_bytes = zero_bytes || !(b > 0);
    if (o.json) {
      nlohmann::json gaps_list = nlohmann::json::array();
      for (const auto& [i, j, b] : missing) gaps_list.push_back({{"begin", i}, {"end", j}, {"batch", b}});
      report["tables"].push_back({{"device_type", k.device_type},
                                  {"processor", k.processor},
                                  {"model", k.model},
                                  {"dataset", k.dataset},
                                  {"ranges", ranges},
                                  {"max_batch", t.max_batch()},
                                  {"latency_gaps", gaps_list},
                                  {"ranges_without_peak_memory", mem_missing},
                                  {"batch_coverage_short", t.max_batch() < o.min_batch_coverage},
                                  {"zero_bytes_per_split", zero_bytes},
                                  {"provenance", provenance_json(t.provenance())}});
      gaps = gaps || !missing.empty() || mem_missing > 0 || t.max_batch() < o.min_batch_coverage || zero_bytes || t.provenance().kind.empty();
      continue;
    }
    std::printf("%s: %d ranges x %d batch sizes, %zu latency gaps, %d ranges without peak memory, provenance %s\n", k.to_string().c_str(), ranges,
                t.max_batch(), missing.size(), mem_missing, t.provenance().kind.c_str());
    size_t shown = 0;
    for (const auto& [i, j, b] : missing) {
      if (shown++ == 20) {
        std::printf("  ... %zu more\n", missing.size() - 20);
        break;
      }
      std::printf("  missing latency [%d,%d) batch %d\n", i, j, b);
    }
    if (t.max_batch() < o.min_batch_coverage)
      std::printf("  batch sizes cover 1..%d only (at least 1..%d expected)\n", t.max_batch(), o.min_batch_coverage);
    if (zero_bytes) std::printf("  some bytes_per_split entries are 0 or missing\n");
    if (t.provenance().kind.empty()) std::printf("  no provenance: say where the numbers came from\n");
    gaps = gaps || !missing.empty() || mem_missing > 0 || t.max_batch() < o.min_batch_coverage || zero_bytes || t.provenance().kind.empty();
  }
  if (o.json) {
    report["complete"] = !gaps;
    std::printf("%s\n", report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return gaps ? 1 : 0;
  }
  std::printf(gaps ? "gaps found\n" : "complete\n");
  return gaps ? 1 : 0;
}

int lut_import(const LutOptions& o) {
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  auto tables = import_lut_csv(o.file, cat, o.source);
  // What `lut fill` needs to estimate entries of this device type from these measurements.
  for (auto& t : tables) {
    if (o.cores > 0) t.provenance().attributes["cores"] = format_double(o.cores);
    if (o.threads > 0) t.provenance().attributes["threads"] = std::to_string(o.threads);
  }
  write_lut_file(o.out, tables);
  std::printf("wrote %s (%zu tables, provenance: imported)\n", o.out.c_str(), tables.size());
  return 0;
}

// The processor an efficiency_from names: "TYPE" (its default processor) or "TYPE.PROCESSOR" (the
// loader checked that it exists).
const ProcessorProfile& processor_named(const std::map<std::string, DeviceProfile>& all, const std::string& ref) {
  const auto dot = ref.find('.');
  return *all.at(ref.substr(0, dot)).processor(dot == std::string::npos ? "" : ref.substr(dot + 1));
}

double efficiency_of(const std::string& where, const ProcessorProfile& p, const std::map<std::string, DeviceProfile>& all, const ModelCatalog& cat,
                     std::string& how, int depth = 0) {
  if (depth > 4) throw InputError("efficiency_from chain too long at " + where);
  if (p.operator_classes) {
    how = "none: rates per operator class (" + p.operator_classes->source + ")";
    return 1;
  }
  if (p.efficiency) {
    how = "assumed: " + format_double(*p.efficiency) + " of peak" + (p.efficiency_note.empty() ? "" : " (" + p.efficiency_note + ")");
    return *p.efficiency;
  }
  if (p.calibration) {
    const auto& c = *p.calibration;
    double eta = calibrate_efficiency(cat.instantiate(c.model, c.dataset), p, c.whole_model_ms);
    how = "calibrated so that " + c.model + "/" + c.dataset + " runs whole on " + where + " in " + format_double(c.whole_model_ms) +
          " ms at batch 1 (" + c.source + ")";
    return eta;
  }
  std::string inner;
  double eta = efficiency_of(p.efficiency_from, processor_named(all, p.efficiency_from), all, cat, inner, depth + 1);
  how = "copied from " + p.efficiency_from + ", whose efficiency was " + inner;
  return eta;
}

int lut_synth(const LutOptions& o) {
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  const std::string profiles_file = o.profiles.empty() ? data_path("traces/devices.yaml") : o.profiles;
  auto profiles = load_device_profiles(profiles_file);
  std::vector<std::string> types;
  if (o.device == "all") {
    for (const auto& kv : profiles) types.push_back(kv.first);
  } else {
    if (!profiles.count(o.device)) {
      std::vector<std::string> known;
      for (const auto& kv : profiles) known.push_back(kv.first);
      throw InputError(SourceLocation{profiles_file, 0, 0}, "--device", "unknown device type '" + o.device + "' (profiles: " + join(known) + ")");
    }
    types.push_back(o.device);
  }
  if (types.size() > 1 && o.out_dir.empty()) throw InputError(SourceLocation{"--out-dir", 0, 0}, "--out-dir", "needed with --device all");
  if (types.size() == 1 && o.out.empty() && o.out_dir.empty())
    throw InputError(SourceLocation{"--out", 0, 0}, "--out", "give --out FILE or --out-dir DIR");
  if (!o.out_dir.empty()) fs::create_directories(o.out_dir);
  SynthOptions so;
  so.max_batch = o.max_batch;
  // Documented output errors of measured variants, by (model@variant, dataset).
  std::map<std::pair<std::string, std::string>, Provenance> errors;
  if (!o.output_error_from.empty()) {
    for (const LutTable& t : read_lut_file(o.output_error_from))
      if (t.provenance().attributes.count("output_mean_abs_error") && t.provenance().attributes.count("output_mean_abs"))
        errors[{t.key().model, t.key().dataset}] = t.provenance();
    if (errors.empty())
      throw InputError(SourceLocation{o.output_error_from, 0, 0}, "--output-error-from",
                       "no table in it documents an output error (coinfer profile --variant writes them)");
  }
  struct File {
    std::string path;
    std::vector<LutTable> tables;
    std::string message;
  };
  std::vector<File> files;
  for (const auto& type : types) {
    const DeviceProfile& p = profiles.at(type);
    const ProcessorProfile* proc = p.processor(o.processor);
    if (!proc) {
      std::vector<std::string> names;
      for (const auto& x : p.processors) names.push_back(x.name);
      throw InputError(SourceLocation{profiles_file, 0, 0}, "--processor",
                       "device type " + type + " has no processor '" + o.processor + "' (its processors: " + join(names) + ")");
    }
    // Its default processor keeps the type's plain name in messages (the efficiency text of old LUTs).
    const std::string where = proc->name == p.default_processor ? type : type + "." + proc->name;
    std::string how;
    const double eta = efficiency_of(where, *proc, profiles, cat, how);
    std::vector<LutTable> tables;
    // A model with a variant ("gcn@int8") is synthesised from the variant's spec: its FLOPs, bytes and
    // memory (models/README.md "Variants"); the formula has no INT8 speed-up of its own.
    std::vector<std::string> names = cat.model_names();
    if (o.model.find('@') != std::string::npos) names = {o.model};
    for (const auto& model : names) {
      if (!o.model.empty() && model != o.model) continue;
      for (const auto& ds : cat.datasets_for(model)) {
        if (!o.dataset.empty() && ds != o.dataset) continue;
        ModelSpec spec;
        try {
          spec = cat.instantiate(model, ds);
        } catch (const InputError& e) {
          throw InputError(SourceLocation{"--model", 0, 0}, "--model", e.what());
        }
        if (!o.kinds.empty() && std::find(o.kinds.begin(), o.kinds.end(), spec.dataset.kind) == o.kinds.end()) continue;
        tables.push_back(synthesise_lut(spec, p, *proc, eta, how, so));
        tables.back().provenance().attributes["profiles_file"] = profiles_file;
        if (!spec.variant.is_default())
          tables.back().provenance().attributes["variant"] =
              spec.variant.name() + " (roofline of the variant's FLOPs and bytes; INT8 arithmetic at the fp32 rate: no measured speed-up)";
        auto e = errors.find({spec.name, ds});
        if (e != errors.end()) {
          auto& at = tables.back().provenance().attributes;
          for (const char* k : {"output_max_abs_error", "output_mean_abs_error", "output_mean_abs", "output_top1_agreement", "output_error_samples"})
            if (e->second.attributes.count(k)) at[k] = e->second.attributes.at(k);
          const auto& src = e->second.attributes;
          at["output_error_source"] = "copied from " + o.output_error_from + " (measured on " +
                                      (src.count("cpu") ? src.at("cpu") : std::string("?")) + " by coinfer profile --variant" +
                                      (src.count("date") ? ", " + src.at("date") : std::string()) + ")";
        }
      }
    }
    if (tables.empty()) throw InputError(SourceLocation{"--model", 0, 0}, "--model", "no model/dataset matches");
    // A table the LUT reader would refuse is not written (e.g. a stage faster than the readers' 1e-7 s
    // floor on a processor with neither a stage overhead nor a launch cost).
    for (const LutTable& t : tables) {
      try {
        t.check_values();
      } catch (const std::invalid_argument& e) {
        throw InputError(SourceLocation{profiles_file, 0, 0}, "--device",
                         where + ": the synthesised table " + t.key().model + "/" + t.key().dataset + " would not load: " + e.what() +
                             " (a processor this fast needs a stage_overhead_ms or an operator_classes launch_us: traces/README.md)");
      }
    }
    const std::string path = o.out_dir.empty() ? o.out : (fs::path(o.out_dir) / (type + ".h5")).string();
    char line[1024];
    if (proc->operator_classes)
      std::snprintf(line, sizeof line, "wrote %s: %zu tables, processor %s, %s [SYNTHESISED, not measured]\n", path.c_str(), tables.size(),
                    proc->name.c_str(), how.c_str());
    else
      std::snprintf(line, sizeof line, "wrote %s: %zu tables, processor %s, efficiency %.4f (%s) [SYNTHESISED, not measured]\n", path.c_str(),
                    tables.size(), proc->name.c_str(), eta, how.c_str());
    files.push_back({path, std::move(tables), line});
  }
  // Written only once every type's tables are made and checked: no partial output.
  for (const auto& f : files) {
    write_lut_file(f.path, f.tables);
    std::fputs(f.message.c_str(), stdout);
  }
  return 0;
}

}  // namespace

void register_lut(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("lut", "LUT files: show, check, upgrade, import measurements, synthesise, fill gaps");
  cmd->require_subcommand(1);
  auto o = std::make_shared<LutOptions>();
  register_lut_fill(*cmd, exit_code);
  CLI::App* sh = cmd->add_subcommand("show", "print a LUT file's tables and provenance");
  sh->add_option("file", o->file, "LUT file (.h5)")->required();
  sh->add_flag("--json", o->json, "print one JSON document instead of text");
  sh->callback([o, &exit_code] { exit_code = guarded([&] { return lut_show(*o); }); });

  CLI::App* ck = cmd->add_subcommand("check", "report gaps: missing ranges/batch sizes, memory, provenance (exit 1 if any)");
  ck->add_option("file", o->file, "LUT file (.h5)")->required();
  ck->add_option("--min-batch", o->min_batch_coverage, "batch sizes 1..N expected (default 8)");
  ck->add_flag("--json", o->json, "print one JSON document instead of text (exit code as without)");
  ck->callback([o, &exit_code] { exit_code = guarded([&] { return lut_check(*o); }); });

  CLI::App* up = cmd->add_subcommand("upgrade", "rewrite an older LUT file in the current schema (traces/README.md, migration)");
  up->add_option("file", o->file, "LUT file (.h5)")->required();
  up->add_option("--out", o->out, "write here instead of replacing the file");
  up->callback([o, &exit_code] { exit_code = guarded([&] { return lut_upgrade(*o); }); });

  CLI::App* im = cmd->add_subcommand("import", "build a LUT from your measurements (CSV, columns in traces/README.md)");
  im->add_option("csv", o->file, "CSV file")->required();
  im->add_option("--out", o->out, "LUT file to write")->required();
  im->add_option("--source", o->source, "where the numbers come from (board, threads, date, tool)")->required();
  im->add_option("--cores", o->cores, "CPU cores the measuring machine had (recorded; coinfer lut fill needs it to estimate from this LUT)")
      ->check(CLI::Range(0.01, 4096.0));
  im->add_option("--threads", o->threads, "LibTorch threads the measurements ran with (recorded; lut fill needs it)")->check(CLI::Range(1, 4096));
  im->callback([o, &exit_code] { exit_code = guarded([&] { return lut_import(*o); }); });

  CLI::App* sy = cmd->add_subcommand("synth", "synthesise a LUT from model specs and a device profile (roofline formula; NOT a measurement)");
  sy->add_option("--device", o->device, "device type from the profiles file, or 'all'")->required();
  sy->add_option("--processor", o->processor,
                 "which of the type's processors (traces/devices.yaml; default: the type's default_processor, e.g. a Jetson's gpu)");
  sy->add_option("--model", o->model, "only this model (default: all)");
  sy->add_option("--dataset", o->dataset, "only this dataset (default: all of the model's)");
  sy->add_option("--kinds", o->kinds, "only models on datasets of these kinds (graph, point_cloud, image; default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"graph", "point_cloud", "image"}));
  sy->add_option("--out", o->out, "output file (one device type)");
  sy->add_option("--out-dir", o->out_dir, "output folder: writes TYPE.h5 per device type");
  sy->add_option("--profiles", o->profiles, "device profiles (default: traces/devices.yaml)");
  sy->add_option("--max-batch", o->max_batch, "batch sizes 1..N (default 16)")->check(CLI::Range(1, 256));
  sy->add_option("--output-error-from", o->output_error_from,
                 "a LUT file measured by coinfer profile --variant: copies each variant's documented output error (a property "
                 "of the operators and weights, not of the hardware) into the synthesised table of the same model@variant and "
                 "dataset, saying where it came from, so a scheduler may choose the variant (scheduler.max_output_error)");
  sy->callback([o, &exit_code] { exit_code = guarded([&] { return lut_synth(*o); }); });
}

}  // namespace coinfer::cli
