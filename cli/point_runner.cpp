#include "core/text_util.hpp"
#include "core/log.hpp"
#include "cli/point_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/progress_line.hpp"
#include "core/input_error.hpp"
#include "plumbing/atomic_dir.hpp"
#include "plumbing/child_process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace coinfer::cli {

fs::path point_dir(const std::string& dir, int id) {
  char name[32];
  std::snprintf(name, sizeof name, "p%05d", id);
  return fs::path(dir) / "points" / name;
}

bool point_done(const std::string& dir, int id) { return fs::exists(point_dir(dir, id) / "summary.json"); }

namespace {
fs::path inputs_file(const std::string& dir, int id) { return point_dir(dir, id).string() + ".inputs"; }
std::string inputs_of(const json& manifest, int id) {
  const json& points = manifest.at("points");
  if (id < 0 || static_cast<size_t>(id) >= points.size()) return "";
  return points[static_cast<size_t>(id)].value("inputs", std::string());
}
}  // namespace

std::string point_inputs_recorded(const std::string& dir, int id) {
  std::ifstream in(inputs_file(dir, id));
  std::string digest;
  std::getline(in, digest);
  return digest;
}

bool point_done(const std::string& dir, int id, const json& manifest) {
  if (!point_done(dir, id)) return false;
  const std::string want = inputs_of(manifest, id);
  return want.empty() || point_inputs_recorded(dir, id) == want;
}

namespace {

// Starts `coinfer run` for one point; its output goes to the point's log.
Child start_point(const json& manifest, const std::string& dir, int id) {
  const json& p = manifest["points"][id];
  const std::string scenario = p.contains("scenario") ? p["scenario"].get<std::string>() : manifest["scenario"].get<std::string>();
  ChildSpec spec;
  spec.argv = {"/proc/self/exe", "run", scenario, "-q", "--out", point_dir(dir, id).string()};
  for (const auto& s : p["sets"]) {
    spec.argv.push_back("--set");
    spec.argv.push_back(s.get<std::string>());
  }
  spec.stdout_file = point_dir(dir, id).string() + ".log";
  spec.stderr_file = "&1";
  log::debug("sweep", "point " + std::to_string(id) + ": " + join(spec.argv, " "));
  return Child::start(spec);
}

}  // namespace

int run_points(const json& manifest, const std::string& dir, const std::vector<int>& todo, int jobs, bool quiet, const std::string& label) {
  std::vector<std::pair<std::unique_ptr<Child>, int>> running;  // (process, point)
  size_t next = 0, finished = 0;
  int failed = 0;
  ProgressLine progress(label, quiet);
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs) {
      fs::create_directories(point_dir(dir, todo[next]).parent_path());
      std::error_code ec;
      fs::remove(inputs_file(dir, todo[next]), ec);  // the point's old digest goes before it runs again
      running.emplace_back(std::make_unique<Child>(start_point(manifest, dir, todo[next])), todo[next]);
      ++next;
    }
    std::vector<Child*> children;
    for (auto& r : running) children.push_back(r.first.get());
    const int k = wait_any(children);
    if (k < 0) break;
    const int id = running[k].second;
    const int status = running[k].first->status();
    running.erase(running.begin() + k);
    ++finished;
    const std::string inputs = inputs_of(manifest, id);
    if (status == 0 && point_done(dir, id) && !inputs.empty()) write_text_atomic(inputs_file(dir, id).string(), inputs + "\n");
    if (status != 0 || !point_done(dir, id, manifest)) {
      ++failed;
      progress.finish();
      log::warn("sweep", strprintf("%s: point %d failed; log: %s.log (%s)", label.c_str(), id, point_dir(dir, id).c_str(),
                                   describe_exit_status(status).c_str()));
    }
    progress.update(static_cast<double>(finished), static_cast<double>(todo.size()),
                    std::to_string(finished) + "/" + std::to_string(todo.size()) + " points, " + std::to_string(failed) + " failed");
  }
  progress.finish();
  return failed;
}

json read_manifest(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "sweep.json");
  if (!in) throw InputError(SourceLocation{dir, 0, 0}, "", "not a sweep folder (no sweep.json)");
  try {
    return json::parse(in);
  } catch (const std::exception& e) {
    throw InputError(SourceLocation{(fs::path(dir) / "sweep.json").string(), 0, 0}, "", std::string("corrupt manifest: ") + e.what());
  }
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string d;
  while (std::getline(ss, d, ':'))
    if (!d.empty() && ::access((fs::path(d) / program).c_str(), X_OK) == 0) return true;
  return false;
}

void RunnerOptions::add_to(CLI::App& cmd, const std::string& unit, int default_chunk, const std::string& wait_does) {
  slurm.chunk = default_chunk;
  cmd.add_option("--jobs,-j", jobs, "local worker processes (default: number of cores)");
  cmd.add_option("--backend", backend, "local (default) or slurm");
  cmd.add_option("--chunk", slurm.chunk, "slurm: " + unit + " per array task (default " + std::to_string(default_chunk) + ")")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--partition", slurm.partition, "slurm: partition");
  cmd.add_option("--time", slurm.time_limit, "slurm: time limit per array task (HH:MM:SS)");
  cmd.add_flag("--wait", slurm.wait, "slurm: " + wait_does);
}

void RunnerOptions::check() const {
  if (backend != "local" && backend != "slurm")
    throw InputError(SourceLocation{"--backend", 0, 0}, "--backend", "'" + backend + "' is not allowed (local, slurm)");
  if (backend == "slurm" && !on_path("sbatch"))
    throw InputError(SourceLocation{"--backend", 0, 0}, "--backend", "sbatch not found on PATH (is Slurm installed?)");
}

int RunnerOptions::local_jobs() const { return jobs > 0 ? jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

std::string submit_slurm(const std::string& dir, int points, const SlurmOptions& o) {
  const int tasks = (points + o.chunk - 1) / o.chunk;
  const fs::path script = fs::path(dir) / "sweep.sbatch";
  std::ostringstream sb;
  sb << "#!/bin/bash\n#SBATCH --job-name=" << o.job_name << "\n#SBATCH --array=0-" << tasks - 1 << "\n#SBATCH --output=" << fs::absolute(dir).string()
     << "/slurm-%A_%a.out\n";
  if (!o.partition.empty()) sb << "#SBATCH --partition=" << o.partition << "\n";
  if (!o.time_limit.empty()) sb << "#SBATCH --time=" << o.time_limit << "\n";
  sb << "# Generated by coinfer: each array task runs " << o.chunk << " points (skipping finished ones).\n"
     << "exec " << fs::canonical("/proc/self/exe").string() << " sweep run-task " << fs::absolute(dir).string() << " --chunk " << o.chunk
     << " --task \"$SLURM_ARRAY_TASK_ID\"\n";
  write_text_atomic(script.string(), sb.str());
  ChildSpec sbatch;
  sbatch.argv = {"sbatch", "--parsable"};
  if (o.wait) sbatch.argv.push_back("--wait");
  sbatch.argv.push_back(script.string());
  sbatch.capture_stdout = sbatch.capture_stderr = true;
  const ChildResult r = run_child(sbatch);
  const std::string out = r.out;
  // A Slurm that refuses the job (no controller, a partition or account it does not know) is this
  // machine's set-up, not a coinfer fault: exit 2 with Slurm's own words and where to look
  // ("Unable to contact slurm controller" was reported as an internal error, exit 1).
  if (r.status != 0)
    throw InputError(SourceLocation{"--backend", 0, 0}, "--backend slurm",
                     "sbatch refused the job (" + describe_exit_status(r.status) + "): " + r.err + r.out +
                         (r.err.find("contact") != std::string::npos || r.err.find("controller") != std::string::npos
                              ? " -- is slurmctld running and reachable? (sinfo lists the cluster it sees); or use --backend local"
                              : " -- see sbatch's message above; or use --backend local"));
  return out.substr(0, out.find_first_of(";\n"));
}

}  // namespace coinfer::cli
