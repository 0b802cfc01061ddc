// coinfer model list | show NAME: the stages of a model spec, bytes per split, PP_comm and PP_comp.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "core/text_util.hpp"
#include "io/lut_repository.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::cli {

namespace {

struct ModelOptions {
  std::string name, dataset, luts;
};

void show(const ModelSpec& m, const LutSet* luts) {
  std::printf("model %s on %s (%s, %lld nodes, %lld edges, %d features, %d classes)\nspec: %s\n", m.name.c_str(),
              m.dataset.name.c_str(), m.dataset.task.c_str(), m.dataset.nodes, m.dataset.edges, m.dataset.features,
              m.dataset.classes, m.file.c_str());
  std::printf("%3s %-12s %-10s %6s %6s %14s %14s\n", "#", "stage", "op", "in", "out", "MFLOPs", "out KB");
  for (int i = 0; i < m.num_stages(); ++i) {
    const auto& s = m.stages[i];
    std::printf("%3d %-12s %-10s %6d %6d %14.3f %14.2f\n", i, s.name.c_str(), s.op.c_str(), s.in_width, s.out_width,
                s.flops / 1e6, s.out_bytes / 1024);
  }
  std::printf("bytes crossing each split k (device runs [0,k), server [k,n)):\n");
  for (int k = 0; k <= m.num_stages(); ++k)
    std::printf("  k=%-2d %12.1f KB%s\n", k, m.bytes_at_split(k) / 1024,
                k == 0 ? "  (offload: raw input)" : k == m.num_stages() ? "  (local: result)" : "");
  std::printf("PP_comm = pp(%d) (fewest bytes crossing among interior splits)\n", m.pp_comm());
  if (!luts) return;
  std::vector<std::string> devices, servers;
  for (const auto& key : luts->keys()) {
    if (key.model != m.name || key.dataset != m.dataset.name) continue;
    const auto& t = luts->table(key);
    (t.provenance().attributes.count("role") && t.provenance().attributes.at("role") == "server" ? servers : devices)
        .push_back(key.device_type);
  }
  if (devices.empty() || servers.empty()) return;
  std::printf("PP_comp (least device [0,k) + server [k,n) time at batch 1, from the LUTs; pp(0) = offload):\n");
  for (const auto& d : devices)
    for (const auto& sv : servers) {
      const auto& dl = luts->table({d, m.name, m.dataset.name});
      const auto& sl = luts->table({sv, m.name, m.dataset.name});
      int k = m.pp_comp([&](int a, int b) { return dl.mean_seconds(a, b, 1); },
                        [&](int a, int b) { return sl.mean_seconds(a, b, 1); });
      std::printf("  %-12s -> %-10s pp(%d): %.2f + %.2f ms\n", d.c_str(), sv.c_str(), k, dl.mean_seconds(0, k, 1) * 1e3,
                  sl.mean_seconds(k, m.num_stages(), 1) * 1e3);
    }
}

int model_show(const ModelOptions& o) {
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  std::vector<std::string> datasets = o.dataset.empty() ? cat.datasets_for(o.name) : std::vector<std::string>{o.dataset};
  std::unique_ptr<LutSet> luts;
  const std::string lut_dir = o.luts.empty() ? data_path("traces/lut") : o.luts;
  if (std::filesystem::exists(lut_dir)) luts = std::make_unique<LutSet>(load_luts({lut_dir}));
  for (size_t i = 0; i < datasets.size(); ++i) {
    if (i) std::printf("\n");
    show(cat.instantiate(o.name, datasets[i]), luts.get());
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
  sh->callback([opts, &exit_code] { exit_code = guarded([&] { return model_show(*opts); }); });
}

}  // namespace coinfer::cli
