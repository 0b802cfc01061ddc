#pragma once
// SparOA's own problem (docs/PAPERS.md: SparOA, Sec. 4.1): the Markov decision
// process of placing one model's operators (our stages) on one board's CPU and GPU (or NPU), one
// step per stage, learned by the SAC of sched/sac_agent.hpp (sched/sparoa_learner.hpp trains it).
// Torch-free and engine-free: the trainer, the `placement` scheduler's rule `sac` and the tests all
// step the same environment. Prices are the simulator's own segment rule (core/device_plan.hpp
// segment_seconds) on the board's per-processor LUTs, so an episode is an inference "in simulation"
// (SparOA Alg. 1) and a step's latency is exactly what the simulator charges.
//
// State (Eq. 7) per step t, for stage t: {rho, I, N_in, N_out, M_gpu, M_cpu, O_switch}, scaled to
// about [0, 1] (sparoa_feature_names() gives the order):
//   rho      the stage's output sparsity measured by `coinfer profile` (LUT stage_output_sparsity);
//            0 with rho_known = 0 where the table has none (the shipped synthesised tables)
//   I        computational intensity: the stage's FLOPs per byte of its input, log10(1 + I) / 4
//   N_in     bytes of the stage's input (ModelSpec::bytes_at_split), log10(1 + N) / 9
//   N_out    bytes of its output, log10(1 + N) / 9
//   M_gpu    the accelerator's memory in use: weights of the stages placed on it so far plus the largest
//            working set (StageSpec::memory_bytes) among them, over its pool's capacity (0: not stated)
//   M_cpu    the CPU's load: its busy seconds over the device seconds so far (0 at the first step)
//   O_switch the seconds of moving this stage's input between processors, over the reference (0 on a
//            zero-copy board)
// Departures (sched/README.md "SparOA"), each because the paper's state is not Markov without it:
//   rho_known   whether rho was measured
//   prev_share  the previous stage's share on the accelerator (where this stage's input lies, which
//               decides whether O_switch is paid)
//   position    t / k (SparOA's BiLSTM threshold predictor sees the operator sequence; a feed-forward
//               actor needs the position to tell stages with equal features apart)
// and the threshold predictor's output for the stage (Sec. 3: "guiding operator scheduling"):
//   s_hat, c_hat   its sparsity threshold and its intensity threshold (scaled as I), both 0 without a
//                  predictor; thresholds_known 1 with one (SparOA Fig. 9's "+ Predictor")
// and, for a policy that serves every split between board and server (SparoaTrainOptions::any_split):
//   split_share    k / n, the share of the model's stages the board computes
//
// Action (Eq. 8): a in [0, 1], the stage's share on the accelerator, rounded to hundredths (so the
// placement's text form is exact); then 0.05 or less: the CPU alone, 0.95 or more: the accelerator alone (a
// squashed Gaussian's mean never reaches 0 or 1 exactly); otherwise the stage's output rows split,
// a on the accelerator and 1 - a on the CPU at once (core/placement.hpp; departure from Eq. 14's
// weighted average of two whole outputs, which keeps no output exact).
//
// Reward (Eq. 9): r_t = -(l1 k L_t / ref + l2 (M_gpu + M_cpu) + l3 O_t), where L_t = D(t + 1) - D(t) and
// D(j) is the device seconds of stages [0, j) as placed so far (segment_seconds summed, stage j not yet
// placed; D(k) the whole placement's, copies back and the wire's compression included), so the
// rewards' sum is exactly the placement's latency, ref the better of CPU-only and accelerator-only
// over the k stages (k L / ref: about -1 per step), O_t the switching seconds paid at step t over ref.
// Defaults l1 = 1, l2 = 0, l3 = 0: L already contains every copy and exchange the engine charges
// (the paper's separate O_switch would count them twice) and the board's memory is checked by the
// engine, not traded against latency.
#include <functional>
#include <string>
#include <vector>

#include "core/device_hardware.hpp"
#include "core/execution_time.hpp"
#include "core/placement.hpp"
#include "sched/sparoa_thresholds.hpp"

namespace coinfer {

class ModelSpec;
class LutTable;

constexpr int kSparoaLayoutVersion = 2;  // 2: the thresholds
const std::vector<std::string>& sparoa_feature_names();
int sparoa_feature_count();

struct SparoaRewardWeights {
  double latency = 1, memory = 0, switching = 0;
};

// The board an episode runs on: its hardware, the table of each processor (null: none), the model and
// the k stages it computes (the rest goes to the server). Borrowed: they must outlive the environment.
struct SparoaBoard {
  SparoaBoard() = default;
  SparoaBoard(const ModelSpec* model_, int k_, const DeviceHardware* hw_, std::vector<const LutTable*> tables_)
      : model(model_), k(k_), hw(hw_), tables(std::move(tables_)) {}
  const ModelSpec* model = nullptr;
  int k = 0;
  const DeviceHardware* hw = nullptr;
  std::vector<const LutTable*> tables;
  const ExecutionTimeModel* time = &lut_mean_time();
  // Per stage from the threshold predictor, for [0, k) at least (a policy for any split keeps the
  // model's n); empty: none.
  std::vector<StageThresholds> thresholds;
};

// One stage's unit: the CPU alone, the accelerator alone, or split (share on the accelerator).
struct SparoaUnit {
  int proc = 0, with = -1;
  double share = 1;
};

class SparoaEnvironment {
 public:
  // Throws std::invalid_argument when the board has no CPU or no accelerator (GPU, else NPU) with a
  // table, or k < 1.
  SparoaEnvironment(SparoaBoard board, SparoaRewardWeights w = {});

  // The share an action means: rounded to hundredths, then 0 at or below 0.05, 1 at or above 0.95.
  static double action_share(double action);

  void reset();
  int step_index() const { return t_; }
  int steps() const { return board_.k; }
  bool done() const { return t_ >= board_.k; }
  std::vector<float> observe() const;  // sparoa_feature_count() values for stage t
  // Places stage t by `action` and returns the reward; throws std::logic_error when done.
  double step(double action);

  // What the last step's reward was made of (for tests and the learning curve).
  double last_latency_s() const { return last_latency_s_; }
  double last_switch_s() const { return last_switch_s_; }
  // After the last step: the placement and its device seconds (placement_seconds of it).
  Placement placement() const;
  double device_seconds() const { return d_prev_; }
  double reference_seconds() const { return ref_s_; }
  int cpu() const { return cpu_; }
  int accelerator() const { return acc_; }

 private:
  SparoaBoard board_;
  SparoaRewardWeights w_;
  int cpu_ = -1, acc_ = -1;
  double ref_s_ = 0;
  int t_ = 0;
  std::vector<SparoaUnit> units_;  // stages [0, t)
  double d_prev_ = 0;              // D(t)
  double cpu_busy_s_ = 0;
  double last_latency_s_ = 0, last_switch_s_ = 0;
  SparoaUnit unit_of(double share) const;
  double prefix_seconds(int j, bool final_step) const;  // D(j)
  double accelerator_memory_fraction() const;
};

// The deterministic policy's placement: each step's action from `act(observation)` in [0, 1].
Placement sparoa_rollout(SparoaEnvironment& env, const std::function<double(const std::vector<float>&)>& act, double* device_seconds = nullptr);

// What a SparOA policy was trained on (recorded in the policy file; checked where it is used).
struct SparoaPolicyInfo {
  int layout_version = kSparoaLayoutVersion;
  std::vector<std::string> feature_names = sparoa_feature_names();
  int hidden = 64;
  std::string device_type;              // the board's type (traces/devices.yaml)
  std::vector<std::string> processors;  // its processors, in the device's order
  std::string model;                    // "model/dataset" (the variant's model name)
  int k = 0;                            // stages on the board; 0: any (trained over every split 1..n)
  int episodes = 0;
  double device_ms = 0;                     // the trained policy's placement, device ms alone on the board
  std::string placement;                    // its text form
  std::vector<StageThresholds> thresholds;  // what the threshold predictor gave its stages (empty: none)
  std::string thresholds_from;              // the predictor file
  std::string provenance;                   // the training command and what the tables are
};
std::string sparoa_info_to_json(const SparoaPolicyInfo& i);

// A trained policy as the `placement` scheduler uses it (implemented by the learned plugin,
// sched/sparoa_learner.hpp; loaded by sched/learned_plugin.hpp load_sparoa_policy).
class SparoaActor {
 public:
  virtual ~SparoaActor() = default;
  virtual const SparoaPolicyInfo& info() const = 0;
  // The deterministic action in [0, 1] for one observation (sparoa_feature_count() values).
  virtual double act(const std::vector<float>& obs) const = 0;
};

// The placement `policy` gives the board (a deterministic rollout), with its device seconds.
Placement sparoa_place(const SparoaActor& policy, const SparoaBoard& board, double* device_seconds = nullptr);
// Throws std::invalid_argument naming the key that is missing or wrong.
SparoaPolicyInfo sparoa_info_from_json(const std::string& text);

}  // namespace coinfer
