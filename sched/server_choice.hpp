#pragma once
// Server choice as a decision: after a scheduler chose its strategies, each device's
// server is chosen among the scenario's servers (Scheme::servers), by the analytic estimator, under
// the scheduler's objective and constraints.
//
// The rule, one coordinate pass: devices that create inputs and are connected, in state order; for
// each, every other server that is up and whose type has a table for the model the device runs (its
// strategy in the scheme, its variant included), with the other devices as already placed; the scheme
// with it is predicted (AnalyticEstimator::best_of) and the best kept, the device's current server on
// ties (no move without a predicted gain). Each is predicted there with its strategy, except that a
// device running locally while its own server is down is predicted offloading (failover: the failure,
// not a choice against the other servers, made it local); moved, the scheme names it offloading, and
// the second decision below may refine that. Helpers (idle devices) are not moved: each serves the
// devices of its own server. Then the wrapped scheduler decides its strategies again on the devices as
// placed, and that second scheme is kept when it is predicted better.
// How it is predicted: each device's outcome depends on its own server's queue only (the estimator
// solves servers apart), so the system's figures are the sum of its servers' parts, and a move
// re-predicts the two servers it touches: one prediction of the part it leaves and one per other
// server, each of about devices / servers devices. A max_p95_ms constraint needs the p95 of the whole
// system, which does not add up: then every candidate is predicted whole (devices x servers x devices
// work). sched/README.md "Server choice"; bench/RESULTS.md "Server choice".
// Engine-free; deterministic; does not advance simulated time.
#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

// One device moved by a decision, for the decision record.
struct ServerMove {
  std::string device, from, to;
};

// `scheme` with each device's server chosen (an entry only for devices it moves away from the server
// `state` has them on); `moves` (may be null) gets one entry per device moved; `candidates` (may be
// null) counts the schemes predicted.
Scheme choose_servers(const AnalyticEstimator& est, const SystemState& state, Scheme scheme, std::vector<ServerMove>* moves, int* candidates);

// A scheduler whose schemes get their servers chosen by choose_servers (scheduler.choose_servers).
// Owns `inner`; `est` must outlive it.
class ServerChoosingScheduler : public Scheduler {
 public:
  ServerChoosingScheduler(std::unique_ptr<Scheduler> inner, const AnalyticEstimator& est) : inner_(std::move(inner)), est_(est) {}
  std::string name() const override { return inner_->name(); }
  bool chooses_batching() const override { return inner_->chooses_batching(); }
  Scheme decide(const SystemState& state) override;
  // The inner scheduler's detail object (JSON) with "servers": {"candidates": N, "moved": [{device,
  // from, to}, ...]}.
  std::string decision_detail() const override;

 private:
  std::unique_ptr<Scheduler> inner_;
  const AnalyticEstimator& est_;
  std::vector<ServerMove> moves_;
  int candidates_ = 0;
};

}  // namespace coinfer
