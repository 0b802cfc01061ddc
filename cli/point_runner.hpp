#pragma once
// Runs the points of a manifest (sweep.json in a folder) as separate `coinfer run` processes (one
// SimGrid engine per process): locally with a process pool, or as a Slurm job array whose tasks call
// `coinfer sweep run-task`. Used by `coinfer sweep` and `coinfer predictor samples`.
//
// Manifest: {"scenario": PATH, "points": [{"sets": ["key=value", ...], "scenario": PATH (optional,
// overrides the manifest's)}, ...], ...}. Point i writes DIR/points/pNNNNN/ (summary.json marks it
// done, so a rerun resumes) and its log DIR/points/pNNNNN.log.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace coinfer::cli {

std::filesystem::path point_dir(const std::string& dir, int id);
bool point_done(const std::string& dir, int id);
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
// Writes DIR/sweep.sbatch (array tasks of `chunk` points, each `coinfer sweep run-task`) and submits it.
// Returns the job id; throws when sbatch fails.
std::string submit_slurm(const std::string& dir, int points, const SlurmOptions& o);

}  // namespace coinfer::cli
