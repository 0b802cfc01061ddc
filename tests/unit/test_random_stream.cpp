// Independent random streams (core/random_stream.hpp) and the open-loop arrival times built on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>
#include <vector>

#include "core/arrival_process.hpp"
#include "core/random_stream.hpp"

using namespace coinfer;

namespace {

std::vector<std::uint64_t> words(std::uint64_t seed, StreamPurpose p, std::uint64_t index, size_t n) {
  RandomStream r(seed, p, index);
  std::vector<std::uint64_t> out(n);
  for (auto& w : out) w = r.next_u64();
  return out;
}

std::vector<double> gaps(std::uint64_t seed, std::uint64_t index, size_t n, double rate = 2.0) {
  RandomStream r(seed, StreamPurpose::arrivals, index);
  std::vector<double> out(n);
  for (auto& g : out) g = r.next_exponential(rate);
  return out;
}

// Does any of the first `probe` words of a appear among the first `window` words of b? A stream that is
// another shifted by up to `window` draws (the old seeding's defect: seed s+1 = seed s shifted by one)
// shares every probed word.
bool share_shifted_subsequence(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b, size_t probe) {
  std::unordered_set<std::uint64_t> head(a.begin(), a.begin() + static_cast<long>(probe));
  for (std::uint64_t w : b)
    if (head.count(w)) return true;
  return false;
}

double correlation(const std::vector<double>& x, const std::vector<double>& y, size_t lag) {
  const size_t n = std::min(x.size(), y.size()) - lag;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i + lag];
  mx /= n, my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i + lag] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i + lag] - my) * (y[i + lag] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

// Kolmogorov-Smirnov statistic of the sample against Exp(rate).
double ks_exponential(std::vector<double> x, double rate) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = 1 - std::exp(-rate * x[i]);
    d = std::max({d, (i + 1) / n - f, f - i / n});
  }
  return d;
}

}  // namespace

TEST(RandomStream, SameNamesGiveTheSameNumbers) { EXPECT_EQ(words(7, StreamPurpose::arrivals, 3, 1000), words(7, StreamPurpose::arrivals, 3, 1000)); }

TEST(RandomStream, KnownFirstWordsArePinned) {
  // Pinned so that a change of the derivation (which would change every simulated arrival and break
  // replay against recorded runs) is a deliberate, visible edit of this test.
  RandomStream r(1, StreamPurpose::arrivals, 0);
  EXPECT_EQ(r.next_u64(), 0x52A9793507A25752ULL);
  EXPECT_EQ(r.next_u64(), 0x8173F996AC84D0A3ULL);
  EXPECT_EQ(mix64(0), 0u);  // splitmix64's finaliser fixes 0; the key derivation adds constants first
  EXPECT_EQ(mix64(1), 0x5692161D100B05E5ULL);
}

TEST(RandomStream, NeighbouringSeedsAndIndicesShareNoShiftedSubsequence) {
  const size_t window = 100000, probe = 64;
  for (std::uint64_t s : {0ULL, 1ULL, 2ULL, 41ULL, 1000ULL}) {
    const auto a = words(s, StreamPurpose::arrivals, 0, window);
    EXPECT_FALSE(share_shifted_subsequence(a, words(s + 1, StreamPurpose::arrivals, 0, window), probe)) << "seed " << s;
    EXPECT_FALSE(share_shifted_subsequence(words(s + 1, StreamPurpose::arrivals, 0, window), a, probe)) << "seed " << s;
    EXPECT_FALSE(share_shifted_subsequence(a, words(s, StreamPurpose::arrivals, 1, window), probe)) << "seed " << s;
    EXPECT_FALSE(share_shifted_subsequence(words(s, StreamPurpose::arrivals, 1, window), a, probe)) << "seed " << s;
    EXPECT_FALSE(share_shifted_subsequence(a, words(s, StreamPurpose::scheduler, 0, window), probe)) << "seed " << s;
  }
  // The check itself finds a shift: a stream against itself advanced by one draw.
  auto a = words(5, StreamPurpose::arrivals, 0, window);
  std::vector<std::uint64_t> shifted(a.begin() + 1, a.end());
  EXPECT_TRUE(share_shifted_subsequence(shifted, a, probe));
}

TEST(RandomStream, NeighbouringStreamsAreUncorrelatedAtLags0To10) {
  // For independent samples of size n the correlation estimate has standard deviation ~1/sqrt(n);
  // 4.5 standard deviations bound all 4 x 11 x 2 checks together (each fails by chance with p < 1e-5).
  const size_t n = 20000;
  const double bound = 4.5 / std::sqrt(static_cast<double>(n));
  for (std::uint64_t s : {1ULL, 2ULL}) {
    const auto a = gaps(s, 0, n + 10);
    const std::vector<std::vector<double>> others = {gaps(s + 1, 0, n + 10), gaps(s, 1, n + 10)};
    for (const auto& b : others)
      for (size_t lag = 0; lag <= 10; ++lag) {
        EXPECT_LT(std::fabs(correlation(a, b, lag)), bound) << "seed " << s << " lag " << lag;
        EXPECT_LT(std::fabs(correlation(b, a, lag)), bound) << "seed " << s << " lag " << lag;
      }
    for (size_t lag = 1; lag <= 10; ++lag) EXPECT_LT(std::fabs(correlation(a, a, lag)), bound) << "autocorrelation lag " << lag;
  }
}

TEST(RandomStream, GapsFollowTheExponentialLaw) {
  // KS critical value at alpha = 0.001 is 1.95 / sqrt(n).
  const size_t n = 20000;
  for (std::uint64_t s : {1ULL, 2ULL, 3ULL})
    for (std::uint64_t i : {0ULL, 1ULL, 7ULL}) {
      const double rate = 2.5;
      EXPECT_LT(ks_exponential(gaps(s, i, n, rate), rate), 1.95 / std::sqrt(static_cast<double>(n))) << s << "/" << i;
    }
  // ... and the test rejects a wrong law: the same sample against twice the rate.
  EXPECT_GT(ks_exponential(gaps(1, 0, n, 2.5), 5.0), 1.95 / std::sqrt(static_cast<double>(n)));
}

TEST(ArrivalProcess, PoissonTimesLieInTheDeviceWindowAndDiffer) {
  DeviceSpec d;
  d.workload.arrival = WorkloadSpec::Arrival::poisson;
  d.workload.rate_per_s = 50;
  d.join_at_s = 2;
  d.leave_at_s = 12;
  ArrivalProcess a(d, 1, 0, 20), b(d, 2, 0, 20), c(d, 1, 1, 20);
  std::vector<double> ta, tb, tc;
  for (double t; (t = a.next()) < std::numeric_limits<double>::infinity();) ta.push_back(t);
  for (double t; (t = b.next()) < std::numeric_limits<double>::infinity();) tb.push_back(t);
  for (double t; (t = c.next()) < std::numeric_limits<double>::infinity();) tc.push_back(t);
  ASSERT_FALSE(ta.empty());
  EXPECT_GE(ta.front(), 2.0);
  EXPECT_LT(ta.back(), 12.0);
  EXPECT_TRUE(std::is_sorted(ta.begin(), ta.end()));
  // 10 s at 50/s: 500 expected, standard deviation ~22.
  EXPECT_NEAR(static_cast<double>(ta.size()), 500, 110);
  EXPECT_NE(ta, tb);
  EXPECT_NE(ta, tc);
  EXPECT_EQ(a.next(), std::numeric_limits<double>::infinity());  // stays exhausted
  // The same (seed, device) replays exactly.
  ArrivalProcess again(d, 1, 0, 20);
  for (double t : ta) EXPECT_EQ(again.next(), t);
}

TEST(ArrivalProcess, TraceSkipsTimesBeforeJoiningAndStopsAtTheEnd) {
  DeviceSpec d;
  d.workload.arrival = WorkloadSpec::Arrival::trace;
  d.workload.arrival_times_s = {0.5, 1.0, 1.5, 3.0, 9.0};
  d.join_at_s = 1.0;
  ArrivalProcess a(d, 1, 0, 5.0);
  EXPECT_EQ(a.next(), 1.0);
  EXPECT_EQ(a.next(), 1.5);
  EXPECT_EQ(a.next(), 3.0);
  EXPECT_EQ(a.next(), std::numeric_limits<double>::infinity());  // 9.0 is after the end (5 s)
}

TEST(ArrivalProcess, ClosedLoopAndIdleDevicesHaveNoArrivalProcess) {
  DeviceSpec d;
  ArrivalProcess a(d, 1, 0, 5.0);
  EXPECT_EQ(a.next(), std::numeric_limits<double>::infinity());
  d.workload.arrival = WorkloadSpec::Arrival::none;
  ArrivalProcess b(d, 1, 0, 5.0);
  EXPECT_EQ(b.next(), std::numeric_limits<double>::infinity());
}
