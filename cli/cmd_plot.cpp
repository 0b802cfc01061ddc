// coinfer plot FILE --kind KIND and coinfer report DIR: run plots/coinfer_plots.py and plots/coinfer_report.py (matplotlib).
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "cli/commands.hpp"
#include "plumbing/child_process.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::cli {

namespace {
struct PlotOptions {
  std::string file, kind, out, x, series, style = "screen", ylim;
  std::vector<std::string> where;
  bool pool = false, logy = false;
};

int plot(const PlotOptions& o) {
  const std::string script = data_path("plots/coinfer_plots.py");
  std::vector<std::string> args = {"/usr/bin/python3", script, o.file, "--kind", o.kind};
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  if (!o.x.empty()) args.insert(args.end(), {"--x", o.x});
  if (!o.series.empty()) args.insert(args.end(), {"--series", o.series});
  for (const auto& w : o.where) args.insert(args.end(), {"--where", w});
  args.insert(args.end(), {"--style", o.style});
  if (o.pool) args.push_back("--pool");
  if (o.logy) args.push_back("--logy");
  if (!o.ylim.empty()) args.insert(args.end(), {"--ylim", o.ylim});
  try {
    exec_replace(args);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (scripts/setup.sh installs python3)");
  }
}
struct ReportOptions {
  std::string dir, out;
};

int report(const ReportOptions& o) {
  std::vector<std::string> args = {"/usr/bin/python3", data_path("plots/coinfer_report.py"), o.dir, "--python-dir", data_path("python")};
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  try {
    exec_replace(args);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (scripts/setup.sh installs python3)");
  }
}
}  // namespace

void register_report(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "one self-contained HTML page for a run, a sweep or a validation: tables, figures, provenance, the scenario (viewable offline)");
  cmd->add_option("dir", o->dir, "a run folder (results.h5 + summary.json), a sweep folder (sweep.h5) or a validation folder (validate.json)")
      ->required();
  cmd->add_option("--out", o->out, "HTML file (default: DIR/report.html)");
  cmd->callback([o, &exit_code] { exit_code = guarded([&] { return report(*o); }); });
}

void register_plot(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<PlotOptions>();
  CLI::App* cmd = app.add_subcommand("plot",
                                     "draw a figure (PNG, PDF, SVG) from a sweep.h5, a results.h5 (--kind timeline) predictor eval JSON (--kind "
                                     "predictor-accuracy) or a SAC POLICY.learning.csv (--kind learning-curve)");
  cmd->add_option("file", o->file, "sweep.h5 (or results.h5 for timeline), or the sweep's or run's folder")->required();
  cmd->add_option("--kind", o->kind, "figure")
      ->required()
      ->check(CLI::IsMember(
          {"latency-vs-bandwidth", "throughput-vs-devices", "throughput-vs-batch", "energy", "timeline", "predictor-accuracy", "learning-curve"}));
  cmd->add_option("--out", o->out, "PNG file (PDF and SVG are written beside it); default: <kind>.png beside FILE");
  cmd->add_option("--x", o->x, "grid axis on the x axis (default: the kind's)");
  cmd->add_option("--series", o->series, "grid axis giving one line per value (default: scheduler if swept)");
  cmd->add_option("--where", o->where, "AXIS=V[,V...]: keep only these values of a grid axis; repeatable");
  cmd->add_flag("--pool", o->pool, "average over grid axes the figure neither plots nor fixes (refused otherwise; the figure says what it pooled)");
  cmd->add_flag("--logy", o->logy, "logarithmic y axis");
  cmd->add_option("--ylim", o->ylim, "LO,HI: the y axis range");
  cmd->add_option("--style", o->style, "screen (default) or paper (one column of a two-column paper)")->check(CLI::IsMember({"screen", "paper"}));
  cmd->callback([o, &exit_code] { exit_code = guarded([&] { return plot(*o); }); });
}

}  // namespace coinfer::cli
