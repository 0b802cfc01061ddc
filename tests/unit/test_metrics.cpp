#include <gtest/gtest.h>

#include "core/metrics.hpp"

using namespace coinfer;

TEST(Metrics, PercentileInterpolatesBetweenRanks) {
  std::vector<double> v = {4, 1, 3, 2};
  // sorted 1,2,3,4; p50 at position 1.5 -> 2.5; p95 at 2.85 -> 3.85.
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 95), 3.85);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  std::vector<double> empty;
  EXPECT_TRUE(std::isnan(percentile(empty, 50)));
}

TEST(Metrics, OnlyRequestsCreatedAfterWarmupCount) {
  std::vector<RequestRecord> r(4);
  r[0].device = 0; r[0].t_created = 0.5; r[0].t_result = 0.6;  // before warm-up: ignored
  r[1].device = 0; r[1].t_created = 1.0; r[1].t_result = 1.1;  // 100 ms
  r[2].device = 1; r[2].t_created = 2.0; r[2].t_result = 2.3;  // 300 ms
  r[3].device = 1; r[3].t_created = 3.0; r[3].status = RequestRecord::Status::failed;
  auto s = summarise(r, {"a", "b"}, {2.0, 6.0}, 1.0, 4.0);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].completed, 1);
  EXPECT_NEAR(s[0].latency.mean_ms, 100, 1e-9);
  EXPECT_DOUBLE_EQ(s[0].throughput_rps, 0.25);   // 1 request over a 4 s window
  EXPECT_DOUBLE_EQ(s[0].energy_j_per_inference, 2.0);
  EXPECT_EQ(s[1].failed, 1);
  EXPECT_EQ(s[2].id, "total");
  EXPECT_EQ(s[2].completed, 2);
  EXPECT_NEAR(s[2].latency.mean_ms, 200, 1e-9);
  EXPECT_DOUBLE_EQ(s[2].energy_j_per_inference, 4.0);  // 8 J / 2 inferences
}
