#pragma once
// The Markov decision process that the SAC scheduler learns (SparOA section 4.2 applied to
// co-inference; sched/README.md "SAC"): what a device observes, how an action in [0, 1] becomes a
// strategy, and the reward of a decision window computed from a run's request records. Torch-free:
// the simulator, the real server and the learner (sched/sac_agent.*) all use these functions, so a
// policy sees the same numbers wherever it runs.
//
// One policy serves every device: each connected device with inputs of its own is one agent whose
// observation is its own features followed by features of its server and of the whole system, so a
// trained policy serves device counts it was not trained on.
#include <cstdint>
#include <string>
#include <vector>

#include "core/request_record.hpp"
#include "core/scenario.hpp"
#include "core/scheme.hpp"
#include "core/system_state.hpp"

namespace coinfer {

class AnalyticEstimator;

// The observation layout. Changing any feature's meaning or order changes kSacLayoutVersion; a policy
// file records the version and the names, and a policy for another layout is refused at load.
constexpr int kSacLayoutVersion = 1;
const std::vector<std::string>& sac_feature_names();
int sac_feature_count();
// log10(max(x, 1e-6)): how the observations (and the batching policy's) carry a time or a rate, floored
// so that 0 is a finite feature.
double sac_log_feature(double x);

// The action of one device, a in [0, 1], maps to the share of the model it runs: the slots are
// offload (k = 0), pp(1) .. pp(n-1), local (k = n), then, with data_parallel allowed, data_parallel;
// slot = min(floor(a * slots), slots - 1). strategy_action() is the centre of a strategy's slot.
Strategy action_strategy(double action, int num_stages, bool allow_data_parallel);
double strategy_action(const Strategy& s, int num_stages, bool allow_data_parallel);

struct SacObservation {
  std::string device;           // id
  int num_stages = 0;           // of its model
  std::vector<float> features;  // sac_feature_count() values
};

// Every connected device of `state` that creates inputs, in state order, with its features. Reads the
// LUTs and model specs through `est` (device and server stage latencies, bytes per split).
std::vector<SacObservation> sac_observe(const SystemState& state, const AnalyticEstimator& est, bool allow_data_parallel);

// What the SAC scheduler records with each decision (DecisionRecord::detail, as JSON): per device its
// observation, the action it took (in [0, 1]) and the strategy that action means.
struct SacStep {
  std::string device;
  std::vector<float> features;
  double action = 0;
  std::string strategy;
};
// With a batching policy (sched/sac_batching.hpp), per server: its observation, the action and the
// batching it chose, and the devices bound to it then (whose rewards are its reward).
struct SacServerStep {
  std::string server;
  std::vector<float> features;  // sac_batching_feature_count() values
  double action = 0;
  BatchSpec batching;
  std::vector<std::string> devices;
};
struct SacDecision {
  double t_s = 0;
  std::vector<SacStep> steps;
  std::vector<SacServerStep> servers;  // empty without a batching policy
};
std::string sac_decision_to_json(const SacDecision& d);
// Throws std::invalid_argument naming what is wrong (not a SAC record, a feature count that is not
// the layout's). Server steps are written with "sac_batching_layout" and read only when present.
SacDecision sac_decision_from_json(const std::string& text);

// reward = -(latency * L + energy * E + switching * S), per device and decision window [t0, t1):
//   L = (1 - shared) * l_i + shared * mean_j l_j, where l_i = ln(x_i) and x_i is, with objective
//       throughput (the default), device i's time per result (the window over the requests it
//       completed in it: the inverse of its throughput, so that two requests in flight count twice),
//       with objective latency its mean latency over those requests, in units of its own reference
//       latency (its best isolated latency at the decision, feature "best_isolated_s"); for a device
//       that completed none, the age of its oldest unfinished request at t1 (at least the window) in the same units:
//       a device that starves is charged for it. The logarithm makes "twice as slow" cost the same
//       (ln 2) for every device and keeps one starving device from drowning the others' signal;
//       With objective energy (energy_per_result), x_i is device i's energy per result in the window
//       in J (core/record_energy.hpp: idle, compute and radio rebuilt from its records and its power;
//       no reference: ln J), the whole window's energy for a device that completed none;
//   E = device i's bytes on its link in the window, in MB (the radio energy's driver);
//   S = 1 when the decision switched device i's strategy, else 0.
struct SacRewardWeights {
  double latency = 1, energy = 0, switching = 0.05, shared = 0.5;
  bool per_result = true;          // objective throughput: time per result; false (objective latency): mean latency
  bool energy_per_result = false;  // objective energy: energy per result (needs the devices' power)
};

// The latency term l_i of one device over a window of `window_s` seconds (see above): from the
// requests it completed in it (`done`, their latencies summing to `latency_sum_s`), else, when it still
// has unfinished requests, the age of the oldest (`oldest_s`, at least the window); NaN when it had
// nothing to measure. `ref_s` is its reference latency.
double sac_latency_term(const SacRewardWeights& w, double window_s, long long done, double latency_sum_s, bool waiting, double oldest_s,
                        double ref_s);
// The rewards of the devices of one window from their latency terms (NaN: takes the mean), the MB on
// their links and whether each was switched.
std::vector<double> sac_window_rewards(const SacRewardWeights& w, const std::vector<double>& l, const std::vector<double>& mb,
                                       const std::vector<bool>& switched);
// The reference latency (s) recorded in an observation (feature "log10_best_isolated_s").
double sac_reference_s(const std::vector<float>& features);

struct SacTransition {
  std::vector<float> obs, next_obs;
  float action = 0, reward = 0;
  bool done = false;  // the episode's arrivals ended within the window
};

// The transitions of one episode: each decision's step of a device, its reward over the window up to
// the next decision (or `end_s`, the end of the arrivals), and the device's next observation (the
// same observation with done at the end). `requests`: the run's request records, `device_ids` the
// scenario's device ids (RequestRecord::device indexes it). `returns` (optional) receives the sum of
// rewards per decision, for progress and learning curves.
// `power` (per device, device_ids order) is needed with w.energy_per_result (std::invalid_argument
// without it). `server_transitions` (optional) receives the transitions of the decisions' server steps:
// a server's reward is the mean of the rewards of its step's devices that took a step in that decision
// (a server none of whose devices did gets no transition); its next observation is its step in the next
// decision (done: none, or the last window).
std::vector<SacTransition> sac_transitions(const std::vector<SacDecision>& decisions, const std::vector<RequestRecord>& requests,
                                           const std::vector<std::string>& device_ids, double end_s, const SacRewardWeights& w,
                                           double* episode_return = nullptr, const std::vector<PowerSpec>* power = nullptr,
                                           std::vector<SacTransition>* server_transitions = nullptr);

// The policy network's forward pass, implemented by the learned part of sched/ (LibTorch, loaded as a
// plugin): for each observation, the mean and log standard deviation of the pre-squash Gaussian.
class SacActor {
 public:
  virtual ~SacActor() = default;
  virtual void forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const = 0;
  virtual std::string describe() const = 0;
  // Online learning (scheduler.online): adds the transitions and makes `steps` gradient steps. Only an
  // actor loaded with its training checkpoint can learn.
  virtual bool can_learn() const { return false; }
  // Reasons not to trust this policy's decisions on the scenario named `scenario_name` (too few
  // training episodes, never trained on it), one sentence each, for the run's log. Empty: none known.
  virtual std::vector<std::string> trust_warnings(const std::string& scenario_name) const { return {}; }
  virtual void learn(const std::vector<SacTransition>& transitions, int steps) {}
  // The operator-level mode the policy was trained in: the SparOA policy file that placed each device's
  // board stages during training (scheduler.placement_policy); "" for the device-level mode.
  virtual std::string placement_policy() const { return ""; }
  // Learned batching: the batching policy trained with this one (a path; "" none).
  virtual std::string batching_policy() const { return ""; }
};

// a = (tanh(u) + 1) / 2 with u = mean (deterministic) or mean + exp(log_std) * noise, noise ~ N(0, 1).
double sac_squash(double mean, double log_std, double noise);
// A standard normal draw by Box-Muller from two uniform (0, 1) numbers.
double standard_normal(double u1, double u2);

}  // namespace coinfer
