// coinfer-sac: the LibTorch half of `coinfer train sac` (kept out of the simulator's `coinfer`).
//   train SCENARIO... --out POLICY   SparOA's SAC (sched/sac_agent.hpp) trained in simulation
//
// The episode boundary: SimGrid allows one engine per process, so each episode is a `coinfer run` of
// one of the scenarios, started by this learner with the current policy exploring (scheduler sac,
// explore: true), its own seed and random bandwidth traces. The run's decisions.jsonl carries each
// decision's observations and actions; its results.h5 the requests from which the rewards are computed
// (sched/sac_mdp.hpp). After each round of episodes (one per worker), the learner adds the transitions
// to the replay buffer, makes its gradient steps (SparOA Alg. 1 lines 25-31), and writes a checkpoint
// (POLICY.ckpt) and the learning curve (POLICY.learning.csv): a killed training resumes from the last
// round with the same command.
#include <CLI/CLI.hpp>

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/sparoa_train.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/random_stream.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "plumbing/blas_threads.hpp"
#include "plumbing/child_process.hpp"
#include "io/decisions_jsonl.hpp"
#include "io/input_file.hpp"
#include "io/results_h5.hpp"
#include "io/scenario_loader.hpp"
#include "sched/sac_agent.hpp"

namespace {

using namespace coinfer;
namespace fs = std::filesystem;

struct TrainOptions {
  std::vector<std::string> scenarios;
  std::string out;
  int episodes = 40;
  int workers = 2;
  std::uint64_t seed = 1;
  double period_s = 1;
  double bw_min = 1, bw_max = 100;    // Mbit/s: random traces' levels, log-uniform
  double step_min = 2, step_max = 8;  // s between a random trace's changes
  double duration_s = 0;              // episode length; 0 = the scenario's
  double updates_per_decision = 8;    // gradient steps per decision of an episode (SB3: 1 per environment step)
  bool keep_bandwidth = false;        // no random traces: the scenarios' own links
  double join_probability = 0;        // per device entry and episode: joins late, at U(0, duration / 2)
  double load_spread = 1;             // per device entry and episode: in_flight (closed loop) or rate (poisson) x or / up to this
  bool restart = false;
  int threads = 1;
  std::string placement_policy;  // operator-level mode: a SparOA policy (absolute path) placing the boards' stages
  bool learn_batching = false;   // a second agent per server learns its batching (sched/sac_batching.hpp)
  SacHyperParams hyper;
  SacRewardWeights reward;
  std::string command_line;
  bool quiet = false;
};

// One training scenario: its loaded form and, per YAML device entry, whether it has a trace of its own.
struct TrainScenario {
  std::string file;
  Scenario scenario;
  std::vector<bool> entry_has_trace;
  std::vector<WorkloadSpec::Arrival> entry_arrival;  // per YAML device entry: workload.arrival
  std::vector<double> entry_rate, entry_in_flight;   // its rate_per_s (poisson) and in_flight (0: the default)
  std::vector<std::string> device_ids;
};

std::string fmt(double x) { return strprintf("%.6g", x); }

// A random bandwidth trace: log-uniform levels in [lo, hi], each held U(step_min, step_max) seconds.
std::string random_trace(RandomStream& rng, double duration_s, const TrainOptions& o) {
  std::string out = "# source: SYNTHETIC, coinfer train sac's random episode trace: log-uniform levels in [" + fmt(o.bw_min) + ", " + fmt(o.bw_max) +
                    "] Mbit/s held U(" + fmt(o.step_min) + ", " + fmt(o.step_max) + ") s each\ntime_s,bandwidth_mbps\n";
  double t = 0;
  while (t < duration_s + 1) {
    const double level = std::exp(std::log(o.bw_min) + rng.next_unit() * (std::log(o.bw_max) - std::log(o.bw_min)));
    out += fmt(t) + "," + fmt(level) + "\n";
    t += o.step_min + rng.next_unit() * (o.step_max - o.step_min);
  }
  return out;
}

struct EpisodeResult {
  std::vector<SacTransition> transitions, server_transitions;
  double episode_return = 0, throughput_rps = 0, mean_latency_s = 0;
  int decisions = 0;
};

// Reads an episode's run: its SAC decisions and the rewards of their windows.
EpisodeResult read_episode(const std::string& dir, const TrainScenario& ts, double duration_s, const TrainOptions& o) {
  EpisodeResult e;
  std::vector<SacDecision> decisions;
  for (const DecisionRecord& d : read_decisions_jsonl(dir + "/decisions.jsonl")) {
    if (d.detail.empty()) continue;
    try {
      decisions.push_back(sac_decision_from_json(d.detail));
    } catch (const std::invalid_argument& x) {
      throw InputError(SourceLocation{dir + "/decisions.jsonl", 0, 0}, "detail", x.what());
    }
  }
  const std::vector<RequestRecord> requests = read_request_records(dir + "/results.h5");
  std::vector<PowerSpec> power;
  for (const auto& d : ts.scenario.devices) power.push_back(d.power);
  e.transitions = sac_transitions(decisions, requests, ts.device_ids, duration_s, o.reward, &e.episode_return, &power,
                                  o.learn_batching ? &e.server_transitions : nullptr);
  e.decisions = static_cast<int>(decisions.size());
  double sum = 0;
  int done = 0;
  for (const auto& r : requests)
    if (r.done() && r.t_result < duration_s) sum += r.latency_s(), ++done;
  e.throughput_rps = done / std::max(duration_s, 1e-9);
  e.mean_latency_s = done ? sum / done : NAN;
  return e;
}

// `batching_policy`: the batching agent's current policy ("" without --learn-batching).
std::string scheduler_override(const Scenario& s, const std::string& policy, const std::string& batching_policy, std::uint64_t seed,
                               const TrainOptions& o) {
  std::string m = "scheduler={name: sac, policy: '" + policy + "', explore: true, seed: " + std::to_string(seed) +
                  ", data_parallel: " + (o.hyper.allow_data_parallel ? "true" : "false");
  if (!batching_policy.empty()) m += ", batching_policy: '" + batching_policy + "'";
  const double period = s.scheduler.period_s > 0 ? s.scheduler.period_s : o.period_s;
  if (!o.placement_policy.empty()) m += ", placement_policy: '" + o.placement_policy + "'";
  m += ", period_s: " + fmt(period) + ", bandwidth_threshold_pct: " + fmt(s.scheduler.bandwidth_threshold_pct) +
       ", control_bytes: " + fmt(s.scheduler.control_bytes) + "}";
  return m;
}

// The training scenarios, loaded; `models` gets each device's "model/dataset".
std::vector<TrainScenario> load_training_scenarios(const TrainOptions& o, std::set<std::string>& models) {
  std::vector<TrainScenario> scenarios;
  for (const auto& f : o.scenarios) {
    TrainScenario ts;
    ts.file = fs::absolute(f).string();
    ts.scenario = load_scenario(f);
    for (const auto& d : ts.scenario.devices) ts.device_ids.push_back(d.id), models.insert(d.model + "/" + d.dataset);
    // Per YAML device entry, from its first device (the copies of a count: group share the entry's keys).
    for (const auto& d : ts.scenario.devices) {
      if (static_cast<size_t>(d.entry) < ts.entry_arrival.size()) continue;
      ts.entry_has_trace.push_back(!d.link.trace_file.empty());
      ts.entry_arrival.push_back(d.workload.arrival);
      ts.entry_rate.push_back(d.workload.rate_per_s);
      ts.entry_in_flight.push_back(d.workload.in_flight);
    }
    scenarios.push_back(std::move(ts));
  }
  return scenarios;
}

// Learned batching: every scenario must list the same candidates (the batching policy's actions index
// them). Throws InputError naming the first scenario that lists none or others.
BatchingChoices shared_batching_candidates(const std::vector<TrainScenario>& scenarios) {
  auto sorted = [](auto v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  BatchingChoices shared;
  for (size_t k = 0; k < scenarios.size(); ++k) {
    const Scenario& sc = scenarios[k].scenario;
    const BatchingChoices c{sorted(sc.scheduler.batch_windows_ms), sorted(sc.scheduler.batch_sizes)};
    if (c.empty())
      throw InputError(sc.scheduler.where, "scheduler.batch_windows_ms",
                       "--learn-batching needs the batching candidates in every training scenario (scheduler.batch_windows_ms, "
                       "scheduler.batch_sizes)");
    if (k == 0)
      shared = c;
    else if (c.windows_ms != shared.windows_ms || c.sizes != shared.sizes)
      throw InputError(sc.scheduler.where, "scheduler.batch_windows_ms",
                       "--learn-batching needs the same batching candidates in every training scenario; " + scenarios[0].file + " lists others");
  }
  return shared;
}

// What must match for a checkpoint to be resumed: everything but the episode count and the log level.
nlohmann::json checkpoint_identity(const TrainOptions& o, const SacBatchingPolicyInfo& binfo) {
  nlohmann::json identity{
      {"scenarios", o.scenarios},
      {"seed", o.seed},
      {"workers", o.workers},
      {"period_s", o.period_s},
      {"bandwidth", {o.bw_min, o.bw_max}},
      {"trace_step", {o.step_min, o.step_max}},
      {"keep_bandwidth", o.keep_bandwidth},
      {"duration_s", o.duration_s},
      {"updates_per_decision", o.updates_per_decision},
      {"joins", o.join_probability},
      {"load_spread", o.load_spread},
      {"hidden", o.hyper.hidden},
      {"lr", o.hyper.learning_rate},
      {"gamma", o.hyper.gamma},
      {"tau", o.hyper.tau},
      {"batch", o.hyper.batch_size},
      {"buffer", o.hyper.buffer_size},
      {"alpha0", o.hyper.initial_alpha},
      {"data_parallel", o.hyper.allow_data_parallel},
      {"placement_policy", o.placement_policy},
      {"reward", {o.reward.latency, o.reward.energy, o.reward.switching, o.reward.shared, o.reward.per_result, o.reward.energy_per_result}}};
  if (o.learn_batching) identity["learn_batching"] = {binfo.candidates.windows_ms, binfo.candidates.sizes};
  return identity;
}

const char* const kCurveHeader =
    "episode,scenario,seed,return,decisions,transitions,throughput_rps,mean_latency_s,alpha,critic_loss,actor_loss,entropy,wall_s\n";

// The learning curve's rows of the episodes before `done_episodes` (the curve is written before the
// checkpoint: rows of a round the checkpoint lacks are dropped, and that round runs again). Throws
// InputError naming the file and row of a line that is not a curve's.
std::string curve_before(const std::string& curve, int done_episodes) {
  std::string text = kCurveHeader;
  if (!fs::exists(curve)) return text;
  std::istringstream in(read_input_file(curve, "learning curve"));
  std::string line;
  std::getline(in, line);  // header
  for (int row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    long long episode = -1;
    try {
      episode = std::stoll(line.substr(0, line.find(',')));
    } catch (const std::exception&) {
      throw InputError(SourceLocation{curve, row, 1}, "episode", "not a row of a learning curve; move the file away to resume without it");
    }
    if (episode < done_episodes) text += line + "\n";
  }
  return text;
}

// Where a training stands: episodes done, wall time spent before this process, the curve so far.
struct TrainingProgress {
  int episodes = 0;
  double wall_s = 0;
  std::string curve_text = kCurveHeader;
};

// The checkpoint files of a training writing POLICY: the agent's, the batching agent's (its previous
// one kept beside it), the learning curve, and the batching policy written at the end.
struct CheckpointFiles {
  std::string agent, batching, curve, batching_policy;
  explicit CheckpointFiles(const std::string& out)
      : agent(out + ".ckpt"), batching(out + ".batching.ckpt"), curve(out + ".learning.csv"), batching_policy(out + ".batching") {}
};

// Loads both agents from the last round's checkpoints when they exist (and --restart is not given).
// Throws InputError when the checkpoint was made by another set-up or the batching agent has none of
// the same round.
TrainingProgress resume(const TrainOptions& o, const nlohmann::json& identity, const CheckpointFiles& files, SacAgent& agent,
                        SacAgent& batching_agent, const SacHyperParams& batching_hyper) {
  TrainingProgress p;
  if (!fs::exists(files.agent) || o.restart) return p;
  const auto saved = nlohmann::json::parse(agent.load_checkpoint(files.agent));
  if (saved.at("identity") != identity)
    throw InputError(SourceLocation{files.agent, 0, 0}, "identity",
                     "this checkpoint was made by another training set-up (" + saved.at("identity").dump() +
                         "); use the same options, or --restart to begin again");
  p.episodes = saved.at("episodes").get<int>();
  if (o.learn_batching) {
    // Of the batching agent's last two checkpoints, the one of the main checkpoint's round (a kill
    // between writing the two leaves the newer one a round ahead).
    bool found = false;
    for (const std::string& f : {files.batching, files.batching + ".prev"}) {
      if (!fs::exists(f)) continue;
      SacAgent candidate(batching_hyper, RandomStream(o.seed, StreamPurpose::sac_batching, 0).next_u64());
      if (nlohmann::json::parse(candidate.load_checkpoint(f)).at("episodes") != saved.at("episodes")) continue;
      batching_agent.load_checkpoint(f);
      found = true;
      break;
    }
    if (!found)
      throw InputError(SourceLocation{files.batching, 0, 0}, "episodes",
                       "no checkpoint of the batching agent at the round of " + files.agent + "; use --restart to begin again");
  }
  p.wall_s = saved.at("wall_s").get<double>();
  p.curve_text = curve_before(files.curve, p.episodes);
  log::info("train", "resuming from " + files.agent + " after " + std::to_string(p.episodes) + " episodes");
  return p;
}

// One episode of a round: its `coinfer run` and where it writes.
struct Episode {
  int index = 0;
  const TrainScenario* scenario = nullptr;
  std::uint64_t seed = 0;  // the run's seed (arrivals, service times, exploration)
  double duration_s = 0;
  std::string dir;  // the run's output; DIR-in holds its inputs and log
  std::vector<std::string> argv;
};

// Episode `index`: the scenario it cycles to, its seed, random bandwidth traces (written into DIR-in)
// unless --keep-bandwidth, and joins and loads per device entry (a count: group shares them), all
// drawn in that order from the episode's own stream.
Episode make_episode(const TrainOptions& o, const std::vector<TrainScenario>& scenarios, int index, const std::string& work,
                     const std::string& policy, const std::string& batching_policy) {
  Episode e;
  e.index = index;
  e.scenario = &scenarios[static_cast<size_t>(index) % scenarios.size()];
  const TrainScenario& ts = *e.scenario;
  RandomStream rng(o.seed, StreamPurpose::sac_episode, static_cast<std::uint64_t>(index));
  e.seed = rng.next_u64() % 1000000007ULL + 1;
  e.duration_s = o.duration_s > 0 ? o.duration_s : ts.scenario.duration_s;
  e.dir = work + "/episode-" + std::to_string(index);
  fs::remove_all(e.dir);
  fs::create_directories(e.dir + "-in");
  e.argv = {cli::companion_path("coinfer"),
            "run",
            ts.file,
            "--out",
            e.dir,
            "-q",
            "--set",
            "seed=" + std::to_string(e.seed),
            "--set",
            "warmup_s=0",  // rewards count every request
            "--set",
            scheduler_override(ts.scenario, policy, batching_policy, e.seed, o)};
  auto set = [&e](const std::string& assignment) { e.argv.insert(e.argv.end(), {"--set", assignment}); };
  if (o.duration_s > 0) set("duration_s=" + fmt(o.duration_s));
  if (!o.keep_bandwidth) {
    for (size_t k = 0; k < ts.entry_has_trace.size(); ++k) {
      if (ts.entry_has_trace[k]) continue;
      const std::string trace = fs::absolute(e.dir + "-in/trace-" + std::to_string(k) + ".csv").string();
      write_text_atomic(trace, random_trace(rng, e.duration_s, o));
      set("devices." + std::to_string(k) + ".link.trace=" + trace);
    }
  }
  for (size_t k = 0; k < ts.entry_arrival.size(); ++k) {
    const std::string key = "devices." + std::to_string(k) + ".";
    const double u_join = rng.next_unit(), t_join = rng.next_unit() * e.duration_s / 2, u_load = rng.next_unit();
    if (ts.entry_arrival[k] == WorkloadSpec::Arrival::none) continue;
    if (u_join < o.join_probability) set(key + "join_at_s=" + fmt(t_join));
    if (o.load_spread <= 1) continue;
    const double factor = std::exp((2 * u_load - 1) * std::log(o.load_spread));  // log-uniform in [1/spread, spread]
    if (ts.entry_arrival[k] == WorkloadSpec::Arrival::poisson && ts.entry_rate[k] > 0)
      set(key + "workload.rate_per_s=" + fmt(ts.entry_rate[k] * factor));
    else if (ts.entry_arrival[k] == WorkloadSpec::Arrival::closed_loop) {
      const double base = ts.entry_in_flight[k] > 0 ? ts.entry_in_flight[k] : 1.5;
      set(key + "workload.in_flight=" + std::to_string(std::max(1L, std::lround(base * factor))));
    }
  }
  return e;
}

// Runs a round's episodes as concurrent `coinfer run`s and reads each one's result. Blocks until all
// have ended; throws InputError with the log of the first one that failed.
std::vector<EpisodeResult> run_round(const std::vector<Episode>& round, const TrainOptions& o) {
  std::vector<Child> children;
  for (const Episode& e : round) {
    ChildSpec spec;
    spec.argv = e.argv;
    spec.stdout_file = e.dir + "-in/run.log";
    spec.stderr_file = "&1";
    log::debug("train", "episode " + std::to_string(e.index) + ": " + join(e.argv, " "));
    children.push_back(Child::start(spec));
  }
  std::vector<EpisodeResult> results;
  for (size_t w = 0; w < round.size(); ++w) {
    const Episode& e = round[w];
    const int status = children[w].wait();
    if (status != 0)
      throw InputError(SourceLocation{e.scenario->file, 0, 0}, "episode",
                       "episode " + std::to_string(e.index) + " (coinfer run) ended with " + describe_exit_status(status) + ": " +
                           trim(read_input_file(e.dir + "-in/run.log", "episode log")));
    results.push_back(read_episode(e.dir, *e.scenario, e.duration_s, o));
  }
  return results;
}

// One row of the learning curve.
std::string curve_row(const Episode& e, const EpisodeResult& r, const SacUpdateStats& st, double wall_s) {
  return std::to_string(e.index) + "," + fs::path(e.scenario->file).filename().string() + "," + std::to_string(e.seed) + "," + fmt(r.episode_return) +
         "," + std::to_string(r.decisions) + "," + std::to_string(r.transitions.size()) + "," + fmt(r.throughput_rps) + "," + fmt(r.mean_latency_s) +
         "," + fmt(st.alpha) + "," + fmt(st.critic_loss) + "," + fmt(st.actor_loss) + "," + fmt(st.entropy) + "," + strprintf("%.3f", wall_s) + "\n";
}

// Writes the trained policy POLICY (and its batching policy) with their provenance, drops the batching
// agent's previous checkpoint, and says what was written unless quiet.
void write_trained_policies(const TrainOptions& o, const std::vector<TrainScenario>& scenarios, SacPolicyInfo& info, SacBatchingPolicyInfo& binfo,
                            SacAgent& agent, SacAgent& batching_agent, const CheckpointFiles& files, double wall_s, double last_return) {
  info.provenance =
      "trained by coinfer train sac (" + o.command_line + ") on " + join(o.scenarios, ", ") + ": " + std::to_string(o.episodes) + " episodes, seed " +
      std::to_string(o.seed) +
      (o.keep_bandwidth ? ", the scenarios' own bandwidths" : ", random bandwidth traces " + fmt(o.bw_min) + "-" + fmt(o.bw_max) + " Mbit/s");
  info.episodes = o.episodes;
  for (const auto& ts : scenarios) info.scenarios.push_back(ts.scenario.name);
  if (o.learn_batching) {
    binfo.provenance = info.provenance + "; the batching agent beside it";
    binfo.episodes = o.episodes;
    binfo.scenarios = info.scenarios;
    save_sac_batching_policy(files.batching_policy, binfo, batching_agent.actor());
    info.batching_policy = fs::path(files.batching_policy).filename().string();
    std::error_code ec;
    fs::remove(files.batching + ".prev", ec);
  }
  agent.save_policy(o.out, info);
  if (!o.quiet)
    std::cout << "trained " << o.episodes << " episodes in " << cli::format_duration(wall_s) << "; last return " << fmt(last_return)
              << ", temperature " << fmt(agent.alpha()) << "; wrote " << o.out
              << (o.learn_batching ? " and its batching policy " + files.batching_policy : std::string()) << " (checkpoint " << files.agent
              << ", learning curve " << files.curve << ")\n";
}

int train(TrainOptions& o) {
  torch::set_num_threads(o.threads);
  set_blas_threads(o.threads);  // OpenBLAS's pool ignores LibTorch's count (plumbing/blas_threads.hpp)
  if (o.bw_min <= 0 || o.bw_max < o.bw_min) throw InputError(SourceLocation{"--bandwidth", 0, 0}, "--bandwidth", "expected 0 < MIN <= MAX");
  if (o.step_min <= 0 || o.step_max < o.step_min) throw InputError(SourceLocation{"--trace-step", 0, 0}, "--trace-step", "expected 0 < MIN <= MAX");
  cli::check_output_folder(fs::path(fs::absolute(o.out)).parent_path().string(), "--out");
  std::set<std::string> models;
  const std::vector<TrainScenario> scenarios = load_training_scenarios(o, models);
  SacBatchingPolicyInfo binfo;
  if (o.learn_batching) binfo.candidates = shared_batching_candidates(scenarios), binfo.hidden = o.hyper.hidden;
  const CheckpointFiles files(o.out);
  const std::string work = o.out + ".episodes";
  SacPolicyInfo info;
  info.hidden = o.hyper.hidden;
  info.allow_data_parallel = o.hyper.allow_data_parallel;
  info.models = {models.begin(), models.end()};
  info.placement_policy = o.placement_policy;
  const nlohmann::json identity = checkpoint_identity(o, binfo);
  SacAgent agent(o.hyper, o.seed);
  // The batching agent: its own networks and buffer over the server observation, its own seed.
  SacHyperParams bh = o.hyper;
  bh.features = sac_batching_feature_count();
  SacAgent batching_agent(bh, RandomStream(o.seed, StreamPurpose::sac_batching, 0).next_u64());
  TrainingProgress done = resume(o, identity, files, agent, batching_agent, bh);
  fs::create_directories(work);
  // The episodes' folders go whatever happens (a failed episode's log is in the error message).
  struct RemoveAtExit {
    std::string dir;
    ~RemoveAtExit() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_work{work};
  const std::string current = work + "/policy-current.pt", current_batching = work + "/policy-current.pt.batching";
  cli::ProgressLine progress("train sac", o.quiet, 5);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return done.wall_s + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double last_return = NAN;
  while (done.episodes < o.episodes) {
    const int round_index = done.episodes / std::max(1, o.workers);
    const int n = std::min(o.workers, o.episodes - done.episodes);
    agent.save_policy(current, info);
    if (o.learn_batching) save_sac_batching_policy(current_batching, binfo, batching_agent.actor());
    std::vector<Episode> round;
    for (int w = 0; w < n; ++w)
      round.push_back(make_episode(o, scenarios, done.episodes + w, work, fs::absolute(current).string(),
                                   o.learn_batching ? fs::absolute(current_batching).string() : ""));
    const std::vector<EpisodeResult> results = run_round(round, o);
    // One environment step is one decision (every device acts at once; each device's step is a transition).
    int decisions = 0;
    for (const auto& r : results) {
      for (const auto& t : r.transitions) agent.add(t);
      decisions += r.decisions;
    }
    const int updates = static_cast<int>(std::ceil(decisions * o.updates_per_decision));
    const SacUpdateStats st = agent.update(updates, static_cast<std::uint64_t>(round_index));
    if (o.learn_batching) {
      for (const auto& r : results)
        for (const auto& t : r.server_transitions) batching_agent.add(t);
      batching_agent.update(updates, static_cast<std::uint64_t>(round_index));
    }
    for (int w = 0; w < n; ++w) {
      done.curve_text += curve_row(round[static_cast<size_t>(w)], results[static_cast<size_t>(w)], st, elapsed());
      last_return = results[static_cast<size_t>(w)].episode_return;
      fs::remove_all(round[static_cast<size_t>(w)].dir);
      fs::remove_all(round[static_cast<size_t>(w)].dir + "-in");
    }
    done.episodes += n;
    nlohmann::json prog{{"identity", identity}, {"episodes", done.episodes}, {"wall_s", elapsed()}};
    // The curve first, then the checkpoint: a kill between the two repeats this round's rows, never loses them.
    write_text_atomic(files.curve, done.curve_text);
    // The batching agent's first, its previous one kept: a kill before the main checkpoint is written
    // resumes from the previous round of both.
    if (o.learn_batching) {
      if (fs::exists(files.batching)) fs::rename(files.batching, files.batching + ".prev");
      batching_agent.save_checkpoint(files.batching, info, prog.dump());
    }
    agent.save_checkpoint(files.agent, info, prog.dump());
    progress.update(done.episodes, o.episodes,
                    strprintf("episode %d, return %.2f, temperature %.3g, buffer %zu", done.episodes, last_return, st.alpha, agent.buffer_size()));
  }
  progress.finish();
  write_trained_policies(o, scenarios, info, binfo, agent, batching_agent, files, elapsed(), last_return);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "coinfer train: SparOA's Soft Actor-Critic trained in simulation (sac: the device-level scheduler; sparoa: operator placement on a board)"};
  app.name("coinfer train");
  app.require_subcommand(1);
  TrainOptions o;
  CLI::App* tr = app.add_subcommand("sac", "train a SAC scheduling policy on simulated episodes of the scenarios (sched/README.md \"SAC\")");
  tr->add_option("scenarios", o.scenarios, "scenario files; episodes take them in turn")->required()->check(CLI::ExistingFile);
  tr->add_option("--out", o.out, "policy file to write (e.g. policy.pt); POLICY.ckpt and POLICY.learning.csv are written beside it")->required();
  tr->add_option("--episodes", o.episodes, "episodes in all (default 40)")->check(CLI::Range(1, 1000000));
  tr->add_option("--workers", o.workers, "episodes simulated at once, one process each (default 2)")->check(CLI::Range(1, 256));
  tr->add_option("--seed", o.seed, "seed of the weights, the episodes and the mini-batches (default 1)");
  tr->add_option("--period", o.period_s, "decision period (s) for scenarios without scheduler.period_s (default 1)")->check(CLI::Range(1e-3, 1e6));
  std::vector<double> bw, step;
  tr->add_option("--bandwidth", bw, "random traces' range MIN MAX in Mbit/s (default 1 100)")->expected(2);
  tr->add_option("--trace-step", step, "random traces' time between changes MIN MAX in s (default 2 8)")->expected(2);
  tr->add_flag("--keep-bandwidth", o.keep_bandwidth, "no random traces: the scenarios' own link bandwidths");
  tr->add_option("--joins", o.join_probability, "probability that a device entry joins late in an episode, at U(0, duration/2) (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  tr->add_option("--load-spread", o.load_spread,
                 "vary each device entry's load per episode by a log-uniform factor in [1/X, X]: closed loop in_flight (from its own or 1.5), "
                 "poisson rate_per_s (default 1: unchanged)")
      ->check(CLI::Range(1.0, 100.0));
  tr->add_option("--episode-duration", o.duration_s, "simulated seconds per episode (default: the scenario's duration_s)")
      ->check(CLI::Range(0.1, 1e6));
  tr->add_option("--updates-per-decision", o.updates_per_decision,
                 "gradient steps per decision of the episodes (default 8; SB3 makes 1 per environment step)")
      ->check(CLI::Range(0.0, 1000.0));
  tr->add_option("--hidden", o.hyper.hidden,
                 "hidden width of the two layers of each network (default 64; the SAC paper's 256 learns slower per second)")
      ->check(CLI::Range(1, 8192));
  tr->add_option("--lr", o.hyper.learning_rate, "Adam learning rate (default 1e-3; the SAC paper's 3e-4 learns slower per episode)")
      ->check(CLI::Range(1e-7, 1.0));
  tr->add_option("--gamma", o.hyper.gamma, "discount per decision (default 0.9)")->check(CLI::Range(0.0, 0.9999));
  tr->add_option("--tau", o.hyper.tau, "target networks' Polyak coefficient (default 0.005)")->check(CLI::Range(1e-6, 1.0));
  tr->add_option("--batch", o.hyper.batch_size, "mini-batch (default 256)")->check(CLI::Range(1, 1000000));
  tr->add_option("--buffer", o.hyper.buffer_size, "replay buffer capacity in transitions (default 1000000)")->check(CLI::Range(1, 100000000));
  tr->add_option("--alpha", o.hyper.initial_alpha, "initial temperature (default 1; learned, target entropy -1)")->check(CLI::Range(1e-6, 1e3));
  tr->add_option("--data-parallel", o.hyper.allow_data_parallel, "whether the action's last slot is data_parallel (default true)");
  tr->add_option("--lambda-latency", o.reward.latency, "reward weight of latency (default 1)")->check(CLI::Range(0.0, 1e6));
  tr->add_option("--lambda-energy", o.reward.energy, "reward weight of the link's MB per window (default 0)")->check(CLI::Range(0.0, 1e6));
  tr->add_option("--lambda-switching", o.reward.switching, "reward weight of a strategy switch (default 0.05)")->check(CLI::Range(0.0, 1e6));
  std::string objective = "throughput";
  tr->add_option("--objective", objective,
                 "throughput (default: the latency term is each device's time per result), latency (its mean request latency) or energy "
                 "(its energy per result in the window, from its records and its devices[].power: sched/README.md)")
      ->check(CLI::IsMember({"throughput", "latency", "energy"}));
  tr->add_option("--shared", o.reward.shared, "share of the system's mean latency in each device's latency term (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  tr->add_option("--threads", o.threads, "LibTorch intra-op threads of the learner (default 1; results are reproducible for a seed and thread count)")
      ->check(CLI::Range(1, 256));
  tr->add_flag("--restart", o.restart, "ignore an existing checkpoint and begin again");
  tr->add_option("--placement-policy", o.placement_policy,
                 "operator-level mode: a SparOA policy (coinfer train sparoa --any-split) places each device's board stages after the SAC's split, "
                 "in training and wherever the policy runs (recorded in it)")
      ->check(CLI::ExistingFile);
  tr->add_flag("--learn-batching", o.learn_batching,
               "also learn each server's batch window and size: a second SAC agent per server chooses among the scenarios' "
               "scheduler.batch_windows_ms x batch_sizes (the same in every scenario) and writes POLICY.batching, which the policy names "
               "(sched/README.md \"Batching learned by SAC\")");
  coinfer::cli::SparoaTrainCommand sparoa(app);
  if (const int rc = coinfer::cli::parse_command_line(app, argc, argv, o.command_line); rc >= 0) return rc;
  if (sparoa.chosen()) {
    // One thread, as the learner's determinism is stated (sched/sparoa_learner.hpp): the same policy on every machine.
    torch::set_num_threads(1);
    coinfer::set_blas_threads(1);
    return coinfer::cli::guarded([&] { return sparoa.run(o.command_line); });
  }
  if (bw.size() == 2) o.bw_min = bw[0], o.bw_max = bw[1];
  if (!o.placement_policy.empty()) o.placement_policy = std::filesystem::absolute(o.placement_policy).string();
  if (step.size() == 2) o.step_min = step[0], o.step_max = step[1];
  o.reward.per_result = objective != "latency";
  o.reward.energy_per_result = objective == "energy";
  o.quiet = coinfer::cli::quiet("train");
  return coinfer::cli::guarded([&] { return train(o); });
}
