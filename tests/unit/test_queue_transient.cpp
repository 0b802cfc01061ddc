// transient_mean_ratio / transient_tail_ratio (sched/queue_transient.hpp): what of a queue's steady
// state the requests of a finite run from an empty queue meet, for the estimator's open-loop waits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/random_stream.hpp"
#include "sched/queue_tail.hpp"
#include "sched/queue_transient.hpp"

namespace coinfer {
namespace {

TEST(QueueTransient, TheMeanAtOneInstantIsAbateAndWhittsH1) {
  // A window of one instant (from = to) gives H1 there. Canonical units (m = 1, v = 1), t = 1:
  // H1 = 1 - 2 (1 + 1) Phic(1) + 2 phi(1) = 1 - 4 x 0.158655 + 2 x 0.241971 = 0.849320.
  EXPECT_NEAR(transient_mean_ratio(1, 1, 1, 1), 0.849320, 1e-6);
  // The same instant in seconds: canonical time t m^2 / v, so m = 0.1, v = 0.02 (time unit 2 s) at 2 s.
  EXPECT_NEAR(transient_mean_ratio(0.1, 0.02, 2, 2), 0.849320, 1e-6);
  // t = 4: 1 - 2 x 5 x Phic(2) + 2 x 2 x phi(2) = 1 - 10 x 0.0227501 + 4 x 0.0539910 = 0.988463.
  EXPECT_NEAR(transient_mean_ratio(1, 1, 4, 4), 0.988463, 1e-6);
}

TEST(QueueTransient, TheMeanOverAWindowAveragesH1) {
  // Near 0, H1(t) ~ E[max of a driftless Brownian motion] / (1/2) = 2 sqrt(2 t / pi), so over [0, T]
  // the average is 2/3 of that at T: T = 1e-4 gives (2/3) x 2 x sqrt(2e-4 / pi) = 0.0106385 (the drift
  // takes off a relative O(sqrt T): 1 % here).
  EXPECT_NEAR(transient_mean_ratio(1, 1, 0, 1e-4), 0.0106385, 0.0106385 * 0.02);
  // Long windows: 1 - H1 integrates to 1/2 over [0, inf) (numerically: 0.49996 by t = 100), so the
  // average over [0, T] is 1 - 0.5 / T: T = 1000 gives 0.9995.
  EXPECT_NEAR(transient_mean_ratio(1, 1, 0, 1000), 0.9995, 2e-6);
  // A window [a, b] averages over it only: [1000, 2000] is settled (1 to 1e-12).
  EXPECT_NEAR(transient_mean_ratio(1, 1, 1000, 2000), 1.0, 1e-12);
  // The steady state where the run does not end, or where the queue has no variance or no spare capacity.
  EXPECT_EQ(transient_mean_ratio(1, 1, 0, std::numeric_limits<double>::infinity()), 1.0);
  EXPECT_EQ(transient_mean_ratio(0, 1, 0, 10), 1.0);
  EXPECT_EQ(transient_mean_ratio(1, 0, 0, 10), 1.0);
}

TEST(QueueTransient, TheTailAtOneInstantIsTheMaximumOfADriftingBrownianMotion) {
  // P(R(t) > y) / exp(-2 y) = Phic((y + t) / sqrt t) exp(2 y) + Phi((t - y) / sqrt t). y = 1, t = 1:
  // Phic(2) e^2 + Phi(0) = 0.0227501 x 7.389056 + 0.5 = 0.668102.
  EXPECT_NEAR(transient_tail_ratio(1, 1, 1, 1, 1), 0.668102, 1e-6);
  // x in seconds is y v / m: m = 0.5, v = 0.25 (space unit 0.5 s, time unit 1 s), x = 0.5 s at 1 s.
  EXPECT_NEAR(transient_tail_ratio(0.5, 0.5, 0.25, 1, 1), 0.668102, 1e-6);
  // y = 0: a reflected motion from 0 is above 0 at every t > 0 with probability 1, as in steady state.
  EXPECT_NEAR(transient_tail_ratio(0, 1, 1, 0, 5), 1.0, 1e-9);
  // Far out in a short run the tail is far below the steady state's: y = 5, t = 1:
  // Phic(6) e^10 + Phi(-4) = 9.8659e-10 x 22026.47 + 3.16712e-5 = 5.3402e-5.
  EXPECT_NEAR(transient_tail_ratio(5, 1, 1, 1, 1), 5.3402e-5, 1e-8);
  EXPECT_NEAR(transient_tail_ratio(2, 1, 1, 1000, 2000), 1.0, 1e-12);
}

// M/D/1 from empty (service 1 s, Poisson arrivals at rho per second), simulated by Lindley's recursion:
// the mean and the p95 of the waits of the requests that arrive in [from, to], over `reps` runs.
struct Simulated {
  double mean = 0, p95 = 0;
};
Simulated md1_from_empty(double rho, double from, double to, int reps) {
  RandomStream rs(1, StreamPurpose::test, 37);
  std::vector<double> waits;
  for (int r = 0; r < reps; ++r) {
    double t = 0, work = 0;
    for (;;) {
      const double gap = rs.next_exponential(rho);
      t += gap;
      if (t > to) break;
      work = std::max(0.0, work - gap);  // what the arrival finds: its wait
      if (t >= from) waits.push_back(work);
      work += 1;
    }
  }
  Simulated s;
  for (double w : waits) s.mean += w;
  s.mean /= static_cast<double>(waits.size());
  std::sort(waits.begin(), waits.end());
  s.p95 = waits[static_cast<size_t>(0.95 * static_cast<double>(waits.size()))];
  return s;
}

TEST(QueueTransient, AnMd1QueueFromEmptyMeetsWhatTheModelSays) {
  // The estimator's use: M/D/1's steady mean rho s / (2 (1 - rho)) times the mean ratio, and its
  // Cramer-Lundberg tail times the tail ratio, with m = 1 - rho and v = lambda s^2 = rho (s = 1 s).
  // Three runs a user makes: a 30 s run measured after 5 s at rho = 0.8, a 200 s run at 0.95, a
  // 300 s run after 5 s at 0.99. Simulated (2,000 runs each): mean 1.500, 4.967, 8.283 s; p95 4.876,
  // 15.05, 23.29 s. The steady state puts the means 1.3x, 1.9x and 6.0x above them; the model's means
  // are 7.0 %, 4.9 % and 3.4 % high (the diffusion is coarsest at the lowest load), its p95s within
  // 1.5 % (4.839, 15.11, 23.64 s).
  struct Case {
    double rho, from, to;
  };
  for (const Case& c : {Case{0.8, 5, 30}, Case{0.95, 0, 200}, Case{0.99, 5, 300}}) {
    SCOPED_TRACE(c.rho);
    const Simulated sim = md1_from_empty(c.rho, c.from, c.to, 2000);
    const double m = 1 - c.rho, v = c.rho;
    const double steady_mean = c.rho / (2 * (1 - c.rho));
    EXPECT_GT(steady_mean, 1.25 * sim.mean);  // the steady state alone misses
    EXPECT_NEAR(steady_mean * transient_mean_ratio(m, v, c.from, c.to), sim.mean, 0.08 * sim.mean);
    const WaitTail q = md1_wait_tail(c.rho, 1);
    auto above = [&](double x) { return std::min(c.rho, q.c * std::exp(-q.theta * x)) * transient_tail_ratio(x, m, v, c.from, c.to); };
    double lo = 0, hi = 1000;
    for (int i = 0; i < 100; ++i) (above((lo + hi) / 2) > 0.05 ? lo : hi) = (lo + hi) / 2;
    EXPECT_NEAR(hi, sim.p95, 0.03 * sim.p95);
  }
}

}  // namespace
}  // namespace coinfer
