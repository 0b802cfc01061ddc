// A queue that starts empty, seen over a finite run: how much of its steady-state wait the requests of
// the run meet, for the analytic estimator's open-loop waits (sched/README.md, "A run's length").
//
// A queue near saturation approaches its steady state slowly: its relaxation time grows like
// s / (1 - sqrt(rho))^2, past a minute for a Pi's radio at rho ~ 0.9, so the requests of a 30 s or
// even a 300 s run that starts with an empty queue meet far less than the steady-state wait (a queue at
// rho = 0.99 waits 49.5 service times in steady state, 8.3 on average over a run 300 service times
// long from empty).
//
// The model (Abate & Whitt, "Transient behavior of regulated Brownian motion, I: starting at the
// origin", Adv. Appl. Prob. 19, 1987): the queue's workload is a Brownian motion with drift -m and
// variance v per second, reflected at 0 and started at 0. Its steady state is exponential with mean
// v / (2 m): for an M/G/1 queue m = 1 - rho and v = lambda E[S^2] give the Pollaczek-Khinchine mean
// wait exactly. In the canonical units (time v / m^2, space v / m), at time t from empty:
//   E[R(t)] / E[R(inf)] = H1(t) = 1 - 2 (1 + t) Phic(sqrt t) + 2 sqrt(t) phi(sqrt t),
//   P(R(t) > y) = Phic((y + t) / sqrt t) + exp(-2 y) Phi((t - y) / sqrt t)
// (the second is the law of the maximum of a Brownian motion with drift over [0, t], which the reflected
// motion from 0 has at t). A Poisson arrival sees the workload at its time (PASTA), so the requests
// created in the window [a, b] meet the time average of these over [a, b].
//
// What the estimator takes: the steady-state model's mean wait times transient_mean_ratio(), and its
// tail P(W > x) times transient_tail_ratio(x): both ratios are in [0, 1], and 1 for a run much longer than the
// relaxation time. Checked against a simulated M/D/1 queue from empty (tests/unit/test_queue_transient.cpp).
//
// Pure arithmetic: no allocation, no time.
#pragma once

#include <algorithm>
#include <cmath>

namespace coinfer {

namespace queue_transient_detail {

inline double phic(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }
inline double phi(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); }

// H1 at canonical time t >= 0.
inline double h1(double t) {
  if (!(t > 0)) return 0;
  const double r = std::sqrt(t);
  return 1 - 2 * (1 + t) * phic(r) + 2 * r * phi(r);
}

// P(R(t) > y) exp(2 y): the tail at canonical time t over the steady state's.
inline double tail_over_steady(double y, double t) {
  if (!(t > 0)) return 0;
  const double r = std::sqrt(t);
  return phic((y + t) / r) * std::exp(2 * y) + (1 - phic((t - y) / r));
}

// Past this canonical time both H1 and the tail ratio (for y up to kFarY) are 1 to within 1e-12.
constexpr double kSettled = 60;
// Beyond this y (x m / v) the steady-state tail is below exp(-600): the ratio is taken as 1.
constexpr double kFarY = 300;

// The integral of g over canonical time [0, t], g(0) = 0 and g increasing to 1 by `settled`: Simpson's
// rule in u = sqrt(t) (dt = 2 u du; g rises like sqrt(t) near 0, which u makes smooth) up to
// min(t, settled), then 1 per unit of time.
template <class G>
double integral_to(double t, double settled, const G& g) {
  if (!(t > 0)) return 0;
  const double upto = std::min(t, settled);
  constexpr int kIntervals = 64;  // even
  const double u_end = std::sqrt(upto), h = u_end / kIntervals;
  double sum = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double u = i * h;
    const double w = (i == 0 || i == kIntervals) ? 1 : (i % 2 ? 4 : 2);
    sum += w * g(u * u) * 2 * u;
  }
  return sum * h / 3 + (t - upto);
}

// The average of an integral_to()'s integrand over [a, b] (canonical), the value at b when a >= b.
template <class G>
double window_average(double a, double b, double settled, const G& g) {
  a = std::max(0.0, a);
  if (!(b > a)) return g(std::max(0.0, b));
  return (integral_to(b, settled, g) - integral_to(a, settled, g)) / (b - a);
}

}  // namespace queue_transient_detail

// The requests created in [from_s, to_s] of a run whose queue starts empty at 0: their mean wait over
// the steady state's. m: the queue's drift, its spare capacity (1 - rho for one server; > 0), v: the
// variance of the work it is offered per second (lambda E[S^2] for one server), in s. 1 where m or v is
// not positive or to_s is infinite (the steady state).
inline double transient_mean_ratio(double m, double v, double from_s, double to_s) {
  namespace d = queue_transient_detail;
  if (!(m > 0 && v > 0) || !std::isfinite(to_s)) return 1;
  const double scale = m * m / v;  // canonical time per second
  return std::clamp(d::window_average(from_s * scale, to_s * scale, d::kSettled, d::h1), 0.0, 1.0);
}

// The same requests' probability of waiting more than x s over the steady state's, x >= 0.
inline double transient_tail_ratio(double x, double m, double v, double from_s, double to_s) {
  namespace d = queue_transient_detail;
  if (!(m > 0 && v > 0) || !std::isfinite(to_s)) return 1;
  const double y = std::max(0.0, x) * m / v;
  if (y > d::kFarY) return 1;
  const double scale = m * m / v;
  // The tail reaches its steady state once t is well past y (the drift must first carry it there).
  const double settled = d::kSettled + 4 * y;
  auto g = [y](double t) { return d::tail_over_steady(y, t); };
  return std::clamp(d::window_average(from_s * scale, to_s * scale, settled, g), 0.0, 1.0);
}

}  // namespace coinfer
