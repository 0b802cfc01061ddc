// A cloud tier (sim/README.md "Cloud tier"): pp(k,m) runs [0,k) on the device, [k,m)
// on its edge server and [m,n) on the edge's cloud (servers[].cloud), timed by hand on the fixture
// (sim_fixture.hpp: CM02, a transfer = the sum of its route's latencies + bytes / the bottleneck rate).
//
// The platform: the device link 1e6 B/s and 5 ms, the access point 125e6 B/s and 0 ms, the edge "srv"
// 125e6 B/s and 0.1 ms, the cloud "cloud" behind a WAN of 8 Mbit/s = 1e6 B/s and 20 ms. Stages: 10 ms
// each on the device, 1 ms on the edge (testsrv), 0.5 ms on the cloud (testcloud). dgcnn's tensors
// (tests/unit/test_model_spec.cpp): 8,192 B at split 6, 1,024 B at split 8 (256 floats), 160 B at 9.
//
// pp(6,8), one request in flight:
//   device [0,6)             60 ms
//   upload device -> edge    5 + 0 + 0.1 ms latency + 8,192 B / 1e6 B/s = 13.292 ms
//   edge [6,8)               2 x 1 ms = 2 ms
//   edge -> cloud            0.1 + 20 ms + 1,024 B / 1e6 B/s (the WAN) = 21.124 ms
//   cloud [8,9)              0.5 ms
//   result cloud -> device   20 + 0 + 5 ms + 160 B / 1e6 B/s = 25.16 ms
//   total                    122.076 ms
#include <gtest/gtest.h>

#include <string>

#include "core/input_error.hpp"
#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {

constexpr double kDeviceS = 0.060, kUpS = 0.013292, kEdgeS = 0.002, kToCloudS = 0.021124, kCloudS = 0.0005, kBackS = 0.02516;
constexpr double kThreeTierS = kDeviceS + kUpS + kEdgeS + kToCloudS + kCloudS + kBackS;

void write_luts(SimSetup& s) {
  write_standard_luts(s);
  s.write_lut("testcloud", 0.0005);
}

// The fixture's one-server scenario with a cloud added behind the edge (edge batching `batch`).
std::string three_tier(const std::string& devices, double duration_s = 1, const std::string& extra = "",
                       const std::string& batch = "{window_ms: 0, max_size: 1}") {
  std::string y = scenario(devices, batch, duration_s, 0, 1, extra);
  const std::string edge = "  - {id: srv, type: testsrv,";
  y.replace(y.find(edge), edge.size(),
            "  - {id: cloud, type: testcloud, batch: {window_ms: 0, max_size: 1}, link: {bandwidth_mbps: 8, latency_ms: 20}}\n"
            "  - {id: srv, type: testsrv, cloud: cloud,");
  return y;
}

std::string device_at_srv(const std::string& id, const std::string& strategy) {
  return "  - {id: " + id +
         ", server: srv, type: testdev, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 8, latency_ms: 5}, strategy: \"" + strategy +
         "\", workload: {arrival: closed_loop, in_flight: 1}}\n";
}

}  // namespace

TEST(CloudTier, ThreeTierPipelineLatencyIsEveryLegByHand) {
  SimSetup s;
  write_luts(s);
  const RunResults r = s.run(three_tier(device_at_srv("d", "pp(6,8)")));
  EXPECT_NEAR(kThreeTierS, 0.122076, 1e-12);
  // Back to back: requests created at i x 122.076 ms < 1 s -> 9 requests, all done.
  ASSERT_EQ(r.requests.size(), 9u);
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const auto& q = r.requests[i];
    ASSERT_TRUE(q.done()) << i << " " << q.failure;
    EXPECT_NEAR(q.t_created, kThreeTierS * static_cast<double>(i), kTol);
    EXPECT_NEAR(q.latency_s(), kThreeTierS, kTol) << i;
    EXPECT_EQ(q.strategy, "pp(6,8)");
    EXPECT_EQ(q.split, 6);
    EXPECT_EQ(q.server, 1);  // srv is servers[1]
    EXPECT_EQ(q.cloud, 0);
    EXPECT_DOUBLE_EQ(q.bytes_to_cloud, 1024);
    EXPECT_NEAR(q.t_batch_end - q.t_batch_start, kEdgeS, kTol);
    EXPECT_NEAR(q.t_cloud_queued - q.t_batch_end, kToCloudS, kTol);
    EXPECT_NEAR(q.t_cloud_batch_start, q.t_cloud_queued, kTol);
    EXPECT_NEAR(q.t_cloud_batch_end - q.t_cloud_batch_start, kCloudS, kTol);
    EXPECT_EQ(q.cloud_batch_size, 1);
    EXPECT_NEAR(q.t_result - q.t_cloud_batch_end, kBackS, kTol);
  }
  // Each server counts the requests it computed a part of (created in the window, completed: 9) and
  // its own busy time within the 1 s window: the last request (created at 976.608 ms) reaches the edge
  // at 1,049.9 ms, past it, so 8 batches each: 8 x 0.5 ms on the cloud, 8 x 2 ms on the edge.
  ASSERT_EQ(r.server_results.size(), 2u);
  EXPECT_EQ(r.server_results[0].requests, 9);
  EXPECT_EQ(r.server_results[1].requests, 9);
  EXPECT_NEAR(r.server_results[0].busy_s, 8 * kCloudS, kTol);
  EXPECT_NEAR(r.server_results[1].busy_s, 8 * kEdgeS, kTol);
  // The static scheme's prediction (the analytic estimator's three-tier path) is the same sum.
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_NEAR(r.decisions[0].predicted_latency_ms, kThreeTierS * 1e3, 1e-6);
}

TEST(CloudTier, AnEdgeBatchesOnlyRequestsWhosePartEndsAtTheSameStage) {
  // Three devices at one edge batching within 50 ms, up to 3: a and c run pp(6,8), b runs pp(6). All
  // three reach the edge at split 6, but b's part there is [6,9) and theirs [6,8): the edge batches a
  // with c (a batch of 2 occurs) and never either with b.
  SimSetup s;
  write_luts(s);
  const RunResults r = s.run(
      three_tier(device_at_srv("a", "pp(6,8)") + device_at_srv("b", "pp(6)") + device_at_srv("c", "pp(6,8)"), 1, "", "{window_ms: 50, max_size: 3}"));
  int with_b = 0, a_with_c = 0;
  for (const auto& q : r.requests)
    for (const auto& o : r.requests) {
      if (!q.done() || !o.done() || q.device >= o.device || q.t_batch_start != o.t_batch_start) continue;
      if (q.device == 1 || o.device == 1)
        ++with_b;
      else
        ++a_with_c;
    }
  EXPECT_EQ(with_b, 0);
  EXPECT_GT(a_with_c, 0);
  for (const auto& q : r.requests)
    if (q.done() && q.device == 1) {
      EXPECT_EQ(q.cloud, -1);
    }
}

TEST(CloudTier, ACloudFailureFailsWhatItHoldsAndTheEdgeFailsWhatIsPassedOnWhileItIsDown) {
  // Request 0 runs as above: done at 122.076 ms. Request 1 (created then) reaches the edge at
  // 122.076 + 60 + 13.292 = 195.368 ms and ends its edge part at 197.368 ms; its transfer to the cloud
  // starts then and would end at 218.492 ms: the cloud fails at 0.2 s, while the cloud holds it, so it
  // fails then. Request 2 (created at 0.2 s) ends its edge part at 275.292 ms while the cloud is still
  // down (it recovers at 0.3 s): it fails at once with the cloud's "down" reason.
  SimSetup s;
  write_luts(s);
  const RunResults r = s.run(three_tier(device_at_srv("d", "pp(6,8)"), 0.3,
                                        "events:\n  - {at_s: 0.2, server: cloud, fail: true}\n  - {at_s: 0.3, server: cloud, recover: true}\n"));
  ASSERT_GE(r.requests.size(), 3u);
  EXPECT_TRUE(r.requests[0].done());
  const auto& held = r.requests[1];
  EXPECT_EQ(held.status, RequestRecord::Status::failed);
  EXPECT_EQ(held.failure, "server cloud failed at 0.2 s");
  EXPECT_NEAR(held.t_batch_end, kThreeTierS + kDeviceS + kUpS + kEdgeS, kTol);
  const auto& refused = r.requests[2];
  EXPECT_NEAR(refused.t_created, 0.2, kTol);
  EXPECT_EQ(refused.status, RequestRecord::Status::failed);
  EXPECT_EQ(refused.failure, "server cloud is down (failed at 0.2 s)");
  EXPECT_NEAR(refused.t_batch_end, 0.2 + kDeviceS + kUpS + kEdgeS, kTol);
  EXPECT_EQ(refused.cloud, 0);
}

TEST(CloudTier, GreedyChoosesTheCloudWhenTheEdgeIsSlowAndTheWanIsFast) {
  // The edge is slow (20 ms a stage), the cloud fast (0.5 ms), the WAN 1 Gbit/s with 1 ms: greedy's
  // options include pp(k,m), and the best one passes everything after the device part to the cloud
  // with as little at the edge as it can: no scheme without a cloud part comes close (offload alone
  // pays 180 ms at the edge).
  SimSetup s;
  s.write_lut("testdev", 0.010);
  s.write_lut("testsrv", 0.020);
  s.write_lut("testcloud", 0.0005);
  std::string y = three_tier(device_at_srv("d", "local"), 1, "scheduler: {name: greedy}\n");
  y.replace(y.find("link: {bandwidth_mbps: 8, latency_ms: 20}"), 41, "link: {bandwidth_mbps: 1000, latency_ms: 1}");
  const RunResults r = s.run(y);
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_NE(r.decisions[0].scheme.find("d=pp("), std::string::npos) << r.decisions[0].scheme;
  EXPECT_NE(r.decisions[0].scheme.find(","), std::string::npos) << r.decisions[0].scheme;
  int at_cloud = 0;
  for (const auto& q : r.requests) at_cloud += q.done() && q.cloud == 0;
  EXPECT_GT(at_cloud, 0);
}

TEST(CloudTier, AStrategyWithACloudPartNeedsAServerWithACloud) {
  SimSetup s;
  write_standard_luts(s);
  try {
    s.run(scenario(device("d", "\"pp(6,8)\"")));
    FAIL() << "pp(6,8) without a cloud was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has none (servers[].cloud"), std::string::npos) << e.what();
  }
}

TEST(CloudTier, ARequestMovedBeforeItsUploadToAServerWithoutACloudRunsTheRestThere) {
  // With choose_servers, the first decision moves d from the edge to the cloud server (its stages
  // take 0.5 ms against the edge's 1 ms), which has no cloud of its own, and gives it pp(6) there.
  // Request 0 was created at 0 s under pp(6,8) and routed for the edge with its cloud part; its
  // upload starts at 60 ms, after the scheduling message arrived: it goes to the cloud server and runs
  // [6,9) there, 3 x 0.5 ms = 1.5 ms (not [6,8) and a result with half a model). The next requests
  // run pp(6) there.
  SimSetup s;
  write_luts(s);
  const RunResults r = s.run(three_tier(device_at_srv("d", "pp(6,8)"), 0.4, "scheduler: {name: static, choose_servers: true}\n"));
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_NE(r.decisions[0].scheme.find("servers=[d:cloud]"), std::string::npos) << r.decisions[0].scheme;
  ASSERT_GE(r.requests.size(), 2u);
  const RequestRecord& first = r.requests[0];
  ASSERT_TRUE(first.done()) << first.failure;
  EXPECT_EQ(first.strategy, "pp(6,8)");
  EXPECT_EQ(first.server, 0);  // the cloud server, as a plain server
  EXPECT_EQ(first.cloud, -1);
  EXPECT_NEAR(first.t_batch_end - first.t_batch_start, 0.0015, kTol);
  EXPECT_EQ(r.requests[1].strategy, "pp(6)");
}
