// coinfer model list | show NAME: the stages of a model spec, bytes per split, PP_comm and PP_comp.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/execution_time.hpp"
#include "core/input_error.hpp"
#include "core/lut_synth.hpp"
#include "core/text_util.hpp"
#include "io/lut_repository.hpp"
#include "io/data_root.hpp"
#include "io/device_profile_loader.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::cli {

namespace {

struct ModelOptions {
  std::string name, dataset, luts;
  bool json = false;
  bool operators = false;
  std::string on, profiles;  // --on TYPE[.PROCESSOR] (a processor with operator classes) and its profiles file
};

// The processor `--on` names ("TYPE" = its default processor, or "TYPE.PROCESSOR") in the profiles
// file; it must be priced by operator classes (a roofline has no per-operator times).
ProcessorProfile class_processor(const ModelOptions& o) {
  const std::string file = o.profiles.empty() ? data_path("traces/devices.yaml") : o.profiles;
  const auto profiles = load_device_profiles(file);
  const auto dot = o.on.find('.');
  const std::string type = o.on.substr(0, dot), name = dot == std::string::npos ? "" : o.on.substr(dot + 1);
  const auto it = profiles.find(type);
  const ProcessorProfile* p = it == profiles.end() ? nullptr : it->second.processor(name);
  if (!p) throw InputError(SourceLocation{"--on", 0, 0}, "--on", "no processor '" + o.on + "' in " + file + " (TYPE or TYPE.PROCESSOR)");
  if (!p->operator_classes)
    throw InputError(
        SourceLocation{"--on", 0, 0}, "--on",
        "'" + o.on + "' is priced by its roofline, not per operator class (traces/README.md \"Operator classes\"): no time per operator");
  return *p;
}

struct PpCompRow {
  std::string device, server;
  int split;
  double device_ms, server_ms;
};

// PP_comp for every (device LUT, server LUT) pair of this model in `luts` (server = role "server").
std::vector<PpCompRow> pp_comp_rows(const ModelSpec& m, const LutSet* luts) {
  std::vector<PpCompRow> rows;
  if (!luts) return rows;
  std::vector<std::string> devices, servers;
  for (const auto& key : luts->keys()) {
    if (key.model != m.name || key.dataset != m.dataset.name) continue;
    const auto& t = luts->table(key);
    (t.provenance().attributes.count("role") && t.provenance().attributes.at("role") == "server" ? servers : devices).push_back(key.device_type);
  }
  const ExecutionTimeModel& time = lut_mean_time();
  for (const auto& d : devices)
    for (const auto& sv : servers) {
      const auto& dl = luts->table({d, m.name, m.dataset.name});
      const auto& sl = luts->table({sv, m.name, m.dataset.name});
      const int k = m.pp_comp([&](int a, int b) { return time.seconds(dl, a, b, 1); }, [&](int a, int b) { return time.seconds(sl, a, b, 1); });
      rows.push_back({d, sv, k, time.seconds(dl, 0, k, 1) * 1e3, time.seconds(sl, k, m.num_stages(), 1) * 1e3});
    }
  return rows;
}

// With `on` (a processor priced by operator classes), each operator's and each stage's seconds on it
// at batch 1 ("seconds_on"), as the text form prints them.
nlohmann::json model_json(const ModelSpec& m, const LutSet* luts, const ProcessorProfile* on) {
  nlohmann::json stages = nlohmann::json::array(), bytes = nlohmann::json::array(), pp = nlohmann::json::array();
  for (size_t k = 0; k < m.stages.size(); ++k) {
    const auto& st = m.stages[k];
    // Memory per sample (models/README.md "Peak memory of a range"): what the simulator charges.
    stages.push_back({{"name", st.name},
                      {"op", st.op},
                      {"in", st.in_width},
                      {"out", st.out_width},
                      {"flops", st.flops},
                      {"out_bytes", st.out_bytes},
                      {"weight_bytes", st.weight_bytes},
                      {"workspace_bytes", st.workspace_bytes},
                      {"message_bytes", st.message_bytes},
                      {"memory_bytes", st.memory_bytes},
                      {"peak_memory_bytes", m.peak_memory_bytes(static_cast<int>(k), static_cast<int>(k) + 1)}});
    nlohmann::json ops = nlohmann::json::array();
    for (const OperatorCost& o : st.operators) {
      ops.push_back({{"class", kOperatorClassNames.name(o.cls)}, {"what", o.what}, {"flops", o.flops}, {"bytes", o.bytes}, {"launches", o.launches}});
      if (on) ops.back()["seconds_on"] = operator_seconds(o, *on, 1);
    }
    stages.back()["operators"] = ops;
    if (on) stages.back()["seconds_on"] = synth_stage_seconds(st, *on, 1, 1);
  }
  for (int k = 0; k <= m.num_stages(); ++k) bytes.push_back(m.bytes_at_split(k));
  for (const auto& r : pp_comp_rows(m, luts))
    pp.push_back({{"device_type", r.device}, {"server_type", r.server}, {"split", r.split}, {"device_ms", r.device_ms}, {"server_ms", r.server_ms}});
  return {{"model", m.name},
          {"spec", m.file},
          {"dataset",
           {{"name", m.dataset.name},
            {"task", m.dataset.task},
            {"nodes", m.dataset.nodes},
            {"edges", m.dataset.edges},
            {"features", m.dataset.features},
            {"classes", m.dataset.classes}}},
          {"stages", stages},
          {"bytes_at_split", bytes},
          {"pp_comm", m.pp_comm()},
          {"pp_comp", pp},
          {"on", on ? nlohmann::json(on->name) : nlohmann::json()}};
}

void show(const ModelSpec& m, const LutSet* luts, bool operators, const ProcessorProfile* on) {
  std::printf("model %s on %s (%s, %lld nodes, %lld edges, %d features, %d classes)\nspec: %s\n", m.name.c_str(), m.dataset.name.c_str(),
              m.dataset.task.c_str(), m.dataset.nodes, m.dataset.edges, m.dataset.features, m.dataset.classes, m.file.c_str());
  int name_width = 12, op_width = 10;  // the columns widen to the longest stage name and op
  for (const auto& s : m.stages) {
    name_width = std::max(name_width, static_cast<int>(s.name.size()));
    op_width = std::max(op_width, static_cast<int>(s.op.size()));
  }
  std::printf("%3s %-*s %-*s %6s %6s %14s %14s\n", "#", name_width, "stage", op_width, "op", "in", "out", "MFLOPs", "out KB");
  for (int i = 0; i < m.num_stages(); ++i) {
    const auto& s = m.stages[i];
    std::printf("%3d %-*s %-*s %6d %6d %14.3f %14.2f\n", i, name_width, s.name.c_str(), op_width, s.op.c_str(), s.in_width, s.out_width,
                s.flops / 1e6, s.out_bytes / 1024);
    if (!operators) continue;
    for (const OperatorCost& o : s.operators) {
      std::printf("      %-11s %-34s %10.3f MFLOPs %10.1f KB moved %3d launch%s", kOperatorClassNames.name(o.cls), o.what.c_str(), o.flops / 1e6,
                  o.bytes / 1024, o.launches, o.launches == 1 ? "" : "es");
      if (on) std::printf(" %12.3f us", operator_seconds(o, *on, 1) * 1e6);
      std::printf("\n");
    }
    if (on) std::printf("      stage on %s at batch 1: %.3f ms\n", on->name.c_str(), synth_stage_seconds(s, *on, 1, 1) * 1e3);
  }
  if (on) {
    // Where the time goes on that processor, class by class (batch 1; the stage overheads apart).
    double by_class[kOperatorClassCount] = {}, total = 0;
    for (const auto& st : m.stages)
      for (const OperatorCost& o : st.operators) by_class[static_cast<int>(o.cls)] += operator_seconds(o, *on, 1);
    for (double t : by_class) total += t;
    std::printf("by class on %s at batch 1 (%.3f ms of operators, + %d x %.4f ms per stage):", on->name.c_str(), total * 1e3, m.num_stages(),
                on->stage_overhead_ms);
    for (int c = 0; c < kOperatorClassCount; ++c)
      if (by_class[c] > 0) std::printf(" %s %.1f %%", kOperatorClassNames.name(static_cast<OperatorClass>(c)), 100 * by_class[c] / total);
    std::printf("\n");
  }
  std::printf("bytes crossing each split k (device runs [0,k), server [k,n)):\n");
  for (int k = 0; k <= m.num_stages(); ++k)
    std::printf("  k=%-2d %12.1f KB%s\n", k, m.bytes_at_split(k) / 1024,
                k == 0                ? "  (offload: raw input)"
                : k == m.num_stages() ? "  (local: result)"
                                      : "");
  std::printf("PP_comm = pp(%d) (fewest bytes crossing among interior splits)\n", m.pp_comm());
  const std::vector<PpCompRow> rows = pp_comp_rows(m, luts);
  if (rows.empty()) return;
  std::printf("PP_comp (least device [0,k) + server [k,n) time at batch 1, from the LUTs; pp(0) = offload):\n");
  for (const auto& r : rows)
    std::printf("  %-12s -> %-10s pp(%d): %.2f + %.2f ms\n", r.device.c_str(), r.server.c_str(), r.split, r.device_ms, r.server_ms);
}

int model_show(const ModelOptions& o) {
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  std::vector<std::string> datasets = o.dataset.empty() ? cat.datasets_for(o.name) : std::vector<std::string>{o.dataset};
  std::unique_ptr<LutSet> luts;
  const std::string lut_dir = o.luts.empty() ? data_path("traces/lut") : o.luts;
  if (std::filesystem::exists(lut_dir)) luts = std::make_unique<LutSet>(load_luts({lut_dir}));
  std::optional<ProcessorProfile> on;
  if (!o.on.empty()) on = class_processor(o);
  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& d : datasets) all.push_back(model_json(cat.instantiate(o.name, d), luts.get(), on ? &*on : nullptr));
    std::printf("%s\n", all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  for (size_t i = 0; i < datasets.size(); ++i) {
    if (i) std::printf("\n");
    show(cat.instantiate(o.name, datasets[i]), luts.get(), o.operators || on, on ? &*on : nullptr);
  }
  return 0;
}

int model_list() {
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  for (const auto& m : cat.model_names()) std::printf("%-8s datasets: %s\n", m.c_str(), join(cat.datasets_for(m)).c_str());
  return 0;
}

}  // namespace

void register_model(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("model", "inspect model specs (models/specs/*.yaml)");
  cmd->require_subcommand(1);
  auto opts = std::make_shared<ModelOptions>();
  CLI::App* list = cmd->add_subcommand("list", "list models and the datasets each is defined for");
  list->callback([&exit_code] { exit_code = guarded(model_list); });
  CLI::App* sh = cmd->add_subcommand("show", "print stages, FLOPs, bytes per split, PP_comm and PP_comp");
  sh->add_option("name", opts->name, "model name (see `coinfer model list`)")->required();
  sh->add_option("--dataset", opts->dataset, "dataset (default: every dataset of the model)");
  sh->add_option("--luts", opts->luts, "LUT folder for PP_comp (default: traces/lut)");
  sh->add_flag("--json", opts->json, "print a JSON list (one entry per dataset) instead of text");
  sh->add_flag("--operators", opts->operators,
               "under each stage, its operators: class, FLOPs, bytes moved, kernel launches (models/README.md \"Operator classes\"; the JSON "
               "always has them)");
  sh->add_option("--on", opts->on,
                 "with the operators, each one's time on this processor (TYPE or TYPE.PROCESSOR of --profiles, priced by operator "
                 "classes), each stage's, and the model's share by class; with --json as each operator's and stage's seconds_on");
  sh->add_option("--profiles", opts->profiles, "device profiles for --on (default: traces/devices.yaml)");
  sh->callback([opts, &exit_code] { exit_code = guarded([&] { return model_show(*opts); }); });
}

}  // namespace coinfer::cli
