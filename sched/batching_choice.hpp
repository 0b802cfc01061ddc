#pragma once
// Batching as a decision: after a scheduler chose its scheme, each server's batch
// window and maximum size are chosen among the scenario's candidates (scheduler.batch_windows_ms,
// scheduler.batch_sizes) by the analytic estimator, and set in the scheme (Scheme::batching).
//
// The rule, one coordinate pass: servers in state order; for each, every (window, size) candidate
// (size at most the server's batch_size_limit) with the other servers as already chosen; the scheme
// with it is predicted (AnalyticEstimator::compare, the scheduler's objective) and the best kept,
// the server's current batching on ties (no change without a predicted gain). Strategies are not
// revisited after the batching changed: a joint search over strategies x batching is left to a
// later decision (the next trigger decides strategies on the new batching).
// Engine-free; deterministic; does not advance simulated time.
#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

struct BatchingChoices {
  std::vector<double> windows_ms;  // candidates; empty: each server's current window only
  std::vector<int> sizes;          // candidates; empty: each server's current size only
  bool empty() const { return windows_ms.empty() && sizes.empty(); }
};

// Every (window, size) of `choices` with 1 <= size <= size_limit: windows in their listed order, for each
// the sizes in theirs (duplicates kept). An empty list stands for `current`'s value.
std::vector<BatchSpec> batching_candidates(const BatchingChoices& choices, const BatchSpec& current, int size_limit);

// What was chosen for one server, for the decision record.
struct BatchingChosen {
  std::string server;
  BatchSpec batching;
  int candidates = 0;                                             // predicted, the server's current batching included
  double predicted_throughput_rps = 0, predicted_latency_ms = 0;  // of the scheme after this server's choice
};

// `scheme` with the batching chosen for every server of `state`; `chosen` (may be null) gets one entry
// per server.
Scheme choose_batching(const AnalyticEstimator& est, const SystemState& state, Scheme scheme, const BatchingChoices& choices,
                       std::vector<BatchingChosen>* chosen);

// A scheduler whose schemes get their batching chosen by choose_batching. Owns `inner`.
class BatchingChoosingScheduler : public Scheduler {
 public:
  BatchingChoosingScheduler(std::unique_ptr<Scheduler> inner, const AnalyticEstimator& est, BatchingChoices choices)
      : inner_(std::move(inner)), est_(est), choices_(std::move(choices)) {}
  std::string name() const override { return inner_->name(); }
  Scheme decide(const SystemState& state) override;
  // The inner scheduler's detail object (JSON) with "batching": one {server, window_ms, max_size,
  // candidates, predicted_throughput_rps, predicted_latency_ms} per server.
  std::string decision_detail() const override;

 private:
  std::unique_ptr<Scheduler> inner_;
  const AnalyticEstimator& est_;
  BatchingChoices choices_;
  std::vector<BatchingChosen> chosen_;
};

}  // namespace coinfer
