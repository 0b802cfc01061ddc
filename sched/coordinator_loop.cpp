#include "sched/coordinator_loop.hpp"

#include <algorithm>

namespace coinfer {

std::vector<std::pair<double, Trigger>> timed_triggers(const Scenario& s, const std::vector<BandwidthSchedule>& bandwidth, double arrivals_end_s,
                                                       const SelfObserved& self) {
  auto moves = [&s](int device) { return device >= 0 && s.devices[static_cast<size_t>(device)].movement.kind != MovementSpec::Kind::none; };
  std::vector<std::pair<double, Trigger>> out;
  for (const auto& e : Rescheduler::scenario_events(s, bandwidth, arrivals_end_s)) {
    const Trigger& t = e.second;
    switch (t.kind) {
      case Trigger::Kind::period:  // the loop's own timer (CoordinatorLoop::advance_to)
        continue;
      case Trigger::Kind::start:
        if (self.start) continue;
        break;
      case Trigger::Kind::join:
      case Trigger::Kind::leave:
        if (self.joins_and_leaves) continue;
        break;
      case Trigger::Kind::bandwidth:
        if (self.fixed_bandwidth && !moves(t.device)) continue;
        break;
      case Trigger::Kind::server_fail:
      case Trigger::Kind::server_recover:
        if (t.server == self.own_server) continue;
        break;
      case Trigger::Kind::load:
      case Trigger::Kind::handover:
        break;
    }
    out.push_back(e);
  }
  return out;
}

CoordinatorLoop::CoordinatorLoop(const Scenario& scenario, Scheduler& scheduler, const Estimator& estimator,
                                 const std::vector<BandwidthSchedule>& bandwidth, double arrivals_end_s, SelfObserved self,
                                 double server_changes_until_s)
    : rescheduler_(scenario, scheduler, estimator),
      arrivals_end_s_(arrivals_end_s),
      timed_(timed_triggers(scenario, bandwidth, arrivals_end_s, self)) {
  const double first_period = Rescheduler::next_period_after(scenario, 0);
  if (first_period < arrivals_end_s) next_period_ = first_period;
  for (const EventSpec& e : scenario.events)
    if ((e.kind == EventSpec::Kind::server_fail || e.kind == EventSpec::Kind::server_recover) && e.at_s < server_changes_until_s)
      server_changes_.push_back({e.at_s, ServerChange{scenario.server_index(e.server), e.kind == EventSpec::Kind::server_recover}});
  std::stable_sort(server_changes_.begin(), server_changes_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

double CoordinatorLoop::next_event_s() const {
  double t = next_period_;
  if (next_timed_ < timed_.size()) t = std::min(t, timed_[next_timed_].first);
  if (next_change_ < server_changes_.size()) t = std::min(t, server_changes_[next_change_].first);
  return t;
}

void CoordinatorLoop::rearm_period(double t_s) {
  const double next = rescheduler_.next_period_after(t_s);
  next_period_ = next < arrivals_end_s_ ? next : std::numeric_limits<double>::infinity();
}

std::vector<ServerChange> CoordinatorLoop::advance_to(double t_s) {
  for (; next_timed_ < timed_.size() && timed_[next_timed_].first <= t_s; ++next_timed_) rescheduler_.offer(timed_[next_timed_].second);
  if (next_period_ <= t_s) {
    rescheduler_.offer(Trigger{Trigger::Kind::period, -1, 0});
    rearm_period(t_s);
  }
  std::vector<ServerChange> due;
  for (; next_change_ < server_changes_.size() && server_changes_[next_change_].first <= t_s; ++next_change_)
    due.push_back(server_changes_[next_change_].second);
  return due;
}

void CoordinatorLoop::skip_to(double t_s) {
  while (next_timed_ < timed_.size() && timed_[next_timed_].first <= t_s) ++next_timed_;
  if (next_period_ <= t_s) rearm_period(t_s);
  while (next_change_ < server_changes_.size() && server_changes_[next_change_].first <= t_s) ++next_change_;
}

}  // namespace coinfer
