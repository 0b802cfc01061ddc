#pragma once
// Simulated components without actors (sim-internal). A device of the simulation is not a SimGrid
// actor: its activities (executions, transfers) are started in SimGrid's kernel context (maestro) and
// their completions are handed to the device by SimGrid's Activity::on_completion signal; its timed
// wake-ups (joins, open-loop arrivals) are kernel timers. No context switch, no stack per device: one
// actor per device cost two memory maps (stack and guard page) and a context switch per event, which is
// what limited the simulator to ~10^4 devices (bench/RESULTS.md "Scale").
//
// SimGrid 3.32 reports the completion of an activity only to an actor waiting on it, or through
// on_completion when maestro started it; so everything a device starts goes through in_kernel().
// (SimGrid 4.0 fires Comm::on_completion once per transfer wherever it started: sim/simgrid_api.hpp.)
// The physics are SimGrid's own, unchanged: the same executions on the same hosts and the same
// host-to-host transfers on the same routes.
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include <utility>
#include <vector>

#include "sim/simgrid_api.hpp"

namespace coinfer::sim {

// Receives the completions of the activities it started with hook(slot).
class CompletionListener {
 public:
  virtual ~CompletionListener() = default;
  virtual void on_activity_done(int slot) = 0;  // runs in kernel context, at the completion's time
};

// Set as an activity's data: who is told when it finishes, and which of its activities it was.
struct CompletionHook {
  CompletionListener* listener = nullptr;
  int slot = 0;
};

// Connects SimGrid's on_completion signal to the hooks (once per process; activities without a hook,
// such as the server actors' executions, are ignored; cancelled and failed ones too).
void install_completion_dispatch();

// Runs `code` in SimGrid's kernel context: directly when already there (a completion or a timer),
// through a simcall from an actor. Activities started inside report their completion to their hook.
template <class F>
decltype(auto) in_kernel(F&& code) {
  return simgrid::kernel::actor::simcall_answered(std::forward<F>(code));
}

// Finished activities stay alive until the simulated clock has moved on: SimGrid still uses an
// activity's object after its on_completion signal returns, so a listener must not drop the last
// reference there. Owned by the simulation; shared by its devices.
class ActivityRetirement {
 public:
  void retire(simgrid::s4u::ActivityPtr a);

 private:
  double held_at_s_ = -1;
  std::vector<simgrid::s4u::ActivityPtr> held_;
};

// A kernel timer that can be cancelled; fires `code` in kernel context at `date_s`.
class KernelTimer {
 public:
  KernelTimer() = default;
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;
  ~KernelTimer() { cancel(); }
  template <class F>
  void set(double date_s, F code) {
    cancel();
    timer_ = simgrid::kernel::timer::Timer::set(date_s, [this, code = std::move(code)]() mutable {
      timer_ = nullptr;  // the kernel deletes a timer once it has fired
      code();
    });
  }
  void cancel() {
    if (timer_) timer_->remove();
    timer_ = nullptr;
  }
  bool pending() const { return timer_ != nullptr; }

 private:
  simgrid::kernel::timer::Timer* timer_ = nullptr;
};

}  // namespace coinfer::sim
