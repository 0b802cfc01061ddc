// The waiting-time tail of an M/D/1 queue (Poisson arrivals, one server, a fixed service time s), for
// the analytic estimator's p95 (sched/README.md, the p95).
//
// For an M/G/1 queue P(W > x) ~ C exp(-theta x) (Cramer-Lundberg), theta the positive root of
// lambda (E[exp(theta S)] - 1) = theta and C = (1 - rho) / (lambda E[S exp(theta S)] - 1). With a fixed
// service time s and y = theta s: rho (e^y - 1) = y, C = (1 - rho) / (rho e^y - 1). For exponential
// service this is exact (C = rho, theta = mu - lambda); for a fixed one the tail falls faster than the
// exponential with the queue's conditional mean wait s / (2 (1 - rho)) that the estimator used before:
// at rho = 0.47 that one put a Pi 4B's p95 at 1,450 ms against 1,286 simulated, this one at 1,340
// (bench/RESULTS.md, "The p95 of open loops").
//
// Pure arithmetic: no allocation, no time.
#pragma once

#include <cmath>

namespace coinfer {

struct WaitTail {
  double c = 0;      // P(W > x) ~ c exp(-theta x) far out (capped by the probability of waiting near 0)
  double theta = 0;  // 1/s; 0: no tail (rho outside (0, 1) or s <= 0)
};

// rho = lambda s in (0, 1), s > 0.
inline WaitTail md1_wait_tail(double rho, double s) {
  WaitTail t;
  if (!(rho > 0 && rho < 1 && s > 0)) return t;
  // f(y) = rho (e^y - 1) - y: f(0) = 0, f'(0) = rho - 1 < 0 and f convex, so f has one positive root,
  // where it crosses zero upwards; Newton from any point right of it (f > 0) falls to it monotonically.
  double y = 1;
  while (rho * (std::exp(y) - 1) - y <= 0) y *= 2;
  for (int i = 0; i < 100; ++i) {
    const double f = rho * (std::exp(y) - 1) - y, df = rho * std::exp(y) - 1;
    const double next = y - f / df;
    if (!(next < y)) break;  // no further progress (at the root to the last bit)
    y = next;
  }
  t.theta = y / s;
  t.c = (1 - rho) / (rho * std::exp(y) - 1);
  return t;
}

}  // namespace coinfer
