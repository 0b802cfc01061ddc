#pragma once
// Runs the points of a manifest (sweep.json in a folder) as separate `coinfer run` processes (one
// SimGrid engine per process): locally with a process pool, or as a Slurm job array whose tasks call
// `coinfer sweep run-task`. Used by `coinfer sweep` and `coinfer predictor samples`.
//
// Manifest: {"scenario": PATH, "points": [{"sets": ["key=value", ...], "scenario": PATH (optional,
// overrides the manifest's), "inputs": DIGEST (optional)}, ...], ...}. Point i writes DIR/points/pNNNNN/
// (summary.json marks it done, so a rerun resumes) and its log DIR/points/pNNNNN.log. A point with
// "inputs" (io/input_fingerprint.hpp: the scenario as run and the content of every file it reads) is
// done only while DIR/points/pNNNNN.inputs, written when it finished, holds the same digest: a point
// whose scenario or data files changed since it ran runs again.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace coinfer::cli {

std::filesystem::path point_dir(const std::string& dir, int id);
bool point_done(const std::string& dir, int id);                                  // summary.json only
bool point_done(const std::string& dir, int id, const nlohmann::json& manifest);  // and its inputs' digest
// The digest a finished point ran with ("" when none was recorded).
std::string point_inputs_recorded(const std::string& dir, int id);
nlohmann::json read_manifest(const std::string& dir);  // InputError when DIR/sweep.json is missing or corrupt

// Runs `todo` with at most `jobs` children at a time; a progress line labelled `label` (unless quiet)
// and one line per failed point naming its log. Returns the number of failed points.
int run_points(const nlohmann::json& manifest, const std::string& dir, const std::vector<int>& todo, int jobs, bool quiet,
               const std::string& label = "sweep");

struct SlurmOptions {
  int chunk = 10;  // points per array task
  std::string partition, time_limit, job_name = "coinfer-sweep";
  bool wait = false;  // sbatch --wait
};
bool on_path(const std::string& program);

// Where a command's points run: --jobs (local pool), --backend, and the Slurm options.
struct RunnerOptions {
  std::string backend = "local";
  int jobs = 0;  // local worker processes; 0: the number of cores
  SlurmOptions slurm;
  // Registers --jobs/-j, --backend, --chunk (default `default_chunk` `unit`s per array task),
  // --partition, --time and --wait (help: `wait_does`).
  void add_to(CLI::App& cmd, const std::string& unit, int default_chunk, const std::string& wait_does);
  void check() const;      // InputError naming --backend: unknown, or slurm without sbatch on PATH
  int local_jobs() const;  // jobs, or the number of cores
};
// Writes DIR/sweep.sbatch (array tasks of `chunk` points, each `coinfer sweep run-task`) and submits it.
// Returns the job id; throws when sbatch fails.
std::string submit_slurm(const std::string& dir, int points, const SlurmOptions& o);

}  // namespace coinfer::cli
