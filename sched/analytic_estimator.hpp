#pragma once
// Analytic estimator: per-device latency and system throughput of a scheme from the LUTs, the link
// bandwidths and an explicit queueing model of each edge server (batch window and size, workers).
// Formulas in sched/README.md. Engine-free and deterministic.
#include <map>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "core/scheduler.hpp"

namespace coinfer {

// Model specs by "model/dataset".
using ModelSpecs = std::map<std::string, ModelSpec>;

struct DevicePrediction {
  std::string id;
  double latency_s = 0;       // mean request latency (created -> result)
  double throughput_rps = 0;  // completed requests per second
  double server_rps = 0;      // of which go through the server
};

struct Prediction {
  std::vector<DevicePrediction> devices;  // connected devices, in state order
  double throughput_rps = 0;              // sum over devices (ACE-GNN's system throughput)
  double mean_latency_s = 0;              // throughput-weighted mean latency (what a request sees)
  double mean_device_latency_s = 0;       // unweighted mean over devices (the latency objective)
  std::map<std::string, double> server_utilisation;  // busy workers / workers
};

// What "better" means when schedulers compare schemes.
enum class Objective { throughput, latency };
Objective parse_objective(const std::string& text);  // "throughput" | "latency"; std::invalid_argument otherwise

class AnalyticEstimator : public Estimator {
 public:
  // `luts` must outlive the estimator.
  AnalyticEstimator(const LutSet& luts, ModelSpecs models, Objective objective = Objective::throughput)
      : luts_(luts), models_(std::move(models)), objective_(objective) {}
  Prediction predict(const SystemState& state, const Scheme& scheme) const;
  // System throughput (requests/s).
  double score(const SystemState& state, const Scheme& scheme) const override;
  // > 0 when a is better. Remembers every prediction made for the current state (until the state
  // changes, or kMemoBytes of keys): a search compares many candidates with one incumbent and its
  // climbs revisit schemes, each predicted once (thread-safe; equal inputs, the very same result). Objective throughput: higher system throughput (relative difference beyond
  // 1e-9), ties broken by lower mean latency. Objective latency: ACE-GNN's relative performance
  // R = L_b / L_a (mean over devices of each device's latency) minus 1, ties broken by throughput.
  double compare(const SystemState& state, const Scheme& a, const Scheme& b) const override;
  std::string describe() const override { return "analytic"; }
  const ModelSpec& model(const std::string& model, const std::string& dataset) const;
  const LutSet& luts() const { return luts_; }
  const ModelSpecs& models() const { return models_; }
  Objective objective() const { return objective_; }

 private:
  Prediction predict_cached(const SystemState& state, const Scheme& scheme) const;
  // Predictions for one state, keyed by the scheme's compact text (scheme_memo_key).
  mutable std::mutex cache_mutex_;
  mutable bool memo_valid_ = false;
  mutable SystemState memo_state_;
  mutable std::unordered_map<std::string, Prediction> memo_;
  mutable size_t memo_bytes_ = 0;
  static constexpr size_t kMemoBytes = size_t{64} << 20;  // keys and predictions, roughly; then it starts over

  const LutSet& luts_;
  ModelSpecs models_;
  Objective objective_;
};

}  // namespace coinfer
