// Edge-server batching (ACE-GNN Fig. 8): a batch closes when its window since the first request
// expires or when it reaches max_size; only requests with the same model and split batch together.
// Timing as in test_strategies.cpp: an offloaded input arrives 17.388 ms after it is created
// (5.1 ms latency + 12288 B at 1e6 B/s), the server runs [0,9) in 9 ms x (1 + 0.5 (b-1)) for a batch
// of b, and a result takes 5.26 ms to come back.
#include <gtest/gtest.h>

#include "sched/scheduler_factory.hpp"

#include <cmath>

#include "core/scheduler.hpp"
#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
const double kArrive = 0.0051 + kRawBytes / 1e6;   // 17.388 ms
const double kDown = 0.0051 + kResultBytes / 1e6;  // 5.26 ms
std::string three_offloaders() { return device("a", "offload") + device("b", "offload") + device("c", "offload"); }
}  // namespace

TEST(Batching, SimultaneousArrivalsWaitForTheWindowAndRunAsOneBatch) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(three_offloaders(), "{window_ms: 10, max_size: 5}", 0.01));
  ASSERT_EQ(r.requests.size(), 3u);  // closed loop, in_flight 1, only t=0 arrivals before 10 ms
  for (const auto& q : r.requests) {
    EXPECT_NEAR(q.t_queued, kArrive, kTol);
    EXPECT_NEAR(q.t_batch_start, kArrive + 0.010, kTol);  // window closes 10 ms after the first arrival
    EXPECT_EQ(q.batch_size, 3);
    EXPECT_NEAR(q.t_batch_end, kArrive + 0.010 + 0.018, kTol);  // 9 ms x (1 + 0.5 x 2)
    EXPECT_NEAR(q.t_result, kArrive + 0.010 + 0.018 + kDown, kTol);
  }
}

TEST(Batching, FullBatchLeavesAtOnceAndTheRestWaitsForWindowAndWorker) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(three_offloaders(), "{window_ms: 10, max_size: 2}", 0.01));
  ASSERT_EQ(r.requests.size(), 3u);
  int pairs = 0, singles = 0;
  for (const auto& q : r.requests) {
    if (q.batch_size == 2) {
      ++pairs;
      EXPECT_NEAR(q.t_batch_start, kArrive, kTol);         // full: no waiting
      EXPECT_NEAR(q.t_batch_end, kArrive + 0.0135, kTol);  // 9 ms x 1.5
    } else {
      ++singles;
      EXPECT_EQ(q.batch_size, 1);
      // Its window closes at arrival + 10 ms, but the only worker is busy until arrival + 13.5 ms.
      EXPECT_NEAR(q.t_batch_start, kArrive + 0.0135, kTol);
      EXPECT_NEAR(q.t_batch_end, kArrive + 0.0135 + 0.009, kTol);
    }
  }
  EXPECT_EQ(pairs, 2);
  EXPECT_EQ(singles, 1);
}

TEST(Batching, SecondWorkerTakesTheWindowedBatch) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(three_offloaders(), "{window_ms: 10, max_size: 2}", 0.01, 0, 2));
  // Two inputs fill a batch at arrival (the first worker); the third waits alone for its window's
  // end and the second worker takes it then.
  int singles = 0, pairs = 0;
  for (const auto& q : r.requests) {
    if (q.batch_size == 1) {
      ++singles;
      EXPECT_NEAR(q.t_batch_start, kArrive + 0.010, kTol);
    }
    pairs += q.batch_size == 2;
  }
  EXPECT_EQ(singles, 1);
  EXPECT_EQ(pairs, 2);
}

TEST(Batching, DifferentSplitsNeverShareABatch) {
  SimSetup s;
  write_standard_luts(s);
  // a offloads (arrives 17.388 ms); b runs pp(6): 60 ms on the device + 5.1 ms + 8192 B -> 73.292 ms,
  // inside a's 100 ms window but with another split: two batches of one.
  RunResults r = s.run(scenario(device("a", "offload") + device("b", "pp(6)"), "{window_ms: 100, max_size: 5}", 0.01));
  ASSERT_EQ(r.requests.size(), 2u);
  for (const auto& q : r.requests) EXPECT_EQ(q.batch_size, 1);
  EXPECT_NEAR(r.requests[0].t_batch_start, kArrive + 0.100, kTol);
  EXPECT_NEAR(r.requests[1].t_queued, 0.060 + 0.0051 + kPooledBytes / 1e6, kTol);
  EXPECT_NEAR(r.requests[1].t_batch_start, r.requests[1].t_queued + 0.100, kTol);
}

namespace {
// Device a sends three inputs at 1.00 s, b one at 1.02 s, both offloading to one worker taking batches of
// one; the server runs a request in 9 x 5 ms = 45 ms. a's first arrives at about 1.017 s and runs to about
// 1.062 s; by then a's second (arrived by about 1.035 s) and b's (about 1.037 s) both wait.
RunResults priority_run(int priority_b) {
  SimSetup s;
  s.write_lut("testdev", 0.010);
  s.write_lut("testsrv", 0.005);
  s.write_file("a.txt", "1.0\n1.0\n1.0\n");
  s.write_file("b.txt", "1.02\n");
  return s.run(scenario(device("a", "offload", "{arrival: trace, file: LUTDIR/a.txt}") +
                            device("b", "offload", "{arrival: trace, file: LUTDIR/b.txt, priority: " + std::to_string(priority_b) + "}"),
                        "{window_ms: 0, max_size: 1}", 2, 0));
}
double batch_start(const RunResults& r, int device, int nth) {
  int seen = 0;
  for (const auto& q : r.requests)
    if (q.device == device && seen++ == nth) return q.t_batch_start;
  return NAN;
}
}  // namespace

TEST(Batching, AHigherPriorityDeviceIsServedBeforeOlderWaitingRequests) {
  // b has priority 1: when the worker frees, it takes b's request before a's older second one.
  const RunResults r = priority_run(1);
  EXPECT_LT(batch_start(r, 1, 0), batch_start(r, 0, 1));
  EXPECT_NEAR(batch_start(r, 1, 0), r.requests[0].t_batch_end, kTol);  // right when a's first ended
}

TEST(Batching, EqualPrioritiesKeepTheOrderBatchesWereSealed) {
  const RunResults r = priority_run(0);
  EXPECT_LT(batch_start(r, 0, 1), batch_start(r, 1, 0));  // a's second arrived first
}

// ---- Batching as a decision ------------------------------------------------------

namespace {
// A scheduler from outside sched/ (the plugin registry) that keeps every device offloading and sets
// the server's batching by the decision's time: 200 ms / 8 before 1 s, 150 ms / 8 before 2 s, then
// 0 ms / 1 (no batching).
class BatchingByTime : public Scheduler {
 public:
  std::string name() const override { return "batching_by_time"; }
  Scheme decide(const SystemState& state) override {
    Scheme s;
    for (const auto& d : state.devices) s.strategies[d.id] = Strategy::offload();
    s.batching["srv"] = state.time_s < 1 ? BatchSpec{200, 8} : state.time_s < 2 ? BatchSpec{150, 8} : BatchSpec{0, 1};
    return s;
  }
};
}  // namespace

TEST(Batching, ANewWindowAppliesToTheOpenBatchAndLaterOnesAndNoWindowEndsBatching) {
  register_scheduler({{"batching_by_time", "test", "", {}, {}},
                      [](const Scenario&, const std::map<std::string, int>&) { return std::unique_ptr<Scheduler>(new BatchingByTime); }});
  SimSetup s;
  write_standard_luts(s);
  // Three closed-loop offloaders (in_flight 1): a cycle is 17.388 ms up + the window + 18 ms for the
  // batch of 3 (9 ms x 2) + 5.26 ms down = 240.648 ms under 200 ms. Batches open at 17.388 + k x
  // 240.648 ms: the fifth (k = 4) at 979.980 ms, still open at the decision of t = 1 s that sets
  // 150 ms: it is sealed at 979.980 + 150 = 1129.980 ms (not at 1179.980 ms), and the next one opens
  // at 1129.980 + 18 + 5.26 + 17.388 = 1170.628 ms and waits 150 ms. From t = 2 s, 0 ms / 1: every
  // batch is one request.
  RunResults r = s.run(scenario(three_offloaders(), "{window_ms: 200, max_size: 8}", 3, 0, 1, "scheduler: {name: batching_by_time, period_s: 1}\n"));
  ASSERT_EQ(r.decisions.size(), 3u);
  EXPECT_EQ(r.decisions[0].scheme.find("batching=[srv:200ms/8]"), r.decisions[0].scheme.find("batching="));
  EXPECT_NE(r.decisions[1].scheme.find("batching=[srv:150ms/8]"), std::string::npos) << r.decisions[1].scheme;
  int sealed_early = 0, next_at_150 = 0, after_two = 0;
  for (const auto& q : r.requests) {
    ASSERT_TRUE(q.done()) << q.id;
    if (std::fabs(q.t_queued - 0.979980) < 1e-6) {
      EXPECT_NEAR(q.t_batch_start, 1.129980, kTol);
      EXPECT_EQ(q.batch_size, 3);
      ++sealed_early;
    }
    if (std::fabs(q.t_queued - 1.170628) < 1e-6) {
      EXPECT_NEAR(q.t_batch_start, 1.320628, kTol);
      ++next_at_150;
    }
    if (q.t_queued > 2.0) {
      EXPECT_EQ(q.batch_size, 1) << q.id;
      EXPECT_NEAR(q.t_batch_start, q.t_queued, 0.03) << q.id;  // no window: at most two others' 9 ms ahead
      ++after_two;
    }
  }
  EXPECT_EQ(sealed_early, 3);
  EXPECT_EQ(next_at_150, 3);
  EXPECT_GT(after_two, 30);
}

TEST(Batching, SparoasDynamicBatchingCapsEachGroupsBatchByTheRealTimeBound) {
  SimSetup s;
  write_standard_luts(s);
  // Five offloaders' inputs arrive together at 17.388 ms; window 10 ms, max 5. With SparOA's policy
  // and a 25 ms real-time bound (core/dynamic_batching.hpp, worked in tests/unit/test_policies.cpp's
  // style): from B0 = 5 the step stays at 5, whose batch takes 9 x 3 = 27 ms > 25: halved to 2.5
  // (upper 4); the step from 2.5 reaches 4 (22.5 ms, within the bound); from 4 it stays: B* = 4. So four
  // run at once as one batch (22.5 ms) and the fifth waits its window, then for the worker.
  std::string five;
  for (const char* id : {"a", "b", "c", "d", "e"}) five += device(id, "offload");
  // (Without the policy the five run as one batch of 5: SimultaneousArrivalsWaitForTheWindow... above.
  // One SimGrid engine per test process: one run per test.)
  RunResults r = s.run(scenario(five, "{window_ms: 10, max_size: 5, policy: sparoa, real_time_ms: 25}", 0.01));
  ASSERT_EQ(r.requests.size(), 5u);
  int four = 0, one = 0;
  for (const auto& q : r.requests) {
    if (q.batch_size == 4) {
      EXPECT_NEAR(q.t_batch_start, kArrive, kTol);
      EXPECT_NEAR(q.t_batch_end, kArrive + 0.0225, kTol);
      ++four;
    } else {
      EXPECT_EQ(q.batch_size, 1);
      EXPECT_NEAR(q.t_batch_start, kArrive + 0.0225, kTol);  // sealed at 10 ms, the worker frees at 22.5 ms
      ++one;
    }
  }
  EXPECT_EQ(four, 4);
  EXPECT_EQ(one, 1);
}
