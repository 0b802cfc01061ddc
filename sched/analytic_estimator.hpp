#pragma once
// Analytic estimator: per-device latency and system throughput of a scheme from the LUTs, the link
// bandwidths and an explicit queueing model of each edge server (batch window and size, workers).
// Formulas in sched/README.md. Engine-free and deterministic.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "core/scheduler.hpp"

namespace coinfer {

struct DevicePrediction {
  std::string id;
  double latency_s = 0;       // mean request latency (created -> result)
  double throughput_rps = 0;  // completed requests per second
  double server_rps = 0;      // of which go through the server
  // Open loop: the arrival rate, and what of it the scheme cannot serve (> 0: the device saturates,
  // its queue grows for the rest of the run and latency_s includes that growth; ~0 for closed loops).
  double offered_rps = 0, unserved_rps = 0;
  bool saturated() const { return unserved_rps > 1e-9 * std::max(1.0, offered_rps); }
};

struct Prediction {
  std::vector<DevicePrediction> devices;             // connected devices, in state order
  double throughput_rps = 0;                         // sum over devices (ACE-GNN's system throughput)
  double mean_latency_s = 0;                         // throughput-weighted mean latency (what a request sees)
  double mean_device_latency_s = 0;                  // unweighted mean over devices (the latency objective)
  std::map<std::string, double> server_utilisation;  // busy workers / workers
  double offered_rps = 0, unserved_rps = 0;          // sums over the open-loop devices
  // The devices' power (idle, compute and radio: devices[].power) and energy per completed request
  // (what summary.json's energy_j_per_inference measures; +inf without throughput), and the p95 of
  // request latency (sched/README.md "Energy and tail latency").
  double power_w = 0, energy_per_inference_j = 0;
  double p95_latency_s = 0;
  int serves_nothing = 0;  // devices with a path predicted to serve nothing (out of memory, its server down)
  int num_devices = 0;     // devices taking part (connected, with inputs of their own): devices.size() when listed
};

// What "better" means when schedulers compare schemes.
enum class Objective { throughput, latency, energy };
Objective parse_objective(const std::string& text);  // "throughput" | "latency" | "energy"; std::invalid_argument otherwise

// Conditions a scheme must meet (scheduler.max_p95_ms, min_throughput_rps, max_energy_j); a scheme
// meeting them beats one that does not, whatever the objective; among schemes that miss, the one
// missing by less (the sum of relative excesses) wins.
struct Constraints {
  double max_p95_s = std::numeric_limits<double>::infinity();
  double min_throughput_rps = 0;
  double max_energy_j = std::numeric_limits<double>::infinity();  // per inference
  bool any() const { return std::isfinite(max_p95_s) || min_throughput_rps > 0 || std::isfinite(max_energy_j); }
  // The ones `p` misses, as text ("p95 412.3 ms > 100 ms"); empty when all are met.
  std::vector<std::string> missed(const Prediction& p) const;
};

// Per-state working data of the estimator (sched/analytic_estimator.cpp): devices resolved once per
// state, each distinct (device, strategy) once, and each server's solution per distinct placement of
// its devices.
struct AnalyticStateCache;

class AnalyticEstimator : public Estimator {
 public:
  // `luts` must outlive the estimator.
  AnalyticEstimator(const LutSet& luts, ModelSpecs models, Objective objective = Objective::throughput, Constraints constraints = {});
  ~AnalyticEstimator() override;
  Prediction predict(const SystemState& state, const Scheme& scheme) const;
  // predict()'s system figures only: no per-device list or server utilisation, and the p95 only where a
  // max_p95_ms constraint needs it (NaN otherwise). What a search over many parts asks (sched/server_choice.cpp).
  Prediction predict_figures(const SystemState& state, const Scheme& scheme) const;
  // System throughput (requests/s).
  double score(const SystemState& state, const Scheme& scheme) const override;
  // > 0 when a is better. First, whatever the objective: fewer open-loop arrivals left unserved
  // (relative to the offered rate, beyond 1e-6). Objective throughput: higher system throughput (relative difference beyond
  // 1e-9), ties broken by lower mean latency. Objective latency: ACE-GNN's relative performance
  // R = L_b / L_a (mean over devices of each device's latency) minus 1, ties broken by throughput.
  double compare(const SystemState& state, const Scheme& a, const Scheme& b) const override;
  // compare() on two predictions already made (predict(), or figures summed over disjoint parts of a
  // system, sched/server_choice.cpp): the same rule, their p95 taken as given (NaN: not known; a p95
  // constraint then counts as met).
  double compare_predictions(const Prediction& a, const Prediction& b) const;
  // Estimator::best_of's walk, with the state checked once for all candidates.
  int best_of(const SystemState& state, const Scheme& incumbent, const std::vector<Scheme>& candidates) const override;
  // The same on edits of `base`, without building the edited schemes: a candidate costs the servers
  // its edit reaches and a sum over the devices' compact figures (sched/README.md "Complexity and
  // decision time"); a held base (hold_base) is not compared again.
  int best_of_edits(const SystemState& state, const Scheme& base, const SchemeEdit& incumbent,
                    const std::vector<SchemeEdit>& candidates) const override;
  std::string describe() const override { return "analytic"; }
  // predict()'s figures and the constraints' verdict, for the decision records.
  RecordFigures figures_for_record(const SystemState& state, const Scheme& scheme) const override;
  void hold_state(const SystemState* state) const override;
  void hold_base(const Scheme* base) const override;
  void base_edited(const SchemeEdit& edit) const override;
  const ModelSpec& model(const std::string& model, const std::string& dataset) const;
  const LutSet& luts() const { return luts_; }
  const ModelSpecs& models() const { return models_; }
  Objective objective() const { return objective_; }
  const Constraints& constraints() const { return constraints_; }

 private:
  // score, compare and best_of remember the state they were last asked about (until a different state
  // comes, compared field by field) and, for it, every device's resolved strategies and every server's
  // solution per placement of its devices (up to kMemoBytes, then it starts over): a search compares
  // many candidates with one incumbent, each changing a few devices, and only the servers of the
  // devices that changed are solved again, starting from its latest solution. Thread-safe (one lock).
  // A server's fixed point is reached to 1e-13 a round, so answers through the cache and predict() agree
  // to about that (not bit for bit: where a solution starts from depends on what was asked before).
  AnalyticStateCache& cache_for(const SystemState& state) const;  // with cache_mutex_ held
  Prediction predict(const SystemState& state, const Scheme& scheme, bool whole) const;
  mutable std::mutex cache_mutex_;
  mutable std::unique_ptr<AnalyticStateCache> cache_;
  // The state a search holds (Estimator::hold_state), and whether cache_ is for it: then cache_for does
  // not compare it again (a decision at 100 devices spent 8 % of its instructions comparing).
  mutable const SystemState* held_ = nullptr;
  mutable bool held_cached_ = false;
  // The base a search holds (Estimator::hold_base), and whether cache_'s base is it as it is now: then
  // best_of_edits does not compare it again (a hierarchical decision at 1,000 devices spent a quarter
  // of its instructions comparing), and an edit of it re-solves only the servers the edit reaches.
  mutable const Scheme* held_base_ = nullptr;
  mutable bool held_base_cached_ = false;
  static constexpr size_t kMemoBytes = size_t{64} << 20;

  const LutSet& luts_;
  ModelSpecs models_;
  Objective objective_;
  Constraints constraints_;
};

}  // namespace coinfer
