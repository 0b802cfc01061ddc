// coinfer collect JOURNALS... --scenario S --out DIR: the journals of a real run (each device's
// `coinfer device --records` file, and the server's `coinfer serve --decisions-out` file), recorded
// by hand on boards or by the emulated testbed, turned into the simulator's results.h5 +
// summary.json + decisions.jsonl by the very merge the testbed uses (hw/journal_merge.hpp), so that
// `coinfer validate`, `coinfer plot` and `coinfer report` read any real run.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/text_util.hpp"
#include "hw/journal_merge.hpp"
#include "hw/record_journal.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/decisions_jsonl.hpp"
#include "io/data_root.hpp"
#include "io/results_h5.hpp"
#include "io/scenario_loader.hpp"
#include "io/summary_json.hpp"
#include "sched/scheduler_factory.hpp"

namespace fs = std::filesystem;

namespace coinfer::cli {

namespace {

struct CollectOptions {
  std::vector<std::string> journals;
  std::string scenario, out;
  std::vector<std::string> sets;
  double end_s = NAN;
  double clock_tolerance_s = 0.005;
  bool quiet = false;
};

// What a journal file is, from its first non-empty line: a device journal ({"ev":...}) or a
// decisions journal ({"trigger":..., "scheme":...}).
enum class JournalKind { device, decisions };

JournalKind kind_of(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "", "cannot read this journal");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (trim(line).empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception&) {
      throw InputError(SourceLocation{path, n, 0}, "", "not a journal: the line is not JSON ('" + printable(line, 80) + "')");
    }
    if (j.is_object() && j.contains("ev")) return JournalKind::device;
    if (j.is_object() && j.contains("trigger") && j.contains("scheme")) return JournalKind::decisions;
    throw InputError(SourceLocation{path, n, 0}, "",
                     "not a journal: neither a device's records ({\"ev\": ...}, coinfer device --records) nor a server's decisions "
                     "({\"trigger\": ..., \"scheme\": ...}, coinfer serve --decisions-out)");
  }
  throw InputError(SourceLocation{path, 0, 0}, "", "an empty journal");
}

int collect(CollectOptions o) {
  const Scenario sc = load_scenario(o.scenario, o.sets);
  check_output_folder(o.out, "--out");
  check_replaceable_output(o.out, "--out");
  if (o.journals.empty()) throw InputError(SourceLocation{"collect", 0, 0}, "JOURNALS", "give at least one journal");
  std::vector<std::vector<RequestRecord>> journals(sc.devices.size());
  std::vector<std::string> from(sc.devices.size());
  std::vector<DecisionRecord> decisions;
  std::string decisions_from;
  std::vector<DataFileOrigin> files;
  for (const std::string& path : o.journals) {
    if (kind_of(path) == JournalKind::decisions) {
      if (!decisions_from.empty())
        throw InputError(SourceLocation{path, 0, 0}, "", "a second decisions journal (the first: " + decisions_from + "); a run has one server's");
      decisions = read_decisions_jsonl(path);
      decisions_from = path;
      files.push_back({"decisions journal", path, "given on the command line"});
      continue;
    }
    const std::string id = hw::journal_device(path);
    if (id.empty())
      throw InputError(SourceLocation{path, 1, 0}, "", "a device journal without its {\"ev\":\"note\",\"device\":ID} line: which device wrote it?");
    const int i = sc.device_index(id);
    if (i < 0)
      throw InputError(SourceLocation{path, 1, 0}, "device",
                       "device '" + printable(id, 80) + "' is not in the scenario " + sc.file + " (its devices: " + join([&] {
                         std::vector<std::string> ids;
                         for (const auto& d : sc.devices) ids.push_back(d.id);
                         return ids;
                       }()) +
                           ")");
    if (!from[static_cast<size_t>(i)].empty())
      throw InputError(SourceLocation{path, 0, 0}, "device",
                       "a second journal of device '" + id + "' (the first: " + from[static_cast<size_t>(i)] + ")");
    from[static_cast<size_t>(i)] = path;
    files.push_back({"device journal", path, "given on the command line (device " + id + ")"});
  }
  for (size_t i = 0; i < sc.devices.size(); ++i)
    if (from[i].empty()) log::warn("run", "no journal for device " + sc.devices[i].id + ": the results hold no request of it");
  // Each journal onto the server's clock and time zero (hw/clock_sync.hpp), in the scenario's numbering.
  std::vector<ClockRecord> clocks;
  std::vector<hw::PowerReadings> power;
  try {
    journals = hw::read_journals_server_clock(sc, from, clocks, o.clock_tolerance_s, "run", &power);
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  if (decisions_from.empty()) log::warn("run", "no decisions journal (coinfer serve --decisions-out): the results hold no decision");
  // The run's end: given, else the last moment any record mentions (at least the end of arrivals).
  double end_s = o.end_s;
  if (std::isnan(end_s)) {
    end_s = sc.duration_s;
    for (const auto& j : journals)
      for (const auto& r : j)
        for (double t : {r.t_created, r.t_device_end, r.t_batch_end, r.t_result})
          if (std::isfinite(t)) end_s = std::max(end_s, t);
  }
  RunResults r = hw::merge_journals(sc, journals, std::move(decisions), end_s, &power);
  r.clocks = clocks;
  r.estimator = estimator_of(sc);
  r.data_files = run_data_files(sc, LutSet{});
  r.data_files.insert(r.data_files.end(), files.begin(), files.end());
  StagedOutput staged(o.out, "--out");
  write_results_h5(staged.path("results.h5"), r);
  write_summary_json(staged.path("summary.json"), r);
  write_text_atomic(staged.path("decisions.jsonl"), decisions_jsonl_text(r.decisions));
  staged.commit();
  if (!o.quiet) {
    std::cout << "scenario " << sc.name << ": " << r.requests.size() << " requests from " << o.journals.size() << " journals, measured "
              << sc.warmup_s << ".." << sc.duration_s << " s\n";
    print_run_table(r, std::cout);
    std::cout << "wrote " << o.out << "/results.h5, summary.json and decisions.jsonl\n";
  }
  return 0;
}

}  // namespace

void register_collect(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CollectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "collect", "turn the journals of a real run (coinfer device --records, coinfer serve --decisions-out) into results.h5 + summary.json");
  cmd->add_option("journals", o->journals, "device journals and at most one server decisions journal (JSON lines; hw/README.md)")->required();
  cmd->add_option("--scenario", o->scenario, "the scenario the run played")->required();
  cmd->add_option("--set", o->sets, "override a scenario key (repeatable), as the run did");
  cmd->add_option("--out", o->out, "output folder")->required();
  cmd->add_option("--clock-tolerance", o->clock_tolerance_s, "warn when a board's clock offset is known less well than this (s, default 0.005)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--end", o->end_s, "the run's end in seconds since its time zero (default: the last time a record mentions)");
  cmd->callback([o, &exit_code] {
    o->quiet = quiet("run");
    exit_code = guarded([&] { return collect(*o); });
  });
}

}  // namespace coinfer::cli
