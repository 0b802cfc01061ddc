#include "sim/kernel_events.hpp"

#include <mutex>

#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

void install_completion_dispatch() {
  static std::once_flag once;
  std::call_once(once, [] {
    on_comm_completion([](sg4::Activity const& a) {
      if (a.get_state() != sg4::Activity::State::FINISHED) return;  // a cancel reports FAILED, then CANCELED
      const auto* hook = a.get_data<CompletionHook>();
      if (hook != nullptr && hook->listener != nullptr) hook->listener->on_activity_done(hook->slot);
    });
  });
}

void ActivityRetirement::retire(sg4::ActivityPtr a) {
  const double now = sg4::Engine::get_clock();
  if (now > held_at_s_) {
    held_.clear();  // finished at an earlier time: SimGrid is done with them
    held_at_s_ = now;
  }
  held_.push_back(std::move(a));
}

}  // namespace coinfer::sim
