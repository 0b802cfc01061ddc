#pragma once
// Per-module latency regressors (the MEDN paper, docs/PAPERS.md): for each
// op ("module") a linear regression (LR), a random forest (RF, models/random_forest.hpp, configured as
// nn-Meter's), a multi-layer perceptron (MLP) and the multi-task encoder-decoder network (MEDN: an
// encoder into a latent space, a prediction decoder for the latency and a reconstruction decoder for the
// inputs, trained on a weighted sum of both losses) are fitted on measured samples, and the paper's
// Algorithm 1 picks one per op, with model size (space-efficient) and with time per sample
// (time-efficient) as its extra objective. MEDN's ablations (Sec. 3.3) are regressors of their own:
// MEDN-D without the reconstruction decoder, MEDN-XI without the inferable parameters, MEDN-XM without
// the measurable ones, MEDN-R with the sampling parameters only (they need the features' classes).
//
// What follows the paper: the parameter classes (sampling, measurable, inferable), the 7:1:2
// train/validation/test split, min-max scaled inputs, Smooth L1 losses, Adam at learning rate 0.005
// for 500 epochs, MEDN's encoder [64, 32, 16] with a symmetric reconstruction decoder and a prediction
// decoder halving to 1 (Table 4's encoder widths and loss weight ratio where the caller passes them),
// and Algorithm 1 with eps_a = eps_r = 0.05 on P20 accuracy then R^2 (validation set). `chosen` is the
// space-efficient selection (deterministic); `chosen_time` the time-efficient one (time per sample is
// measured, so it may differ between runs). Where we differ, and why: inputs are log1p'd before min-max scaling and the target
// is log(latency), because module latencies span five orders of magnitude and the error that matters
// is relative (LR on log features is then a power law, latency ~ prod feature^a); R^2 is computed on
// log latency for the same reason, and the networks fit it standardised (mean 0, std 1 over the
// training samples: from a zero-mean start Adam at 0.005 would need thousands of epochs to reach log
// latencies near -10); hidden layers use LeakyReLU(0.01) (with ReLU, MEDN's 2-wide decoder layer died
// and predicted a constant in tests); the MLP is [64, 32] (SWFU's exact configuration is not given);
// MEDN's reconstruction : prediction weight is 1 unless given. A model's size counts what prediction
// needs: float32 weights of the MLP, of MEDN's encoder and prediction decoder (the reconstruction
// decoder is only for training), LR's double coefficients, the RF's serialised forest.
//
// Torch stays inside the .cpp: this header is plain C++. Fitting is deterministic for a seed (one
// intra-op thread while fitting). Not thread-safe.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/module_features.hpp"
#include "models/random_forest.hpp"

namespace coinfer::models {

enum class RegressorKind { lr, rf, mlp, medn, medn_d, medn_xi, medn_xm, medn_r };
const char* regressor_name(RegressorKind k);  // "lr", "rf", "mlp", "medn", "medn-d", "medn-xi", "medn-xm", "medn-r"
// Every kind, in the order above; the parse of a name (std::nullopt when unknown).
const std::vector<RegressorKind>& all_regressor_kinds();
std::optional<RegressorKind> regressor_kind_named(const std::string& name);

// Accuracy of a regressor on a set of samples.
struct RegressorScore {
  double p10 = 0, p20 = 0;  // share of samples predicted within 10 % / 20 % of the measured latency
  double mape = 0;          // mean absolute percentage error (0.08 = 8 %)
  double r2 = 0;            // coefficient of determination on log latency
  long long samples = 0;
};

struct RegressorFitOptions {
  std::uint64_t seed = 1;
  int epochs = 500;
  double learning_rate = 0.005;
  double epsilon_accuracy = 0.05, epsilon_r2 = 0.05;  // Algorithm 1's tolerances
  int min_samples = 10;                               // an op with fewer measured samples gets no regressor
  std::vector<RegressorKind> kinds = {RegressorKind::lr, RegressorKind::mlp, RegressorKind::medn};  // fitted, and chosen among
  // The features' names and classes ("sampling", "measurable", "inferable"), in the samples' order.
  // Names empty: core/module_features.hpp's. Classes empty: MEDN's ablations cannot be fitted.
  std::vector<std::string> feature_names, feature_classes;
  std::vector<std::int64_t> medn_encoder = {64, 32, 16};  // hidden widths after the input (Table 4)
  double medn_weight_ratio = 1;                           // reconstruction loss weight : prediction loss weight (Table 4)
  std::vector<std::int64_t> mlp_hidden = {64, 32};
  RandomForestOptions forest;
  int timing_samples = 200;  // test samples predicted one at a time for the time per sample
};

// One op's fitted regressors and the choice among them.
struct ModuleFit {
  std::string op;
  long long train = 0, validation = 0, test = 0;  // samples in each split
  std::map<RegressorKind, RegressorScore> validation_scores, test_scores;
  std::map<RegressorKind, long long> parameters;       // learned values (an RF: its tree nodes)
  std::map<RegressorKind, long long> size_bytes;       // model size (see above)
  std::map<RegressorKind, double> time_per_sample_ms;  // median over single-sample predictions (scaling included)
  RegressorKind chosen = RegressorKind::lr;            // Algorithm 1, space-efficient
  RegressorKind chosen_time = RegressorKind::lr;       // Algorithm 1, time-efficient
  std::vector<std::string> feature_names;
  std::vector<double> feature_min, feature_max;  // of the training samples (raw features)
};

class ModuleLatencyModel {
 public:
  ModuleLatencyModel();
  ~ModuleLatencyModel();
  ModuleLatencyModel(ModuleLatencyModel&&) noexcept;
  ModuleLatencyModel& operator=(ModuleLatencyModel&&) noexcept;

  // Fits every op that has at least min_samples samples; ops with fewer are listed in skipped().
  // progress (may be empty) is called with (ops done, ops in all, op).
  static ModuleLatencyModel fit(const std::vector<ModuleSample>& samples, const RegressorFitOptions& options,
                                const std::function<void(int, int, const std::string&)>& progress = {});

  bool has_op(const std::string& op) const;
  // The chosen regressor's prediction (seconds). Throws std::out_of_range for an op without a fit.
  double predict_seconds(const std::string& op, const std::vector<double>& features) const;
  // Any fitted regressor of an op (for reports and tests). std::out_of_range for a kind not fitted.
  double predict_seconds(const std::string& op, RegressorKind kind, const std::vector<double>& features) const;
  // Names of the features outside the op's training range (empty when inside).
  std::vector<std::string> outside_training_range(const std::string& op, const std::vector<double>& features) const;

  const std::vector<ModuleFit>& fits() const { return fits_; }
  const ModuleFit& fit_of(const std::string& op) const;                         // std::out_of_range if none
  const std::map<std::string, long long>& skipped() const { return skipped_; }  // op -> samples it had

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<ModuleFit> fits_;
  std::map<std::string, long long> skipped_;
};

// Algorithm 1 for one module: the candidates within epsilon_accuracy of the best P20, then within
// epsilon_r2 of the best R^2 among those, then the least extra objective (model size, or time per
// sample). Ties keep RegressorKind's order. Throws std::invalid_argument when a candidate lacks its
// extra objective, or there is none.
RegressorKind select_regressor(const std::map<RegressorKind, RegressorScore>& validation, const std::map<RegressorKind, double>& extra_objective,
                               double epsilon_accuracy, double epsilon_r2);

// The score of predictions against measurements (both in seconds, same length, measurements > 0).
RegressorScore score_predictions(const std::vector<double>& predicted_s, const std::vector<double>& measured_s);

}  // namespace coinfer::models
