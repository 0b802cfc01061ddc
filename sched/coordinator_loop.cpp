#include "sched/coordinator_loop.hpp"

#include <algorithm>

namespace coinfer {

std::vector<std::pair<double, Trigger>> timed_triggers(const Scenario& s, const std::vector<BandwidthSchedule>& bandwidth, double arrivals_end_s,
                                                       const SelfObserved& self) {
  auto moves = [&s](DeviceIndex device) { return device.valid() && s.devices[device.at()].movement.kind != MovementSpec::Kind::none; };
  std::vector<std::pair<double, Trigger>> out;
  for (const auto& e : Rescheduler::scenario_events(s, bandwidth, arrivals_end_s)) {
    const Trigger& t = e.second;
    if (t.is<trigger::Period>()) continue;  // the loop's own timer (CoordinatorLoop::advance_to)
    if (t.is<trigger::Start>() && self.start) continue;
    if ((t.is<trigger::Join>() || t.is<trigger::Leave>()) && self.joins_and_leaves) continue;
    if (const auto* b = t.as<trigger::Bandwidth>(); b && self.fixed_bandwidth && !moves(b->device)) continue;
    if (const auto* f = t.as<trigger::ServerFail>(); f && f->server == self.own_server) continue;
    if (const auto* r = t.as<trigger::ServerRecover>(); r && (r->server == self.own_server || self.server_recoveries)) continue;
    // load and handover: always offered at their times
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
    if (e.about_server() && e.at_s < server_changes_until_s)
      server_changes_.push_back({e.at_s, ServerChange{ServerIndex(scenario.server_index(e.server())), e.is<event::ServerRecover>()}});
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
    rescheduler_.offer(trigger::Period{});
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
