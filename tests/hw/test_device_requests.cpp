// The real device's request bookkeeping (hw/device_requests.hpp) without threads or sockets: routing
// by strategy, data_parallel sides, completion and failure, the journal, closed-loop admission.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "hw/device_requests.hpp"

using namespace coinfer;
using namespace coinfer::hw;

namespace {
struct Journal {
  std::string dir, path;
  Journal() {
    char tmpl[] = "/tmp/coinfer-devreq-XXXXXX";
    dir = mkdtemp(tmpl);
    path = dir + "/journal.jsonl";
  }
  ~Journal() { std::filesystem::remove_all(dir); }
};
// Server path 0.138584 s at 1 Mbit/s (see test_policies.cpp) against 0.9 s locally: server first.
DataParallelRouter router() { return DataParallelRouter(DataParallelCosts{0.9, 0.009, 12288, 160, 0.030}); }
}  // namespace

TEST(DeviceRequests, RoutesByStrategyAndJournalsEveryRequest) {
  Journal j;
  {
    JournalWriter w(j.path);
    DeviceRequests rq(2, 0, 9, router(), w);
    const auto a = rq.create(Strategy::pp(3), 1.0, 125000);   // device part first
    const auto b = rq.create(Strategy::offload(), 1.1, 125000);  // straight to the uplink
    ASSERT_EQ(rq.compute_q.size(), 1u);
    EXPECT_EQ(rq.compute_q.front().id, a);
    EXPECT_EQ(rq.compute_q.front().split, 3);
    ASSERT_EQ(rq.upload_q.size(), 1u);
    EXPECT_EQ(rq.upload_q.front().first, b);
    EXPECT_EQ(rq.find(b)->split, 0);
    EXPECT_EQ(rq.find(a)->strategy, "pp(3)");
    rq.mark_at_server(b);
    rq.complete(b, false, "connection to the server lost", 1.5, 125000);
    rq.complete(a, true, "", 1.6, 125000);
    rq.complete(a, true, "", 1.7, 125000);  // twice: ignored
    EXPECT_EQ(rq.unfinished(), 0u);
    EXPECT_EQ(rq.failed(), 1);
    EXPECT_TRUE(rq.at_server_ids().empty());
  }
  const auto recs = read_journal(j.path);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].device, 2);
  EXPECT_DOUBLE_EQ(recs[0].t_result, 1.6);
  EXPECT_EQ(recs[1].status, RequestRecord::Status::failed);
  EXPECT_EQ(recs[1].failure, "connection to the server lost");
}

TEST(DeviceRequests, DataParallelInputsTakeFreeSidesAndWaitWhenBothAreBusy) {
  Journal j;
  JournalWriter w(j.path);
  DeviceRequests rq(0, 0, 9, router(), w);
  const Strategy dp = Strategy::data_parallel();
  const auto a = rq.create(dp, 0, 125000);  // both free: the server path is cheaper -> upload
  const auto b = rq.create(dp, 0, 125000);  // server busy -> device
  const auto c = rq.create(dp, 0, 125000);  // both busy: waits
  EXPECT_EQ(rq.find(a)->split, 0);
  EXPECT_EQ(rq.find(b)->split, 9);
  EXPECT_EQ(rq.upload_q.size(), 1u);
  EXPECT_EQ(rq.compute_q.size(), 1u);
  EXPECT_FALSE(rq.closed_loop_admits(dp, 100));  // an input waits for a side
  rq.complete(b, true, "", 1, 125000);            // the device side frees: c takes it
  EXPECT_EQ(rq.find(c)->split, 9);
  EXPECT_EQ(rq.compute_q.size(), 2u);
  // A waiting input that fails (e.g. at the end of the drain) leaves the queue of waiting inputs.
  const auto d = rq.create(dp, 2, 125000);
  rq.complete(d, false, "unfinished at the end of the drain", 3, 125000);
  rq.complete(a, true, "", 3, 125000);
  EXPECT_TRUE(rq.closed_loop_admits(dp, 100));  // nothing waits; the server side is free
}

TEST(DeviceRequests, ClosedLoopWaitsForTheFirstStageAndTheInFlightLimit) {
  Journal j;
  JournalWriter w(j.path);
  DeviceRequests rq(0, 0, 9, router(), w);
  EXPECT_TRUE(rq.closed_loop_admits(Strategy::pp(3), 2));
  rq.create(Strategy::pp(3), 0, 125000);
  EXPECT_FALSE(rq.closed_loop_admits(Strategy::pp(3), 2));  // queued for the compute stage
  rq.compute_q.pop_front();
  rq.computing = true;
  EXPECT_FALSE(rq.closed_loop_admits(Strategy::pp(3), 2));  // computing
  rq.computing = false;
  EXPECT_TRUE(rq.closed_loop_admits(Strategy::pp(3), 2));   // on its way up: the next may start
  EXPECT_FALSE(rq.closed_loop_admits(Strategy::pp(3), 1));  // but not beyond in_flight
  // A helper task in the compute queue is not our request: it does not block admission.
  rq.compute_q.push_back({true, 77, 3, "x"});
  EXPECT_TRUE(rq.closed_loop_admits(Strategy::pp(3), 2));
}
