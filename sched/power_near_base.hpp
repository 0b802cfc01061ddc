// x^e for many x a little below one base b, cheaper than exp(e log x) for each.
//
// The analytic estimator's server queue raises each path's "others' utilisation" to Sakasegawa's
// exponent e = sqrt(2 (c + 1)) - 1 in every round of every solve (a fifth of a hierarchical decision's
// instructions went to exp and log). Those utilisations are the server's total minus one path's own
// share, so each is b (1 - t) with b the total and t small: x^e = b^e (1 - t)^e, with b^e once per
// round and (1 - t)^e from its binomial series, sum over k of a_k t^k with a_0 = 1 and
// a_k = a_(k-1) (k - 1 - e) / k. Where t is at most 1/8 and e at most kMaxExponent (c <= 8 workers)
// the 17 terms kept leave a remainder below 3e-19 of the result (sum of |a_k| t^k over k >= 17 at
// t = 1/8, computed for c = 1..8: largest at c = 2, 2.6e-19); for t <= 1/32 (a path's share of a
// server with many) 10 terms leave below 1.7e-18; tests/unit/test_power_near_base.cpp
// checks the agreement with std::pow over c = 1..8 and t in [0, 1/8]. Elsewhere exp(e log x) as
// before.
//
// Pure arithmetic: no allocation, no time.
#pragma once

#include <array>
#include <cmath>

namespace coinfer {

class PowerNearBase {
 public:
  static constexpr int kTerms = 17;       // a_0 .. a_16
  static constexpr double kMaxT = 0.125;  // the series is used for t <= kMaxT
  static constexpr int kShortTerms = 10;  // a_0 .. a_9, enough for t <= kShortT
  static constexpr double kShortT = 1.0 / 32;
  static constexpr double kMaxExponent = 3.25;  // and e <= this (Sakasegawa's e at c = 8 workers: 3.243)

  explicit PowerNearBase(double e) : e_(e), series_(e >= 0 && e <= kMaxExponent) {
    a_[0] = 1;
    for (int k = 1; k < kTerms; ++k) a_[k] = a_[k - 1] * (k - 1 - e) / k;
  }

  // The base for the calls that follow: b in (0, 1) uses the series near it; anything else (0, or a
  // saturated total) leaves every call to exp(e log x).
  void set_base(double b) {
    base_ = b > 0 && b < 1 && series_ ? b : 0;
    base_power_ = base_ > 0 ? std::exp(e_ * std::log(base_)) : 0;
    inv_base_ = base_ > 0 ? 1 / base_ : 0;
  }

  // x^e for x > 0 (the caller handles 0).
  double operator()(double x) const {
    if (base_ > 0 && x <= base_) {
      const double t = (base_ - x) * inv_base_;
      if (t <= kShortT) return base_power_ * series<kShortTerms>(t);
      if (t <= kMaxT) return base_power_ * series<kTerms>(t);
    }
    return std::exp(e_ * std::log(x));
  }

 private:
  double e_;
  bool series_;
  std::array<double, kTerms> a_{};
  double base_ = 0, base_power_ = 0, inv_base_ = 0;

  // sum of a_k t^k for k < N (Horner)
  template <int N>
  double series(double t) const {
    double sum = a_[N - 1];
    for (int k = N - 2; k >= 0; --k) sum = sum * t + a_[k];
    return sum;
  }
};

}  // namespace coinfer
