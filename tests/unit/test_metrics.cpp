#include <gtest/gtest.h>

#include "core/metrics.hpp"
#include "core/run_assembly.hpp"
#include "tests/unit/test_support.hpp"

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
  r[0].device = 0;
  r[0].t_created = 0.5;
  r[0].t_result = 0.6;  // before warm-up: ignored
  r[1].device = 0;
  r[1].t_created = 1.0;
  r[1].t_result = 1.1;  // 100 ms
  r[2].device = 1;
  r[2].t_created = 2.0;
  r[2].t_result = 2.3;  // 300 ms
  r[3].device = 1;
  r[3].t_created = 3.0;
  r[3].status = RequestRecord::Status::failed;
  auto s = summarise(r, {"a", "b"}, {2.0, 6.0}, 1.0, 4.0);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].completed, 1);
  EXPECT_NEAR(s[0].latency.mean_ms, 100, 1e-9);
  EXPECT_DOUBLE_EQ(s[0].throughput_rps, 0.25);  // 1 request over a 4 s window
  EXPECT_DOUBLE_EQ(s[0].energy_j_per_inference, 2.0);
  EXPECT_EQ(s[1].failed, 1);
  EXPECT_EQ(s[2].id, "total");
  EXPECT_EQ(s[2].completed, 2);
  EXPECT_NEAR(s[2].latency.mean_ms, 200, 1e-9);
  EXPECT_DOUBLE_EQ(s[2].energy_j_per_inference, 4.0);  // 8 J / 2 inferences
}

namespace {
using coinfer::test::request;
}  // namespace

// An overloaded device. 100 arrivals at 10 req/s (t = 0.0, 0.1, ..., 9.9) served one
// after another at 4 req/s (results at 0.5, 0.75, ..., 0.5 + 0.25 i). Window [0, 10]:
//   delivered inside it: 0.5 + 0.25 i <= 10  ->  i <= 38  ->  39 results  ->  3.9 req/s,
//   the window's requests completed with the drain: all 100 -> 10 req/s (61 of them after t = 10),
//   offered 100 / 10 = 10 req/s; waiting at the end: 61, at the start 0 -> grew by 61 >= 10 and >= 10 % of
//   100: saturated. The old rule (completed / window) said 10 req/s, above the 4 req/s the server carries.
TEST(Metrics, ThroughputCountsResultsDeliveredInsideTheWindow) {
  std::vector<RequestRecord> r;
  for (int i = 0; i < 100; ++i) r.push_back(request(0, 0.1 * i, 0.5 + 0.25 * i));
  auto s = summarise(r, {"a"}, {40.0}, 0.0, 10.0);
  EXPECT_EQ(s[0].delivered, 39);
  EXPECT_DOUBLE_EQ(s[0].throughput_rps, 3.9);
  EXPECT_EQ(s[0].completed, 100);
  EXPECT_DOUBLE_EQ(s[0].throughput_incl_drain_rps, 10.0);
  EXPECT_DOUBLE_EQ(s[0].offered_rps, 10.0);
  EXPECT_EQ(s[0].completed_in_drain, 61);
  EXPECT_EQ(s[0].backlog_start, 0);
  EXPECT_EQ(s[0].backlog_end, 61);
  EXPECT_TRUE(s[0].saturated);
  EXPECT_NEAR(s[0].energy_j_per_inference, 40.0 / 39, 1e-12);  // window energy over results delivered in it
  EXPECT_TRUE(s[1].saturated);
  EXPECT_EQ(s[1].saturated_devices, 1);
}

// The same arrivals each answered 50 ms later: every result but none after t = 10 (the last at 9.95),
// nothing waiting at the end: not saturated; delivered = completed = 100.
TEST(Metrics, ASteadyRunIsNotSaturated) {
  std::vector<RequestRecord> r;
  for (int i = 0; i < 100; ++i) r.push_back(request(0, 0.1 * i, 0.1 * i + 0.05));
  auto s = summarise(r, {"a"}, {}, 0.0, 10.0);
  EXPECT_EQ(s[0].delivered, 100);
  EXPECT_DOUBLE_EQ(s[0].throughput_rps, 10.0);
  EXPECT_EQ(s[0].backlog_end, 0);
  EXPECT_FALSE(s[0].saturated);
  EXPECT_FALSE(s[1].saturated);
  EXPECT_EQ(s[1].saturated_devices, 0);
}

// Window [1, 5]. A request created before warm-up whose result arrives inside the window is delivered
// (throughput counts it) but not one of the window's (completed does not); one created before warm-up
// and still unanswered at t = 1 is the backlog at the start.
TEST(Metrics, ResultsOfRequestsMadeBeforeWarmupCountAsDelivered) {
  std::vector<RequestRecord> r = {request(0, 0.5, 1.5), request(0, 0.9, 0.95), request(0, 2.0, 2.1), request(0, 4.9, 5.2)};
  auto s = summarise(r, {"a"}, {}, 1.0, 4.0);
  EXPECT_EQ(s[0].delivered, 2);  // 1.5 and 2.1; 0.95 is before the window, 5.2 after it
  EXPECT_DOUBLE_EQ(s[0].throughput_rps, 0.5);
  EXPECT_EQ(s[0].completed, 2);  // created at 2.0 and 4.9
  EXPECT_EQ(s[0].completed_in_drain, 1);
  EXPECT_EQ(s[0].backlog_start, 1);  // created 0.5, answered 1.5
  EXPECT_EQ(s[0].backlog_end, 1);    // created 4.9, answered 5.2
  EXPECT_FALSE(s[0].saturated);
}

// Failures: one at the drain's end never ended (the backlog at the end holds it); any other failure
// (out of memory here) ended when it was made. 12 of each, created in [0, 10):
//   drain failures: backlog 0 -> 12, >= 10 and >= 10 % of 12: saturated;
//   out of memory:  backlog 0 -> 0: not saturated (failing is not queueing).
TEST(Metrics, RequestsUnfinishedAtTheDrainsEndAreBacklogOtherFailuresAreNot) {
  std::vector<RequestRecord> drained, oom;
  for (int i = 0; i < 12; ++i) {
    RequestRecord a = request(0, 0.5 * i, NAN);
    a.status = RequestRecord::Status::failed;
    a.failure = "not finished 30 s after arrivals ended (drain_s): queued at the server";
    drained.push_back(a);
    a.failure = "out of memory on rpi4b: needs 1094.6 MB, has 1000.0 MB";
    oom.push_back(a);
  }
  auto d = summarise(drained, {"a"}, {}, 0.0, 10.0);
  EXPECT_EQ(d[0].failed, 12);
  EXPECT_EQ(d[0].backlog_end, 12);
  EXPECT_TRUE(d[0].saturated);
  auto o = summarise(oom, {"a"}, {}, 0.0, 10.0);
  EXPECT_EQ(o[0].backlog_end, 0);
  EXPECT_FALSE(o[0].saturated);
  EXPECT_TRUE(std::isnan(o[0].energy_j_per_inference));  // nothing delivered
}

// The rule's two thresholds: growth of 9 is below the 10-request floor however small the window's
// arrivals; growth of 10 over 100 arrivals is exactly 10 %; over 101 it is below.
TEST(Metrics, SaturationNeedsTenRequestsAndATenthOfTheArrivals) {
  EXPECT_FALSE(is_saturated(0, 9, 9));
  EXPECT_TRUE(is_saturated(0, 10, 100));
  EXPECT_FALSE(is_saturated(0, 10, 101));
  EXPECT_TRUE(is_saturated(5, 25, 200));
  EXPECT_FALSE(is_saturated(30, 25, 10));  // a backlog that shrank
}

// The failure texts of the window's requests are tallied one by one up to kMaxFailureReasons; later new
// texts are counted together. Here kMaxFailureReasons + 3 distinct texts each fail once in the window
// and the first text fails a second time: the first kMaxFailureReasons texts are listed (the first with
// 2), the last 3 fall under kOtherFailureReasons. A failure before the warm-up (1 s) is not a reason;
// resends add up over the whole run (2 + 3).
TEST(RequestDigest, TalliesAtMostItsCapOfFailureTextsOneByOne) {
  Scenario s;
  s.devices.resize(1);
  s.devices[0].id = "a";
  s.warmup_s = 1, s.duration_s = 10;
  RequestDigest digest(s);
  auto failed = [](double created, const std::string& why) {
    RequestRecord q = test::request(0, created, NAN);
    q.status = RequestRecord::Status::failed, q.failure = why;
    return q;
  };
  RequestRecord early = failed(0.5, "early");
  early.resends = 2;
  digest.add(early);
  for (size_t i = 0; i < kMaxFailureReasons + 3; ++i) digest.add(failed(2, "why " + std::to_string(i)));
  digest.add(failed(3, "why 0"));
  RequestRecord ok = test::request(0, 4, 4.5);
  ok.resends = 3;
  digest.add(ok);
  RunResults r;
  digest.finish(s, r, {0.0});
  EXPECT_EQ(r.request_count, static_cast<long long>(kMaxFailureReasons) + 6);
  EXPECT_EQ(r.failure_reasons.size(), kMaxFailureReasons + 1);
  EXPECT_EQ(r.failure_reasons.at("why 0"), 2);
  EXPECT_EQ(r.failure_reasons.at(kOtherFailureReasons), 3);
  EXPECT_EQ(r.failure_reasons.count("early"), 0u);
  EXPECT_EQ(r.resends, 5);
  ASSERT_EQ(r.summary.size(), 2u);
  EXPECT_EQ(r.summary[0].failed, static_cast<long long>(kMaxFailureReasons) + 4);
}
