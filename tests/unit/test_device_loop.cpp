// The device loop (core/device_loop.hpp) driven by scripted events, engine-free: every expected
// action sequence below is worked out by hand from the rules in the header (closed-loop admission,
// routing, one thing at a time per stage, helper work first, completion, the in-flight limit).
#include <gtest/gtest.h>

#include <deque>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/device_loop.hpp"
#include "tests/unit/device_loop_recorder.hpp"

using namespace coinfer;
using coinfer::test::Recorder;

namespace {

constexpr double kBw = 125000;  // 1 Mbit/s

using Log = std::vector<std::string>;

DeviceSpec device(Strategy s, int in_flight = 0) {
  DeviceSpec d;
  d.id = "d0";
  d.strategy = s;
  d.workload.in_flight = in_flight;
  return d;
}

// Server path 0.138584 s at 1 Mbit/s (test_policies.cpp) against 0.9 s locally: the server first.
DataParallelCosts costs() { return DataParallelCosts{0.9, 0.009, 12288, 160, 0.030}; }

}  // namespace

TEST(DeviceLoop, PipelinedClosedLoopComputesTheNextInputWhileTheLastIsUploaded) {
  // pp(3) of 9 stages, default in-flight 2: a new input may start whenever the processor is idle and
  // fewer than 2 are unfinished.
  const DeviceSpec d = device(Strategy::pp(3));
  Recorder e;
  DeviceLoop loop(d, 0, 4, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3)"}));  // processor now busy: no second input
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  // 0 goes up; the processor is idle and 1 < 2 unfinished: input 1 starts.
  EXPECT_EQ(e.take(), (Log{"new 1@0.1", "compute 1 [0,3)", "upload 0 @3"}));
  loop.on_uploaded(0, 0.2);
  loop.wake(0.2);
  EXPECT_EQ(e.take(), Log{});  // processor still busy
  loop.on_computed(1, 0.3);
  loop.wake(0.3);
  EXPECT_EQ(e.take(), Log{"upload 1 @3"});  // 2 unfinished = the limit: no new input
  loop.on_result(0, 0.5);
  loop.wake(0.5);
  EXPECT_EQ(e.take(), (Log{"finished 0 ok", "new 2@0.5", "compute 2 [0,3)"}));
  EXPECT_EQ(e.done[0].server, 4);  // it left the device: the server is recorded
  EXPECT_EQ(e.done[0].strategy, "pp(3)");
  EXPECT_DOUBLE_EQ(e.done[0].t_device_start, 0);
  EXPECT_DOUBLE_EQ(e.done[0].t_device_end, 0.1);
  EXPECT_DOUBLE_EQ(e.done[0].t_uplink_end, 0.2);
  EXPECT_DOUBLE_EQ(loop.latency_sum_s(), 0.5);
  EXPECT_EQ(loop.completed(), 1);
  EXPECT_EQ(loop.unfinished(), 2);
}

TEST(DeviceLoop, LocalRequestsFinishWhenComputedAndNameNoServer) {
  const DeviceSpec d = device(Strategy::local());
  Recorder e;
  DeviceLoop loop(d, 0, 4, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  loop.on_computed(0, 0.25);
  loop.wake(0.25);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,9)", "finished 0 ok", "new 1@0.25", "compute 1 [0,9)"}));
  EXPECT_EQ(e.done[0].server, -1);
  EXPECT_DOUBLE_EQ(e.done[0].t_result, 0.25);
}

TEST(DeviceLoop, OffloadGoesStraightToTheUplinkAndAdmitsWhenTheUplinkIsFree) {
  // offload, default in-flight 1: the next input waits for the first one's result.
  const DeviceSpec d = device(Strategy::offload());
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "upload 0 @0"}));
  loop.on_uploaded(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), Log{});
  loop.on_result(0, 0.2);
  loop.wake(0.2);
  EXPECT_EQ(e.take(), (Log{"finished 0 ok", "new 1@0.2", "upload 1 @0"}));
}

TEST(DeviceLoop, DataParallelTakesTheCheaperFreeSideAndWaitsWhenBothAreBusy) {
  const DeviceSpec d = device(Strategy::data_parallel());
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  // Both free: the server path (0.14 s) beats the device (0.9 s); then only the device is free; then
  // no side is free and the closed loop stops admitting.
  EXPECT_EQ(e.take(), (Log{"new 0@0", "new 1@0", "compute 1 [0,9)", "upload 0 @0"}));
  loop.on_computed(1, 0.9);
  loop.wake(0.9);
  EXPECT_EQ(e.take(), (Log{"finished 1 ok", "new 2@0.9", "compute 2 [0,9)"}));
  // The server side fails (lost connection): it is free again and takes the next input.
  loop.on_uploaded(0, 1.0);
  loop.fail(0, 1.1, "connection to the server lost");
  loop.wake(1.1);
  EXPECT_EQ(e.take(), (Log{"finished 0 failed: connection to the server lost", "new 3@1.1", "upload 3 @0"}));
  EXPECT_EQ(loop.failed(), 1);
}

TEST(DeviceLoop, ForwardedWorkRunsBeforeTheDevicesOwnQueuedRequests) {
  const DeviceSpec d = device(Strategy::pp(3), 3);
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  loop.on_help_arrived(77);  // the processor computes request 0: the batch waits
  loop.wake(0.05);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3)"}));
  EXPECT_TRUE(loop.helper_work_waiting());
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  // Request 1 is created (the processor looks idle to the admission rule) but the batch goes first.
  EXPECT_EQ(e.take(), (Log{"new 1@0.1", "help 77", "upload 0 @3"}));
  EXPECT_TRUE(loop.helping());
  loop.on_help_done();
  loop.wake(0.4);
  EXPECT_EQ(e.take(), Log{"compute 1 [0,3)"});
}

TEST(DeviceLoop, AResultThatOvertakesItsUploadEventFreesTheUplinkAndTheLateEventIsIgnored) {
  const DeviceSpec d = device(Strategy::offload(), 2);
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "upload 0 @0"}));  // 1 waits: the uplink is busy
  loop.on_result(0, 0.3);                                // the real server answered before the sending thread reported
  loop.wake(0.3);
  EXPECT_EQ(e.take(), (Log{"finished 0 ok", "new 1@0.3", "upload 1 @0"}));
  loop.on_uploaded(0, 0.31);  // late: request 0 is gone, the uplink carries 1
  loop.wake(0.31);
  EXPECT_EQ(e.take(), Log{});
  EXPECT_EQ(loop.unfinished(), 1);
  loop.on_uploaded(1, 0.4);
  loop.wake(0.4);
  EXPECT_EQ(e.take(), (Log{"new 2@0.4", "upload 2 @0"}));
}

TEST(DeviceLoop, ANewStrategyAppliesToNewRequestsOnlyAndResetsTheDefaultInFlightLimit) {
  const DeviceSpec d = device(Strategy::pp(3));
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(loop.in_flight_limit(), 2);
  loop.on_strategy(Strategy::offload());
  EXPECT_EQ(loop.in_flight_limit(), 1);  // offload's default
  loop.on_computed(0, 0.1);              // request 0 keeps pp(3): it goes up from split 3
  loop.wake(0.1);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3)", "upload 0 @3"}));  // 1 unfinished = the new limit
  loop.on_uploaded(0, 0.2);
  loop.on_result(0, 0.3);
  loop.wake(0.3);
  EXPECT_EQ(e.take(), (Log{"finished 0 ok", "new 1@0.3", "upload 1 @0"}));
  EXPECT_EQ(e.reqs[1].rec.strategy, "offload");
}

TEST(DeviceLoop, OpenLoopArrivalsComeAtTheirTimesWithinTheWindowAndSkipThoseBeforeTheJoin) {
  DeviceSpec d = device(Strategy::local());
  d.workload.arrival = WorkloadSpec::Arrival::trace;
  d.workload.arrival_times_s = {0.5, 1.0, 1.0, 2.0, 3.0, 4.0};
  d.leave_at_s = 3.0;  // 3.0 and later: not created
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0.8);  // the engine could only take inputs from 0.8: 0.5 is skipped
  EXPECT_DOUBLE_EQ(loop.next_arrival_s(), 1.0);
  loop.wake(0.9);
  EXPECT_EQ(e.take(), Log{});
  loop.wake(1.0);  // both arrivals at 1.0; one processor: the second waits for it
  EXPECT_EQ(e.take(), (Log{"new 0@1", "new 1@1", "compute 0 [0,9)"}));
  EXPECT_EQ(loop.queued(), 1);
  loop.on_computed(0, 2.5);
  loop.wake(2.5);  // 2.0 was due meanwhile: created now, at the wake's time
  EXPECT_EQ(e.take(), (Log{"finished 0 ok", "new 2@2.5", "compute 1 [0,9)"}));
  EXPECT_EQ(loop.next_arrival_s(), std::numeric_limits<double>::infinity());  // 3.0: at the leave time
}

TEST(DeviceLoop, AbandonFailsEveryUnfinishedRequestAndLaterEventsAreIgnored) {
  const DeviceSpec d = device(Strategy::pp(3), 3);
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  e.take();
  // 0 on the uplink, 1 computing (a third waits for the processor to be idle).
  loop.abandon([](const DeviceRequest& r) { return "unfinished " + std::to_string(r.rec.id); });
  EXPECT_EQ(e.take(), (Log{"finished 0 failed: unfinished 0", "finished 1 failed: unfinished 1"}));
  loop.on_computed(1, 0.2);
  loop.on_result(0, 0.3);
  loop.wake(0.3);
  EXPECT_EQ(e.take(), Log{});
  EXPECT_EQ(loop.failed(), 2);
  EXPECT_EQ(loop.unfinished(), 0);
}

TEST(DeviceLoop, TheEnginesCapacityStopsCreation) {
  const DeviceSpec d = device(Strategy::local());
  Recorder e;
  e.capacity = 1;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,9)", "finished 0 ok"}));
}

TEST(DeviceLoop, AClosedLoopPausedWhileReconnectingCreatesNothing) {
  const DeviceSpec d = device(Strategy::offload());
  Recorder e;
  DeviceLoop loop(d, 0, 0, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.set_admission_paused(true);
  loop.wake(0);
  EXPECT_EQ(e.take(), Log{});
  loop.set_admission_paused(false);
  loop.wake(0.5);
  EXPECT_EQ(e.take(), (Log{"new 0@0.5", "upload 0 @0"}));
}

// Server failure (core/server_failures.hpp): the engine tells the loop its server is down; the rules
// below are the loop's.
TEST(DeviceLoop, WhileItsServerIsDownAnUploadFailsThereAndAClosedLoopThatNeedsTheServerWaits) {
  // pp(3), in-flight 2 (the default). Request 0 is computed at 0.1 while the server is down: it fails
  // at its upload with the reason; the closed loop creates nothing more (pp needs the server) until the
  // server is back at 0.5, when request 2 starts.
  const DeviceSpec d = device(Strategy::pp(3));
  Recorder e;
  DeviceLoop loop(d, 0, 4, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3)"}));
  loop.set_server_available(false, "server s failed at 0.05 s");
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), (Log{"finished 0 failed: server s failed at 0.05 s"}));
  loop.wake(0.3);
  EXPECT_EQ(e.take(), Log{});
  EXPECT_FALSE(loop.server_up());
  loop.set_server_available(true);
  loop.wake(0.5);
  EXPECT_EQ(e.take(), (Log{"new 1@0.5", "compute 1 [0,3)"}));
  EXPECT_EQ(loop.failed(), 1);
}

TEST(DeviceLoop, WhileItsServerIsDownALocalStrategyGoesOnAndDataParallelKeepsToTheDevice) {
  {
    const DeviceSpec d = device(Strategy::local());
    Recorder e;
    DeviceLoop loop(d, 0, 4, 1, 9, 100, costs(), e);
    loop.set_server_available(false, "down");
    loop.on_join(0);
    loop.wake(0);
    loop.on_computed(0, 0.9);
    loop.wake(0.9);
    EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,9)", "finished 0 ok", "new 1@0.9", "compute 1 [0,9)"}));
  }
  {
    // data_parallel with both sides free would send input 0 to the server (0.14 s vs 0.9 s, the test
    // above); with the server down it runs on the device, and no second input is created while the
    // device side is busy.
    const DeviceSpec d = device(Strategy::data_parallel());
    Recorder e;
    DeviceLoop loop(d, 0, 4, 1, 9, 100, costs(), e);
    loop.set_server_available(false, "down");
    loop.on_join(0);
    loop.wake(0);
    EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,9)"}));
    loop.on_computed(0, 0.9);
    loop.wake(0.9);
    EXPECT_EQ(e.take(), (Log{"finished 0 ok", "new 1@0.9", "compute 1 [0,9)"}));
    loop.set_server_available(true);  // back: the free server side takes the next input at once
    loop.wake(1.0);
    EXPECT_EQ(e.take(), (Log{"new 2@1", "upload 2 @0"}));
  }
}

TEST(DeviceLoop, AClosedLoopAdmitsAgainAtOnceWhenItsOnlyRequestIsDroppedBeforeItsUpload) {
  // pp(3), one in flight, a 50 ms deadline with drop_late: request 0 is computed at 0.1 s, 100 ms old,
  // and is dropped where its upload would start. Its place is free at once: request 1 starts at 0.1 s.
  // (Were the device to wait for another event instead, with nothing else in flight none would come: it
  // would create no request for the rest of the run.)
  DeviceSpec d = device(Strategy::pp(3), 1);
  d.workload.deadline_ms = 50;
  d.workload.drop_late = true;
  Recorder e;
  DeviceLoop loop(d, 0, 4, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3)"}));
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), (Log{"finished 0 failed: dropped before its upload: 100 ms old, past its deadline of 50 ms (workload.drop_late)", "new 1@0.1",
                           "compute 1 [0,3)"}));
}

TEST(DeviceLoop, ARequestFailedAtADownServerFreesItsPlaceForTheNewStrategyAtOnce) {
  // pp(3), one in flight; the server fails while request 0 computes and the scheduler switches the
  // device to local. At 0.1 s request 0 reaches its upload and fails there; the local request 1
  // starts at once (not at the next event, which may be the server's recovery).
  const DeviceSpec d = device(Strategy::pp(3), 1);
  Recorder e;
  DeviceLoop loop(d, 0, 4, 1, 9, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  loop.set_server_available(false, "server s failed at 0.05 s");
  loop.on_strategy(Strategy::local());
  loop.wake(0.06);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3)"}));
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), (Log{"finished 0 failed: server s failed at 0.05 s", "new 1@0.1", "compute 1 [0,9)"}));
}
