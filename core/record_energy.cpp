#include "core/record_energy.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/radio_energy.hpp"
#include "core/time_window.hpp"

namespace coinfer {

namespace {
bool finite(double x) { return std::isfinite(x); }
}  // namespace

WindowEnergy window_energy_from_records(const PowerSpec& power, const std::vector<const RequestRecord*>& requests, double t0_s, double t1_s) {
  WindowEnergy e;
  const double window = std::max(0.0, t1_s - t0_s);
  double idle_w = power.idle_w, extra_w = power.busy_w - power.idle_w;
  if (!power.processors.empty()) {
    for (const auto& p : power.processors) idle_w += p.idle_w;
    extra_w = power.processors.front().busy_w - power.processors.front().idle_w;  // the default processor (hardware order)
  }
  e.idle_j = idle_w * window;
  // Transfers: (start, end, bytes, uplink).
  std::vector<std::tuple<double, double, double, bool>> transfers;
  double busy = 0, flat_bytes = 0;
  for (const RequestRecord* r : requests) {
    if (finite(r->t_device_start) && finite(r->t_device_end)) busy += overlap_seconds(r->t_device_start, r->t_device_end, t0_s, t1_s);
    if (finite(r->t_uplink_end)) {
      const double start = finite(r->t_device_end) ? r->t_device_end : r->t_created;
      if (finite(start) && start <= r->t_uplink_end) transfers.emplace_back(start, r->t_uplink_end, r->bytes_up, true);
      if (r->t_uplink_end >= t0_s && r->t_uplink_end < t1_s) flat_bytes += r->bytes_up;
    }
    if (finite(r->t_result) && finite(r->t_batch_end) && r->bytes_down > 0) {
      if (r->t_batch_end <= r->t_result) transfers.emplace_back(r->t_batch_end, r->t_result, r->bytes_down, false);
      if (r->t_result >= t0_s && r->t_result < t1_s) flat_bytes += r->bytes_down;
    }
  }
  e.compute_j = extra_w * busy;
  if (!power.radio.stated()) {
    e.radio_j = flat_bytes / 1e6 * power.radio_j_per_mb;
    return e;
  }
  // The meter takes events in time order: starts and ends of every span, an end before a start at the
  // same time (back-to-back transfers keep the radio active without a gap).
  struct Event {
    double t;
    int order;  // 0 end, 1 start (-1: the start of a span of no length)
    size_t k;
  };
  std::vector<Event> events;
  for (size_t k = 0; k < transfers.size(); ++k) {
    // A span of no length starts before every end at its time (its own included).
    events.push_back({std::get<0>(transfers[k]), std::get<0>(transfers[k]) == std::get<1>(transfers[k]) ? -1 : 1, k});
    events.push_back({std::get<1>(transfers[k]), 0, k});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return std::tie(a.t, a.order, a.k) < std::tie(b.t, b.order, b.k); });
  RadioEnergyMeter meter(power.radio, t0_s, t1_s);
  for (const Event& ev : events) {
    const auto& [start, end, bytes, up] = transfers[ev.k];
    if (ev.order != 0)
      meter.transfer_started(start);
    else
      meter.transfer_ended(start, end, bytes, up);
  }
  e.radio_j = meter.energy().total_j();
  return e;
}

}  // namespace coinfer
