#include "core/radio_energy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/time_window.hpp"

namespace coinfer {

RadioEnergyMeter::RadioEnergyMeter(const RadioStates& states, double window_begin_s, double window_end_s)
    : m_(states), begin_s_(window_begin_s), end_s_(window_end_s), mark_s_(0) {}

void RadioEnergyMeter::integrate(double t_s, RadioEnergy& e) const {
  if (!(t_s > mark_s_)) return;
  if (active_ > 0) {
    const double s = overlap_seconds(mark_s_, t_s, begin_s_, end_s_);
    e.active_j += m_.base_w * s;
    e.active_s += s;
    return;
  }
  double tail = 0;
  if (ever_active_) {
    const double tail_end = last_end_s_ + m_.tail_s;
    tail = overlap_seconds(std::max(mark_s_, last_end_s_), std::min(t_s, tail_end), begin_s_, end_s_);
  }
  const double idle = overlap_seconds(mark_s_, t_s, begin_s_, end_s_) - tail;
  e.tail_j += m_.tail_w * tail;
  e.tail_s += tail;
  e.idle_j += m_.idle_w * std::max(0.0, idle);
}

void RadioEnergyMeter::transfer_started(double t_s) {
  if (t_s < mark_s_) throw std::logic_error("RadioEnergyMeter: time went backwards");
  integrate(t_s, e_);
  mark_s_ = t_s;
  if (active_ == 0 && (!ever_active_ || t_s - last_end_s_ > m_.tail_s) && t_s >= begin_s_ && t_s <= end_s_)
    e_.promotion_j += m_.promotion_w * m_.promotion_s;
  ++active_;
  ever_active_ = true;
}

void RadioEnergyMeter::transfer_ended(double started_s, double t_s, double bytes, bool uplink) {
  if (t_s < mark_s_ || active_ <= 0) throw std::logic_error("RadioEnergyMeter: a transfer ended that had not started, or time went backwards");
  integrate(t_s, e_);
  mark_s_ = t_s;
  if (--active_ == 0) last_end_s_ = t_s;
  // Its rate term, W per Mbit/s x Mbit, by the share of its duration inside the window (all of it for
  // an instantaneous transfer inside the window).
  const double span = t_s - started_s;
  const double share = span > 0 ? overlap_seconds(started_s, t_s, begin_s_, end_s_) / span : (t_s >= begin_s_ && t_s <= end_s_ ? 1.0 : 0.0);
  const double mbit = bytes * 8e-6;
  e_.active_j += share * mbit * (uplink ? m_.up_w_per_mbps : m_.down_w_per_mbps);
}

void RadioEnergyMeter::cut_transfers(double t_s) {
  if (active_ == 0 || t_s < mark_s_) return;
  integrate(t_s, e_);
  mark_s_ = t_s;
  active_ = 0;
  last_end_s_ = t_s;
}

RadioEnergy RadioEnergyMeter::energy() const {
  RadioEnergy e = e_;
  integrate(end_s_, e);
  return e;
}

double radio_energy_per_inference(const RadioStates& m, double cycle_s, double active_s, double up_bytes, double down_bytes,
                                  int transfers_per_inference) {
  const double rate_terms = up_bytes * 8e-6 * m.up_w_per_mbps + down_bytes * 8e-6 * m.down_w_per_mbps;
  if (!(cycle_s > 0) || !std::isfinite(cycle_s)) return m.base_w * active_s + rate_terms;
  const double busy = std::min(active_s, cycle_s);
  double e = m.base_w * busy + rate_terms;
  const double free_s = cycle_s - busy;
  if (transfers_per_inference <= 0) return e + m.idle_w * free_s;
  const double gap = free_s / transfers_per_inference;
  const double tail = std::min(gap, m.tail_s);
  e += transfers_per_inference * (m.tail_w * tail + m.idle_w * (gap - tail));
  if (gap > m.tail_s) e += transfers_per_inference * m.promotion_w * m.promotion_s;
  return e;
}

}  // namespace coinfer
