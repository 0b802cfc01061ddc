#pragma once
// ACE-GNN's learned system predictors (paper section III-B, "System Performance Prediction" and
// "Relative Performance Prediction"; docs/PAPERS.md: ACE-GNN), in LibTorch:
//   system predictor    2 GIN layers (hidden 512), global mean pooling, a regression head -> system
//                       throughput (requests/s). It predicts log-throughput (schemes span 0.1 .. 10^4
//                       req/s) and trains on the L1 error of the log, a symmetric relative error. The
//                       paper's MAPE loss, tried first through exp() of the head, collapsed to
//                       predicting ~0 (MAPE's minimum for a weak fit: 99 % validation MAPE here).
//   relative predictor  two GIN feature extractors (one per scheme of the pair, same system), their
//                       pooled embeddings concatenated with their difference (ours: the paper does not
//                       say how the two are joined; the difference made ranking easier to learn), an
//                       MLP and a softmax over {a better, b better};
//                       binary cross-entropy on pairs of samples of one system whose throughputs differ
//                       by more than 1 %, both orders. At inference P(a better) is symmetrised:
//                       (p(a, b) + 1 - p(b, a)) / 2.
// GIN layer: h' = ReLU(MLP((1 + eps) h + AGG_{j -> i} h_j)), MLP = Linear-ReLU-Linear, eps learned
// (init 0); AGG add (the paper's choice), mean or max over in-edges (the graph's own self-loops
// included). Inputs: sched/system_graph.hpp's feature columns under a FeatureNormalisation fitted on
// the training set's latencies (stored with the model).
//
// Torch stays in the .cpp. Training is deterministic for (seed, threads). Not thread-safe. A model
// file is a torch::serialize archive (loadable from C++ without Python) holding both networks and a
// JSON "meta" (layout, normalisation, sizes, training range and provenance).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/system_graph.hpp"

namespace coinfer {

// A labelled graph for training and evaluation.
struct TrainingSample {
  GraphInput graph;
  double throughput_rps = 0;
  std::int64_t system = 0;           // samples of one system (same hardware, bandwidths) share it: relative pairs
  std::string device_types, models;  // comma-separated (training range)
};

struct GinConfig {
  int hidden = 512;
  int layers = 2;
  std::string aggregation = "add";  // add | mean | max
  FeatureNormalisation::Kind normalisation = FeatureNormalisation::Kind::log_minmax;
  std::string layout = kFeatureLayoutPaper;  // kFeatureLayoutPaper | kFeatureLayoutHint
};

struct GinTrainOptions {
  std::uint64_t seed = 1;
  int epochs = 200;
  int patience = 20;              // early stopping: epochs without a better validation loss
  int batch_size = 64;            // graphs (system) or pairs (relative) per step
  int pairs_per_epoch = 4096;     // relative pairs drawn per epoch (all when fewer)
  double learning_rate = 1e-3;    // Adam
  double validation_share = 0.3;  // the paper's 70/30 split (by sample)
  int threads = 1;
  bool system = true, relative = true;  // which predictors to train
  // Called once per epoch: predictor ("system" | "relative"), epoch, train loss, validation loss.
  std::function<void(const std::string&, int, double, double)> progress;
};

// Accuracy of throughput predictions (ACE-GNN Fig. 18) and of pairwise ranking.
struct PredictorAccuracy {
  long long samples = 0, pairs = 0;
  double within_10 = 0, within_20 = 0, mape = 0;  // shares (0.9 = 90 %)
  double pairwise = 0;                            // share of pairs (one system, throughputs > 1 % apart) ordered correctly
};
// Pairs for ranking: samples of one system whose throughputs differ by more than 1 %.
std::vector<std::pair<size_t, size_t>> ranking_pairs(const std::vector<TrainingSample>& samples);
// `predicted[i]` for samples[i]; `better[k]` > 0.5 when pair k's first sample is predicted better.
PredictorAccuracy accuracy(const std::vector<TrainingSample>& samples, const std::vector<double>& predicted,
                           const std::vector<std::pair<size_t, size_t>>& pairs, const std::vector<double>& better);

// Fewer held-out samples than this make a predictor's measured accuracy itself unreliable.
constexpr long long kGinTrustedValidationSamples = 100;

struct GinMeta {
  GinConfig config;
  FeatureNormalisation norm;
  bool has_system = false, has_relative = false;
  std::vector<std::string> device_types, models;  // seen in training
  double max_latency_ms = 0, max_hint_ms = 0;     // largest raw values seen in training
  long long train_samples = 0, validation_samples = 0, train_pairs = 0;
  PredictorAccuracy validation;  // on the held-out 30 %
  std::string provenance;        // what it was trained on, with which command
};

class GinPredictor {
 public:
  GinPredictor();
  ~GinPredictor();
  GinPredictor(GinPredictor&&) noexcept;
  GinPredictor& operator=(GinPredictor&&) noexcept;

  // Trains on `samples` (split 70/30 by options.validation_share).
  static GinPredictor train(const std::vector<TrainingSample>& samples, const GinConfig& config, const GinTrainOptions& options,
                            const std::string& provenance);
  // InputError naming the file for a missing, corrupt or foreign file, or a layout this build lacks.
  static GinPredictor load(const std::string& path);
  void save(const std::string& path) const;  // atomic
  const GinMeta& meta() const;
  // The metadata a saved file carries (format, configuration, normalisation, training range, the held-out
  // 30 %'s accuracy), as JSON text: the one writer of it (the file's "meta", `predictor train --json`).
  std::string meta_json_text() const;

  // System throughput (requests/s) of each graph, one forward pass.
  std::vector<double> throughput(const std::vector<const GraphInput*>& graphs) const;
  // P(first better than second) for each pair, one forward pass (symmetrised).
  std::vector<double> better_probability(const std::vector<std::pair<const GraphInput*, const GraphInput*>>& pairs) const;
  // What lies outside the training range: device types and models never seen, latencies beyond the
  // largest seen (with the factor). Empty when inside.
  std::vector<std::string> range_warnings(const GraphInput& g, const std::vector<std::string>& device_types,
                                          const std::vector<std::string>& models) const;
  // Why its predictions may not be trusted anywhere: a system predictor whose
  // held-out accuracy is poor (fewer than half within 20 %, ACE-GNN reports > 90 % within 10 %) or
  // measured on fewer than kGinTrustedValidationSamples samples. Empty when none.
  std::vector<std::string> trust_warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coinfer
