// Server choice (sched/server_choice.hpp, Scheme::servers), timed by hand on the
// fixture (sim_fixture.hpp). Device a (testdev, 8 Mbit/s = 1e6 B/s, 5 ms link) offloads, one request in
// flight, and is bound to server "slow" (testslow: 10 ms a stage, 90 ms the model); "fast" (testsrv: 1
// ms a stage, 9 ms) is idle. Both servers have a 0.1 ms link. Offload on fast: up 17.388 ms (5.1 ms +
// 12,288 B / 1e6 B/s) + 9 ms + down 5.26 ms (5.1 ms + 160 B / 1e6 B/s) = 31.648 ms; on slow: 112.648 ms.
// The first decision (t = 0) moves a to fast; its message (256 B) leaves the monitor on the first
// server's host and reaches a after 5.1 ms + 0.256 ms = 5.356 ms. Request 0, on its upload to slow
// since t = 0, finishes there; the requests created after the move go to fast.
#include <gtest/gtest.h>

#include <string>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
constexpr double kFast = 0.031648, kSlow = 0.112648;

std::string two_servers(const std::string& scheduler, const std::string& extra = "") {
  return "name: t\nseed: 1\nduration_s: 0.3\nwarmup_s: 0\nluts: [LUTDIR]\nservers:\n"
         "  - {id: slow, type: testslow, workers: 1, batch: {window_ms: 0, max_size: 1}, link: {bandwidth_mbps: 1000, latency_ms: 0.1}}\n"
         "  - {id: fast, type: testsrv, workers: 1, batch: {window_ms: 0, max_size: 1}, link: {bandwidth_mbps: 1000, latency_ms: 0.1}}\n"
         "access_point: {bandwidth_mbps: 1000}\nscheduler: " +
         scheduler + "\ndevices:\n" +
         "  - {id: a, type: testdev, model: dgcnn, dataset: modelnet40, server: slow, link: {bandwidth_mbps: 8, latency_ms: 5}, strategy: offload, "
         "workload: {arrival: closed_loop, in_flight: 1}}\n" +
         extra;
}

void write_luts(SimSetup& s) {
  write_standard_luts(s);
  s.write_lut("testslow", 0.010);
}
}  // namespace

TEST(ServerChoice, ADeviceMovedToAnIdleFasterServerSendsItsNewRequestsThere) {
  // Request 0 (to slow, t = 0) completes at 112.648 ms; then one request every 31.648 ms on fast:
  // created at 112.648 + k x 31.648 ms for k = 0..5 (the seventh would be created at 302.5 ms, past the
  // 300 ms of arrivals).
  SimSetup s;
  write_luts(s);
  const RunResults r = s.run(two_servers("{name: static, choose_servers: true}"));
  ASSERT_EQ(r.requests.size(), 7u);
  EXPECT_EQ(r.requests[0].server, 0);
  EXPECT_NEAR(r.requests[0].latency_s(), kSlow, kTol);
  for (int k = 1; k < 7; ++k) {
    const auto& q = r.requests[static_cast<size_t>(k)];
    EXPECT_TRUE(q.done()) << k;
    EXPECT_EQ(q.server, 1) << k;
    EXPECT_NEAR(q.t_created, kSlow + (k - 1) * kFast, kTol) << k;
    EXPECT_NEAR(q.latency_s(), kFast, kTol) << k;
  }
  // The decision says where a went, in its scheme and its detail.
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_NE(r.decisions[0].scheme.find(" servers=[a:fast]"), std::string::npos) << r.decisions[0].scheme;
  EXPECT_NE(r.decisions[0].detail.find(R"("moved":[{"device":"a","from":"slow","to":"fast"}])"), std::string::npos) << r.decisions[0].detail;
  // Each server's own records: slow served one request, fast six.
  ASSERT_EQ(r.server_results.size(), 2u);
  EXPECT_EQ(r.server_results[0].batches, 1);
  EXPECT_EQ(r.server_results[1].batches, 6);
}

TEST(ServerChoice, WithoutChoiceTheDeviceKeepsItsBinding) {
  // The same system, scheduler.choose_servers left out: every request on slow, 112.648 ms each (three
  // created within 300 ms: at 0, 112.648 and 225.296 ms).
  SimSetup s;
  write_luts(s);
  const RunResults r = s.run(two_servers("{name: static}"));
  ASSERT_EQ(r.requests.size(), 3u);
  for (const auto& q : r.requests) {
    EXPECT_EQ(q.server, 0);
    EXPECT_NEAR(q.latency_s(), kSlow, kTol);
  }
}

TEST(ServerChoice, TheOldServerFailingLosesOnlyTheRequestItHeldAndTheMovedDeviceGoesOn) {
  // slow fails at 50 ms holding request 0 (uploaded at 17.388 ms, running until 107.388 ms): it fails
  // then with slow's reason. a is on fast already: it is not held back; request 1 is created at 50 ms
  // and every later one completes on fast, 31.648 ms each. No decision moves a back to a failed server.
  SimSetup s;
  write_luts(s);
  const RunResults r = s.run(two_servers("{name: static, choose_servers: true}",
                                         "events:\n  - {at_s: 0.05, server: slow, fail: true}\n  - {at_s: 0.2, server: slow, recover: true}\n"));
  ASSERT_GE(r.requests.size(), 2u);
  EXPECT_EQ(r.requests[0].status, RequestRecord::Status::failed);
  EXPECT_EQ(r.requests[0].failure, "server slow failed at 0.05 s");
  for (size_t k = 1; k < r.requests.size(); ++k) {
    const auto& q = r.requests[k];
    EXPECT_TRUE(q.done()) << k;
    EXPECT_EQ(q.server, 1) << k;
    EXPECT_NEAR(q.t_created, 0.05 + (k - 1) * kFast, kTol) << k;
  }
  EXPECT_EQ(r.requests.size(), 9u);  // 50 ms + k x 31.648 ms < 300 ms for k = 0..7
  for (const auto& d : r.decisions) EXPECT_EQ(d.scheme.find("a:slow"), std::string::npos) << d.t_s << " " << d.scheme;
}

TEST(ServerChoice, ARequestStillOnTheDeviceWhenTheMoveArrivesUploadsToTheNewServer) {
  // pp(6): request 0 computes [0, 60 ms) on the device; the move reaches a at 5.356 ms, before its
  // upload: it goes to fast. 60 ms + up 13.292 ms (5.1 ms + 8,192 B / 1e6 B/s) + 3 ms on fast + down
  // 5.26 ms = 81.552 ms (on slow it would take 30 ms there: 108.552 ms).
  SimSetup s;
  write_luts(s);
  std::string yaml = two_servers("{name: static, choose_servers: true}");
  yaml.replace(yaml.find("strategy: offload"), 17, "strategy: pp(6)");
  const RunResults r = s.run(yaml);
  ASSERT_FALSE(r.requests.empty());
  EXPECT_EQ(r.requests[0].server, 1);
  EXPECT_NEAR(r.requests[0].latency_s(), 0.081552, kTol);
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_NE(r.decisions[0].scheme.find(" servers=[a:fast]"), std::string::npos) << r.decisions[0].scheme;
}
