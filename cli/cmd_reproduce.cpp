// coinfer reproduce [list | PAPER[/ITEM]...] --out DIR [--quick] [--here] [--jobs N] [--docs FILE... [--check-docs]]: the seed papers' tables and
// figures regenerated beside their published numbers (reproduce/coinfer_reproduce.py; reproduce/README.md).
#include <filesystem>
#include <vector>

#include "cli/commands.hpp"
#include "io/data_root.hpp"
#include "plumbing/child_process.hpp"

namespace coinfer::cli {

namespace {
struct ReproduceOptions {
  std::vector<std::string> selection;
  std::string out, published;
  std::vector<std::string> docs;
  std::vector<std::string> skip;
  bool check_docs = false;
  bool paper_width = false;
  std::string backend;
  bool quick = false;
  bool here = false;
  int jobs = 0;
};

int reproduce(const ReproduceOptions& o) {
  std::error_code ec;
  const std::string self = std::filesystem::canonical("/proc/self/exe", ec).string();
  std::vector<std::string> args = {"/usr/bin/python3", data_path("reproduce/coinfer_reproduce.py"),
                                   "--coinfer",        ec ? "coinfer" : self,
                                   "--plots-dir",      data_path("plots"),
                                   "--published",      o.published.empty() ? data_path("reproduce/published") : o.published};
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  if (o.quick) args.push_back("--quick");
  if (o.here) args.push_back("--here");
  if (o.jobs > 0) args.insert(args.end(), {"--jobs", std::to_string(o.jobs)});
  for (const auto& d : o.docs) args.insert(args.end(), {"--docs", d});
  if (o.check_docs) args.push_back("--check-docs");
  if (o.paper_width) args.push_back("--paper-width");
  if (!o.backend.empty()) args.insert(args.end(), {"--backend", o.backend});
  for (const auto& k : o.skip) args.insert(args.end(), {"--skip", k});
  args.insert(args.end(), o.selection.begin(), o.selection.end());
  try {
    exec_replace(args);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (scripts/setup.sh installs python3 and python3-yaml)");
  }
}
}  // namespace

void register_reproduce(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReproduceOptions>();
  CLI::App* cmd = app.add_subcommand("reproduce",
                                     "the five seed papers' tables and figures regenerated beside their published numbers: `reproduce list` names "
                                     "every item and what it needs; `reproduce [PAPER[/ITEM]...] --out DIR` runs them (reproduce/README.md)");
  cmd->add_option("selection", o->selection,
                  "list, or papers / items to run (default: all), e.g. ace-gnn, ace-gnn/table3, fd (feature-decomposition)");
  cmd->add_option("--out", o->out, "output folder: reproduce.json, report.html, summary_PAPER.md, figures/, items/ (kept: a rerun resumes)");
  cmd->add_flag("--quick", o->quick, "every item at small scale: shape, not precision (CI)");
  cmd->add_flag("--here", o->here, "only the items measured on this machine with LibTorch (feature decomposition's), not the simulated ones");
  cmd->add_option("--jobs,-j", o->jobs, "simulations at once (default: the number of cores)");
  cmd->add_option("--published", o->published, "folder of PAPER.yaml files (default: reproduce/published)");
  cmd->add_option("--docs", o->docs,
                  "a Markdown file whose generated blocks of these papers this run replaces (repeatable; full scale only): "
                  "reproduce/README.md, bench/RESULTS.md");
  cmd->add_option("--skip", o->skip, "PAPER/ITEM not to run (repeatable), e.g. ace-gnn/fig18 (its training takes minutes)");
  cmd->add_option("--backend", o->backend,
                  "local (default) or slurm: Fig. 18's sample simulations as a Slurm array job (as sweep --backend slurm), waited for")
      ->check(CLI::IsMember({"local", "slurm"}));
  cmd->add_flag("--paper-width", o->paper_width,
                "train the learned predictors (ace-gnn/fig18) at the paper's width, GIN hidden 512 (default 128; ~4x the time)");
  cmd->add_flag("--check-docs", o->check_docs, "with --docs: change nothing, exit 1 when a generated block no longer matches this build");
  cmd->callback([o, &exit_code] { exit_code = guarded([&] { return reproduce(*o); }); });
}

}  // namespace coinfer::cli
