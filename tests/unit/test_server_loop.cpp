// The server loop (core/server_loop.hpp) driven by scripted events, engine-free. Expected actions are
// worked out by hand from the rules: ACE-GNN's batch window (core/batch_queue.hpp), free workers take
// the oldest sealed batch, and the forwarding rule (core/helper_forwarding.hpp) sends the newest to a
// free helper when it is expected back sooner than the server would finish it.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/server_loop.hpp"

using namespace coinfer;

namespace {

struct Recorder : ServerActions<int> {
  std::vector<std::string> log;
  std::map<int, double> helper_s;    // helper -> expected seconds for any batch (absent: +infinity)
  std::map<int, bool> available;     // helper -> available (absent: yes)
  std::map<int, double> drop_after;  // item -> when it is past its deadline (absent: never)

  static std::string text(const std::vector<int>& b) {
    std::string s = "[";
    for (size_t i = 0; i < b.size(); ++i) s += (i ? "," : "") + std::to_string(b[i]);
    return s + "]";
  }
  // 0.1 s for one request, 0.05 s more per extra request in the batch.
  double expected_seconds(const std::vector<int>& b) const override { return 0.1 + 0.05 * static_cast<double>(b.size() - 1); }
  double helper_seconds(int helper, const std::vector<int>&) const override {
    auto it = helper_s.find(helper);
    return it == helper_s.end() ? std::numeric_limits<double>::infinity() : it->second;
  }
  bool helper_available(int helper) const override {
    auto it = available.find(helper);
    return it == available.end() || it->second;
  }
  double drop_after_s(const int& item) const override {
    auto it = drop_after.find(item);
    return it == drop_after.end() ? std::numeric_limits<double>::infinity() : it->second;
  }
  double seconds_alone(const int&) const override { return 0.1; }
  void drop(int item, double now_s) override { log.push_back("drop " + std::to_string(item) + " at " + std::to_string(now_s).substr(0, 5)); }
  void start_batch(std::uint64_t token, std::vector<int> b) override { log.push_back("run " + std::to_string(token) + " " + text(b)); }
  void forward(int helper, std::vector<int> b) override { log.push_back("forward " + std::to_string(helper) + " " + text(b)); }
  std::vector<std::string> take() {
    std::vector<std::string> out;
    out.swap(log);
    return out;
  }
};
using Log = std::vector<std::string>;

}  // namespace

TEST(ServerLoop, ABatchSealsAtItsWindowsEndAndWaitsForTheOnlyWorker) {
  Recorder e;
  ServerLoop<int> loop(BatchSpec{10, 4}, 1, e);      // 10 ms window, up to 4
  EXPECT_TRUE(loop.on_upload(1, 0, 0.000).opened);   // group 0 opens a window ending at 0.010
  EXPECT_FALSE(loop.on_upload(2, 0, 0.005).opened);  // joins it
  EXPECT_TRUE(loop.on_upload(3, 1, 0.006).opened);   // another group: its own window (0.016)
  EXPECT_DOUBLE_EQ(loop.next_deadline_s(), 0.010);
  loop.on_timer(0.009);
  EXPECT_EQ(e.take(), Log{});  // nothing due yet
  loop.on_timer(0.010);
  EXPECT_EQ(e.take(), Log{"run 0 [1,2]"});
  EXPECT_EQ(loop.busy_workers(), 1);
  loop.on_timer(0.016);  // sealed, but the worker is busy
  EXPECT_EQ(e.take(), Log{});
  EXPECT_EQ(loop.queued(), 1);
  EXPECT_EQ(loop.on_upload(4, 1, 0.02).sealed, false);  // a sealed batch never grows: 4 opens the next
  loop.on_batch_done(0, 0.16);
  EXPECT_EQ(e.take(), Log{"run 1 [3]"});
  loop.on_batch_done(0, 0.17);  // twice: ignored
  EXPECT_EQ(loop.busy_workers(), 1);
}

TEST(ServerLoop, AFullBatchSealsAtOnceAndFreeWorkersTakeTheOldestFirst) {
  Recorder e;
  ServerLoop<int> loop(BatchSpec{50, 2}, 2, e);
  loop.on_upload(1, 0, 0);
  loop.on_upload(2, 0, 0.001);  // full: sealed without waiting for the window
  loop.on_upload(3, 0, 0.002);
  loop.on_upload(4, 0, 0.003);
  loop.on_upload(5, 0, 0.004);
  loop.on_upload(6, 0, 0.005);  // two workers busy: [5,6] waits
  EXPECT_EQ(e.take(), (Log{"run 0 [1,2]", "run 1 [3,4]"}));
  loop.on_batch_done(1, 0.2);
  EXPECT_EQ(e.take(), Log{"run 2 [5,6]"});
}

TEST(ServerLoop, ANewBatchingSealsWhatItClosesAndAFreeWorkerTakesItAtOnce) {
  // 20 ms window, up to 4, one worker. Two requests of group 0 at t = 0 and 0.001 wait for the window.
  // At t = 0.005 the scheme sets a 2-request limit: the open batch holds 2, so it is sealed now and
  // the idle worker starts it at 0.005, not at the old window's end (0.020).
  Recorder e;
  ServerLoop<int> loop(BatchSpec{20, 4}, 1, e);
  loop.on_upload(1, 0, 0.000);
  loop.on_upload(2, 0, 0.001);
  EXPECT_EQ(e.take(), Log{});
  loop.set_batching(BatchSpec{20, 2}, 0.005);
  EXPECT_EQ(e.take(), Log{"run 0 [1,2]"});
  EXPECT_EQ(loop.batching().max_size, 2);
  // Without a window every later request is its own batch (it waits for the worker).
  loop.set_batching(BatchSpec{0, 2}, 0.006);
  EXPECT_TRUE(loop.on_upload(3, 0, 0.007).sealed);
  EXPECT_EQ(loop.next_deadline_s(), std::numeric_limits<double>::infinity());
}

TEST(ServerLoop, RequestsThatCannotMeetTheirDeadlineAreDroppedWhenTheirBatchIsTaken) {
  // One worker, no window, 0.1 s a request alone. 1 runs at t = 0. 2 and 3 wait; 2's deadline is
  // 0.05, 3's 0.5. When the worker frees at 0.1, 2 is dropped (past) and 3 runs alone (0.1 + 0.1 <=
  // 0.5). 4's deadline 0.25 has not passed when the worker frees at 0.2, but 0.2 + 0.1 > 0.25: dropped;
  // its batch is then empty and takes no worker: 5 runs.
  Recorder e;
  e.drop_after = {{2, 0.05}, {3, 0.5}, {4, 0.25}};
  ServerLoop<int> loop(BatchSpec{0, 1}, 1, e);
  loop.on_upload(1, 0, 0.0);
  loop.on_upload(2, 0, 0.01);
  loop.on_upload(3, 0, 0.02);
  EXPECT_EQ(e.take(), Log{"run 0 [1]"});
  loop.on_batch_done(0, 0.1);
  EXPECT_EQ(e.take(), (Log{"drop 2 at 0.100", "run 1 [3]"}));
  loop.on_upload(4, 0, 0.11);
  loop.on_upload(5, 0, 0.12);
  loop.on_batch_done(1, 0.2);
  EXPECT_EQ(e.take(), (Log{"drop 4 at 0.200", "run 2 [5]"}));
  EXPECT_EQ(loop.busy_workers(), 1);
}

TEST(ServerLoop, TheNewestWaitingBatchGoesToAFreeHelperThatIsExpectedSooner) {
  Recorder e;
  e.helper_s[5] = 0.05;
  ServerLoop<int> loop(BatchSpec{0, 1}, 1, e);  // no window: every request is its own batch
  loop.set_helpers({5}, 0);
  loop.on_upload(1, 0, 0);  // the worker is idle: the server takes it (expected end 0.1)
  EXPECT_EQ(e.take(), Log{"run 0 [1]"});
  // Waiting 1 > idle workers 0. Via the server: (0.1 - 0.01) + 0.1 = 0.19 s; the helper: 0.05 s.
  loop.on_upload(2, 0, 0.01);
  EXPECT_EQ(e.take(), Log{"forward 5 [2]"});
  loop.on_upload(3, 0, 0.02);  // the helper is busy: 3 waits for the worker
  EXPECT_EQ(e.take(), Log{});
  // Free again at 0.06: via the server (0.1 - 0.06) + 0.1 = 0.14 s > 0.05 s.
  loop.on_helper_done(5, 0.06);
  EXPECT_EQ(e.take(), Log{"forward 5 [3]"});
  EXPECT_EQ(loop.queued(), 0);
}

TEST(ServerLoop, ABatchStaysWhenTheHelperIsSlowerOrUnavailable) {
  Recorder e;
  e.helper_s[5] = 0.5;  // slower than the server's 0.19 s
  e.helper_s[6] = 0.01;
  e.available[6] = false;  // fast, but busy by its own report
  ServerLoop<int> loop(BatchSpec{0, 1}, 1, e);
  loop.set_helpers({5, 6}, 0);
  loop.on_upload(1, 0, 0);
  loop.on_upload(2, 0, 0.01);
  EXPECT_EQ(e.take(), Log{"run 0 [1]"});
  e.available[6] = true;
  loop.set_helpers({5, 6}, 0.02);  // a new decision: helper 5 is first and slower, so the rule stops there
  EXPECT_EQ(e.take(), Log{});
  loop.set_helpers({6}, 0.03);
  EXPECT_EQ(e.take(), Log{"forward 6 [2]"});
}

TEST(ServerLoop, WorkOfAnOriginThatWentAwayLeavesTheQueue) {
  Recorder e;
  ServerLoop<int> loop(BatchSpec{10, 8}, 1, e);
  loop.on_upload(1, 0, 0);
  loop.on_upload(2, 0, 0.001);
  loop.on_upload(3, 0, 0.002);
  EXPECT_EQ(loop.remove_if([](int x) { return x % 2 == 1; }), 2u);
  loop.on_timer(0.01);
  EXPECT_EQ(e.take(), Log{"run 0 [2]"});
}

TEST(ServerLoop, TheHelperTakesTheNewestWaitingBatchAndTheWorkerKeepsTheOldest) {
  Recorder e;
  e.helper_s[5] = 0.05;
  ServerLoop<int> loop(BatchSpec{0, 1}, 1, e);
  loop.on_upload(1, 0, 0);     // the worker takes it (expected end 0.1)
  loop.on_upload(2, 0, 0.01);  // no helper yet: [2] and [3] wait, oldest first
  loop.on_upload(3, 0, 0.015);
  EXPECT_EQ(e.take(), Log{"run 0 [1]"});
  // At 0.02, the newest [3] via the server: (0.1 - 0.02) + 0.1 ahead ([2]) + 0.1 own = 0.28 s > 0.05 s.
  loop.set_helpers({5}, 0.02);
  EXPECT_EQ(e.take(), Log{"forward 5 [3]"});
  loop.on_batch_done(0, 0.1);  // the worker takes the oldest
  EXPECT_EQ(e.take(), Log{"run 1 [2]"});
}

namespace {
// Items 10..19 come from a device of priority 5, the others from priority 0.
struct PriorityRecorder : Recorder {
  int priority(const int& item) const override { return item >= 10 && item < 20 ? 5 : 0; }
};
}  // namespace

TEST(ServerLoop, AFreeWorkerTakesTheHighestPriorityBatchThenTheOldest) {
  // One worker, batches of one (not windowed: each request sealed as it arrives). 1 runs; 2, 3, 11 and
  // 12 wait (sealed in that order). The worker then takes 11 (priority 5, older than 12), then 12, then
  // 2 and 3 in their order.
  PriorityRecorder e;
  ServerLoop<int> loop(BatchSpec{0, 1}, 1, e);
  for (int item : {1, 2, 3, 11, 12}) loop.on_upload(item, 0, 0);
  EXPECT_EQ(e.take(), Log{"run 0 [1]"});
  for (std::uint64_t token = 0; token < 4; ++token) loop.on_batch_done(token, 0.1 * static_cast<double>(token + 1));
  EXPECT_EQ(e.take(), (Log{"run 1 [11]", "run 2 [12]", "run 3 [2]", "run 4 [3]"}));
}

TEST(ServerLoop, ABatchTakesTheHighestPriorityOfItsRequests) {
  // Batches of two: [1,2] (priority 0) and [3,13] (one request of priority 5) wait behind [4,5]; the
  // mixed batch goes first.
  PriorityRecorder e;
  ServerLoop<int> loop(BatchSpec{50, 2}, 1, e);
  for (int item : {4, 5, 1, 2, 3, 13}) loop.on_upload(item, 0, 0.001);
  EXPECT_EQ(e.take(), Log{"run 0 [4,5]"});
  loop.on_batch_done(0, 0.2);
  EXPECT_EQ(e.take(), Log{"run 1 [3,13]"});
}
