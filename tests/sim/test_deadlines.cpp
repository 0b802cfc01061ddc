// Deadlines (workload.deadline_ms) and dropping late requests (workload.drop_late): the device loop's
// rule (core/device_loop.hpp) in the simulator, worked out by hand on the fixture's test device (every
// stage 10 ms: local = 90 ms) with four inputs arriving at once.
#include <gtest/gtest.h>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
RunResults four_at_once(SimSetup& s, const std::string& strategy, const std::string& deadline) {
  write_standard_luts(s);
  s.write_file("arrivals.txt", "1.0\n1.0\n1.0\n1.0\n");
  return s.run(scenario(device("d", strategy, "{arrival: trace, file: LUTDIR/arrivals.txt, " + deadline + "}"), "{window_ms: 0, max_size: 1}", 3, 0));
}
}  // namespace

TEST(Deadlines, ALateRequestIsDroppedBeforeItsDeviceSegment) {
  // Deadline 200 ms, drop_late. r1 runs 1.00-1.09 (90 ms, met), r2 1.09-1.18 (180 ms, met), r3 starts at
  // 1.18, 180 ms old (not yet late), ends 1.27 (270 ms: completed, missed), r4 would start at 1.27, 270 ms
  // old: dropped there. Attainment 2 of 4.
  SimSetup s;
  const RunResults r = four_at_once(s, "local", "deadline_ms: 200, drop_late: true");
  ASSERT_EQ(r.requests.size(), 4u);
  int dropped = 0;
  for (const auto& q : r.requests)
    if (q.status == RequestRecord::Status::dropped) {
      ++dropped;
      EXPECT_TRUE(std::isnan(q.t_device_start)) << "it never started";  // the failure text says when: 270 ms old
      EXPECT_NE(q.failure.find("dropped before its device segment 0: 270 ms old, past its deadline of 200 ms"), std::string::npos) << q.failure;
    }
  EXPECT_EQ(dropped, 1);
  const MetricsSummary& d = r.summary[0];
  EXPECT_EQ(d.completed, 3);
  EXPECT_EQ(d.failed, 1);
  EXPECT_EQ(d.dropped, 1);
  EXPECT_EQ(d.deadline_met, 2);
  EXPECT_NEAR(d.slo_attainment, 0.5, 1e-12);
  EXPECT_NEAR(r.summary.back().slo_attainment, 0.5, 1e-12);  // the total over the one device with a deadline
}

TEST(Deadlines, WithoutDropLateEveryRequestRunsAndLateOnesOnlyMiss) {
  // r4 runs 1.27-1.36 (360 ms): four completed, two within 200 ms.
  SimSetup s;
  const RunResults r = four_at_once(s, "local", "deadline_ms: 200");
  const MetricsSummary& d = r.summary[0];
  EXPECT_EQ(d.completed, 4);
  EXPECT_EQ(d.dropped, 0);
  EXPECT_EQ(d.deadline_met, 2);
  EXPECT_NEAR(d.slo_attainment, 0.5, 1e-12);
}

TEST(Deadlines, ALateRequestIsDroppedBeforeItsUpload) {
  // Offload on the 8 Mbit/s, 5 ms link, deadline 30 ms: an upload of 12,288 B reaches the server
  // 17.388 ms after it starts (12.288 + 5 + 0.1 ms) and the uplink sends one at a time (the next starts
  // when the server has the last). r1 (created at 1.0 s) arrives at 17.388 ms and is taken at once
  // (17.388 + 9 ms alone <= 30) and completes (its result back at 31.648 ms: late, not dropped). r2
  // starts its upload at 17.388 ms (< 30: it is sent) and arrives 34.776 ms old: the server drops it.
  // r3 and r4 would start their uploads 34.776 ms old: dropped there.
  SimSetup s;
  const RunResults r = four_at_once(s, "offload", "deadline_ms: 30, drop_late: true");
  int before_upload = 0, at_server = 0;
  for (const auto& q : r.requests) {
    if (q.status != RequestRecord::Status::dropped) continue;
    if (q.failure.find("dropped before its upload: 34.776 ms old") != std::string::npos)
      ++before_upload;
    else if (q.failure.find("dropped at server srv: 34.776 ms old, its deadline of 30 ms cannot be met") != std::string::npos)
      ++at_server;
    else
      ADD_FAILURE() << q.failure;
  }
  EXPECT_EQ(before_upload, 2);
  EXPECT_EQ(at_server, 1);
  EXPECT_EQ(r.summary[0].completed, 1);
}

TEST(Deadlines, NoDeadlineNoAttainment) {
  SimSetup s;
  const RunResults r = four_at_once(s, "local", "deadline_ms: 0");
  EXPECT_TRUE(std::isnan(r.summary[0].slo_attainment));
}

TEST(Deadlines, AnUploadedRequestPastItsDeadlineIsDroppedAtTheServer) {
  // Three offloaders (own 8 Mbit/s, 5 ms links) create one input each at t = 0; all arrive at the server
  // at 17.388 ms (tests/sim/test_batching.cpp). One worker, no window, 9 ms a request, deadline 40 ms
  // with drop_late: the first runs 17.388-26.388 ms, the second is taken at 26.388 ms (26.388 + 9 <=
  // 40: runs, ends 35.388 ms), the third is taken at 35.388 ms: 35.388 + 9 > 40, it cannot meet its
  // deadline: dropped at the server, never run; its device records it dropped when the notice comes.
  SimSetup s;
  write_standard_luts(s);
  std::string three;
  for (const char* id : {"a", "b", "c"}) three += device(id, "offload", "{arrival: closed_loop, in_flight: 1, deadline_ms: 40, drop_late: true}");
  const RunResults r = s.run(scenario(three, "{window_ms: 0, max_size: 1}", 0.01, 0));
  ASSERT_EQ(r.requests.size(), 3u);
  int ok = 0, dropped = 0;
  for (const auto& q : r.requests) {
    if (q.status == RequestRecord::Status::ok) {
      ++ok;
      continue;
    }
    ASSERT_EQ(q.status, RequestRecord::Status::dropped) << q.failure;
    ++dropped;
    EXPECT_TRUE(std::isnan(q.t_batch_start)) << "it never ran";
    EXPECT_NEAR(q.t_queued, 0.017388, 1e-9);
    EXPECT_NE(q.failure.find("dropped at server srv: 35.388 ms old, its deadline of 40 ms cannot be met (9 ms alone"), std::string::npos)
        << q.failure;
  }
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(dropped, 1);
  EXPECT_EQ(r.summary.back().dropped, 1);
}
