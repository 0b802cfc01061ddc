#pragma once
// Scheduler and Estimator interfaces. Schedulers are engine-free: the simulator and the real runtime
// call the very same objects. decide() must not read clocks or do I/O and must be deterministic for a
// given seed and state -- except a scheduler in another process (sched/external_scheduler.hpp), which
// talks to it and is as deterministic as that program.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/scheduler_traits.hpp"
#include "core/scenario.hpp"
#include "core/scheme.hpp"
#include "core/system_state.hpp"

namespace coinfer {

class Estimator {
 public:
  virtual ~Estimator() = default;
  // Higher is better (e.g. system throughput in requests/s).
  virtual double score(const SystemState& state, const Scheme& scheme) const = 0;
  // > 0 if a is predicted better than b, < 0 if worse, 0 if equal.
  virtual double compare(const SystemState& state, const Scheme& a, const Scheme& b) const { return score(state, a) - score(state, b); }
  // One round of a search: the index of the candidate to move to from `incumbent`, or -1 to stay. The
  // default walks the candidates in order, moving whenever compare() says the next one beats the best
  // so far (exact estimators: the best candidate). A learned estimator overrides it to compare every
  // candidate with the incumbent in one batched pass and take the most probable winner.
  virtual int best_of(const SystemState& state, const Scheme& incumbent, const std::vector<Scheme>& candidates) const {
    int best = -1;
    for (size_t i = 0; i < candidates.size(); ++i)
      if (compare(state, candidates[i], best < 0 ? incumbent : candidates[static_cast<size_t>(best)]) > 1e-12) best = static_cast<int>(i);
    return best;
  }
  // best_of() with the incumbent and the candidates given as edits of `base`: the same answer as best_of
  // on the edited schemes. The default builds them; an estimator that can evaluate an edit as such
  // (AnalyticEstimator) overrides it. A search whose candidates each change a few devices calls this.
  virtual int best_of_edits(const SystemState& state, const Scheme& base, const SchemeEdit& incumbent,
                            const std::vector<SchemeEdit>& candidates) const {
    std::vector<Scheme> schemes;
    schemes.reserve(candidates.size());
    for (const SchemeEdit& e : candidates) schemes.push_back(e.applied_to(base));
    return best_of(state, incumbent.applied_to(base), schemes);
  }
  // score() of several schemes (batched where the estimator can).
  virtual std::vector<double> score_many(const SystemState& state, const std::vector<Scheme>& schemes) const {
    std::vector<double> out;
    for (const auto& s : schemes) out.push_back(score(state, s));
    return out;
  }
  // What decided, for the run's records: "analytic", "gin (FILE)".
  virtual std::string describe() const { return "estimator"; }
  // What a decision's record states about the scheme chosen (sched/rescheduler.hpp): the predicted
  // system throughput and request latency and, where the scenario states constraints
  // (scheduler.max_p95_ms, ...), the verdict. An estimator that predicts no such figures (a ranking
  // one) returns has_figures = false and the record says 0.
  struct RecordFigures {
    bool has_figures = false;
    double throughput_rps = 0, mean_latency_ms = 0, p95_latency_ms = 0, energy_j_per_inference = 0;
    bool constrained = false;         // the scenario states constraints
    std::vector<std::string> missed;  // those predicted missed ("p95 412.3 ms > 100 ms")
  };
  virtual RecordFigures figures_for_record(const SystemState&, const Scheme&) const { return {}; }
  // A search that asks about one state many times (one decision) may hold it (StateHold): while held,
  // a call with that same object is about the state as it was when first asked, and an estimator that
  // resolves a state once (AnalyticEstimator) skips comparing it field by field again. The holder must
  // not change the state while it holds it. nullptr: the hold ends. The default keeps nothing.
  virtual void hold_state(const SystemState* state) const { (void)state; }
  // A search that moves one scheme by edits (its base for best_of_edits) may hold it (BaseHold): while
  // held, best_of_edits with that same object as base takes it to be what it was when last asked,
  // changed by the edits base_edited() was told of since, and an estimator that keeps a base's figures
  // (AnalyticEstimator) skips comparing it device by device and keeps what the edit did not reach. The
  // holder changes it only through BaseHold::apply / replace. nullptr: the hold ends. The default
  // keeps nothing.
  virtual void hold_base(const Scheme* base) const { (void)base; }
  // The held base has just had `edit` applied (BaseHold::apply).
  virtual void base_edited(const SchemeEdit& edit) const { (void)edit; }
  // Holds `base` for its own lifetime; apply() and replace() change it and say so (do not block;
  // advance no simulated time).
  class BaseHold {
   public:
    BaseHold(const Estimator& e, Scheme& base) : e_(e), base_(base) { e_.hold_base(&base_); }
    ~BaseHold() { e_.hold_base(nullptr); }
    BaseHold(const BaseHold&) = delete;
    BaseHold& operator=(const BaseHold&) = delete;
    void apply(const SchemeEdit& edit) {
      edit.apply_to(base_);
      e_.base_edited(edit);
    }
    void replace(const Scheme& scheme) {
      base_ = scheme;
      e_.hold_base(&base_);  // held anew: the estimator compares it once more
    }

   private:
    const Estimator& e_;
    Scheme& base_;
  };
  // Holds `state` for its own lifetime (does not block; advances no simulated time).
  class StateHold {
   public:
    StateHold(const Estimator& e, const SystemState& state) : e_(e) { e_.hold_state(&state); }
    ~StateHold() { e_.hold_state(nullptr); }
    StateHold(const StateHold&) = delete;
    StateHold& operator=(const StateHold&) = delete;

   private:
    const Estimator& e_;
  };
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string name() const = 0;
  virtual Scheme decide(const SystemState& state) = 0;
  // What the last decide() wants on the decision's record (DecisionRecord::detail), as a JSON object
  // text, or "" for nothing: the SAC scheduler's observations and actions, which its learner reads.
  virtual std::string decision_detail() const { return ""; }
  // Whether its schemes set the servers' batching themselves (the SAC scheduler with a batching
  // policy): then the scenario's batch candidates are its, not the estimator's pass's (sched/batching_choice.hpp).
  virtual bool chooses_batching() const { return false; }
};

// A scheduler that could not decide: one in another process died, did not answer in time, or
// answered something that is not a valid scheme. The simulator stops the run with this reason (exit
// 2, nothing written); the real server logs it and keeps the scheme in force.
class SchedulerFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace coinfer
