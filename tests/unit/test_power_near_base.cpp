// PowerNearBase (sched/power_near_base.hpp): x^e near a base by the binomial series, as the analytic
// estimator's server queue uses it for Sakasegawa's rho^e.
#include <gtest/gtest.h>

#include <cmath>

#include "sched/power_near_base.hpp"

namespace coinfer {
namespace {

double sakasegawa_exponent(int workers) { return std::sqrt(2.0 * (workers + 1)) - 1; }

TEST(PowerNearBase, IntegerExponentsByHand) {
  // c = 1 worker: e = sqrt(4) - 1 = 1, so x^e = x; the series is 1 - t exactly (a_2 = a_1 (1 - 1) / 2 = 0).
  PowerNearBase one(sakasegawa_exponent(1));
  one.set_base(0.5);
  EXPECT_NEAR(one(0.45), 0.45, 1e-16);  // t = 0.1
  EXPECT_NEAR(one(0.5), 0.5, 1e-16);    // t = 0
  // c = 7 workers: e = sqrt(16) - 1 = 3. Base 0.5 (0.125), x = 0.48 (t = 0.04): 0.48^3 = 0.110592.
  PowerNearBase three(sakasegawa_exponent(7));
  three.set_base(0.5);
  EXPECT_NEAR(three(0.48), 0.110592, 1e-16);
  // t = 0.02 (the short series): 0.49^3 = 0.117649.
  EXPECT_NEAR(three(0.49), 0.117649, 1e-16);
}

TEST(PowerNearBase, AgreesWithPowOverTheWorkersAndSharesItServes) {
  // Every worker count the series serves (1..8), bases across the unsaturated range, t over [0, 1/8]
  // on both sides of the short series' limit (1/32): within a few ulps of std::pow, the ulps scaled by
  // |e log x| + 4 (b^e comes from exp(e log b), whose rounding error is |e log b| times the product's:
  // 30 ulps at b = 1e-6, as for exp(e log x) per x before; the series' remainder is below 3e-19).
  for (int c = 1; c <= 8; ++c) {
    const double e = sakasegawa_exponent(c);
    PowerNearBase p(e);
    for (double b : {1e-6, 0.05, 0.3, 0.7, 0.95, 0.998}) {
      p.set_base(b);
      for (int i = 0; i <= 400; ++i) {
        const double t = 0.125 * i / 400;
        const double x = b * (1 - t);
        const double want = std::pow(x, e);
        const double ulps = std::fabs(e * std::log(x)) + 4;
        EXPECT_NEAR(p(x), want, ulps * 2.3e-16 * want) << "c=" << c << " b=" << b << " t=" << t;
      }
    }
  }
}

TEST(PowerNearBase, OutsideTheSeriesItIsExpOfLog) {
  // Far below the base (t = 0.9), above it, without a base, with a saturated base or an exponent past
  // kMaxExponent (c = 16: e = sqrt(34) - 1 = 4.83): exp(e log x), bit for bit.
  PowerNearBase p(sakasegawa_exponent(2));
  const double e = sakasegawa_exponent(2);
  p.set_base(0.9);
  EXPECT_EQ(p(0.09), std::exp(e * std::log(0.09)));
  EXPECT_EQ(p(0.95), std::exp(e * std::log(0.95)));
  p.set_base(0);
  EXPECT_EQ(p(0.5), std::exp(e * std::log(0.5)));
  p.set_base(1.2);
  EXPECT_EQ(p(0.999), std::exp(e * std::log(0.999)));
  const double e16 = sakasegawa_exponent(16);
  PowerNearBase many(e16);
  many.set_base(0.5);
  EXPECT_EQ(many(0.49), std::exp(e16 * std::log(0.49)));
}

}  // namespace
}  // namespace coinfer
