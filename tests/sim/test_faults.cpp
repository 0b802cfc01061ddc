// No request is lost silently: what cannot finish within drain_s after arrivals end is recorded as
// failed, with the reason.
#include <gtest/gtest.h>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

TEST(Faults, UnfinishedRequestsAreRecordedAsFailed) {
  SimSetup s;
  s.write_lut("testdev", 0.010);
  s.write_lut("testsrv", 10.0);  // 90 s on the server: cannot finish
  RunResults r = s.run(scenario(device("d", "offload"), "{window_ms: 0, max_size: 1}", 1) + "drain_s: 0.5\n");
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].status, RequestRecord::Status::failed);
  EXPECT_NE(r.requests[0].failure.find("drain_s"), std::string::npos);
  EXPECT_NEAR(r.end_s, 1.5, kTol);
  EXPECT_EQ(r.summary.back().failed, 1);
  EXPECT_EQ(r.summary.back().completed, 0);
}

TEST(Faults, EveryRequestCompletesWhenTheSystemKeepsUp) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("a", "pp(6)", "{arrival: poisson, rate_per_s: 5}") + device("b", "data_parallel", "{arrival: closed_loop}"),
                                "{window_ms: 10, max_size: 4}", 20));
  ASSERT_GT(r.requests.size(), 100u);
  for (const auto& q : r.requests) EXPECT_TRUE(q.done() && q.status == RequestRecord::Status::ok) << q.id;
}

// The drain ends while work is in progress on a device, on the uplink, on the server or on an idle
// helper: the run ends at duration + drain (no abort), every unfinished request is failed with the
// stage it was in, and nothing else is lost. SimGrid aborts ("The Impossible Did Happen") when a
// device still has an execution pending at the end of the drain unless the run cancels it.
namespace {
void expect_clean_end(const RunResults& r, double end_s) {
  EXPECT_NEAR(r.end_s, end_s, kTol);
  ASSERT_FALSE(r.requests.empty());
  int failed = 0;
  for (const auto& q : r.requests) {
    if (q.status == RequestRecord::Status::ok) {
      EXPECT_TRUE(q.done()) << q.id;
      continue;
    }
    ++failed;
    EXPECT_FALSE(q.done()) << q.id;
    EXPECT_NE(q.failure.find("drain_s"), std::string::npos) << q.failure;
  }
  EXPECT_GT(failed, 0);
}
}  // namespace

TEST(Faults, DrainEndsWhileADeviceComputesLocally) {
  SimSetup s;
  write_standard_luts(s);
  // 90 ms per local request: the one created at 0.99 s is computing at 1.001 s.
  RunResults r = s.run(scenario(device("d", "local", "{arrival: closed_loop}"), "{window_ms: 0, max_size: 1}", 1) + "drain_s: 0.001\n");
  expect_clean_end(r, 1.001);
  EXPECT_NE(r.requests.back().failure.find("computing on the device"), std::string::npos) << r.requests.back().failure;
}

TEST(Faults, DrainEndsDuringPipelineAndDataParallelWork) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("p", "pp(3)", "{arrival: closed_loop}") + device("q", "data_parallel", "{arrival: closed_loop}") +
                                    device("o", "offload", "{arrival: poisson, rate_per_s: 200}"),
                                "{window_ms: 10, max_size: 4}", 1) +
                       "drain_s: 0.001\n");
  expect_clean_end(r, 1.001);
}

TEST(Faults, DrainEndsWhileAHelperRunsAForwardedBatch) {
  SimSetup s;
  s.write_lut("testdev", 0.100);
  s.write_lut("testsrv", 0.010);
  s.write_lut("helper", 0.050);  // 450 ms on the helper: a forwarded batch is running when the drain ends
  const std::string wl = "{arrival: poisson, rate_per_s: 30}";
  const std::string link = "{bandwidth_mbps: 100, latency_ms: 1}";
  std::string devs = device("a", "offload", wl, link) + device("b", "offload", wl, link) +
                     "  - {id: h, type: helper, model: dgcnn, dataset: modelnet40, link: " + link + ", workload: {arrival: none}}\n";
  RunResults r = s.run(scenario(devs, "{window_ms: 0, max_size: 1}", 2, 0, 1, "scheduler: {name: static, helpers: true}\ndrain_s: 0.001\n"));
  expect_clean_end(r, 2.001);
  bool helper_failed = false;
  for (const auto& q : r.requests) helper_failed = helper_failed || (q.helper == 2 && q.status == RequestRecord::Status::failed);
  EXPECT_TRUE(helper_failed);
}
