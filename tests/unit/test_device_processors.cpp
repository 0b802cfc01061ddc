// Devices with several processors: the placement grammar (core/placement.hpp), and the
// device loop (core/device_loop.hpp) running a request's segments on its processors, pipelining
// across them, splitting a stage between two, and accounting memory. Expected sequences and byte
// counts are worked out by hand from the rules in the headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/device_loop.hpp"
#include "core/plan_memory.hpp"
#include "core/strategy.hpp"
#include "tests/unit/device_loop_recorder.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

// ---- the grammar ------------------------------------------------------------------------------------

TEST(Placement, ParsesAndPrintsEveryForm) {
  EXPECT_EQ(parse_strategy("local[gpu]").to_string(), "local[gpu]");
  EXPECT_EQ(parse_strategy("pp(3)[cpu:0-1,gpu:1-3]").to_string(), "pp(3)[cpu:0-1,gpu:1-3]");
  EXPECT_EQ(parse_strategy("pp(3)[cpu:0-1,gpu*0.75+cpu:1-3]@int8").to_string(), "pp(3)[cpu:0-1,gpu*0.75+cpu:1-3]@int8");
  const Strategy s = parse_strategy("local[cpu:0-1,gpu*0.25+cpu:1-9]");
  ASSERT_EQ(s.placement.parts.size(), 2u);
  EXPECT_EQ(s.placement.parts[1].processor, "gpu");
  EXPECT_EQ(s.placement.parts[1].with, "cpu");
  EXPECT_DOUBLE_EQ(s.placement.parts[1].share, 0.25);
  EXPECT_EQ(s.placement.parts[1].begin, 1);
  EXPECT_EQ(s.placement.parts[1].end, 9);
  EXPECT_EQ(s.placement.processors(), (std::vector<std::string>{"cpu", "gpu"}));
  // A placement is part of the strategy's identity.
  EXPECT_NE(parse_strategy("local[gpu]"), Strategy::local());
  EXPECT_EQ(parse_strategy("local[gpu]"), parse_strategy("local[gpu]"));
  // The one-part form covers whatever the device runs.
  const auto parts = parse_strategy("local[gpu]").placement.resolved(9);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].begin, 0);
  EXPECT_EQ(parts[0].end, 9);
}

TEST(Placement, RefusesWhatCannotRunWithTheReason) {
  const auto refused = [](const std::string& text, const std::string& why) {
    try {
      parse_strategy(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
    }
  };
  refused("offload[gpu]", "only local, pp(K) and data_parallel");  // offloading runs nothing on the device
  // data_parallel places the inputs it keeps (whole on the device).
  EXPECT_EQ(parse_strategy("data_parallel[cpu:0-2,gpu:2-9]").to_string(), "data_parallel[cpu:0-2,gpu:2-9]");
  refused("pp(0)[gpu]", "no stage on the device");
  refused("local[]", "empty placement");
  refused("local[cpu,gpu]", "each names its stages");
  refused("local[cpu:0-1,gpu:2-3]", "not where part 1 ends");
  refused("local[cpu:1-2,gpu:2-3]", "must start at stage 0");
  refused("local[cpu:2-2]", "is empty");
  refused("local[gpu+cpu:0-2]", "share");
  refused("local[gpu*1.5+cpu:0-2]", "strictly between 0 and 1");
  refused("local[gpu*0.5+gpu:0-2]", "and itself");
  refused("local[g pu]", "not a processor name");
  refused("pp(2)[cpu:0-1,gpu:1-3]", "the device runs [0,2)");
  refused("pp(3)[cpu:0-1]", "the device runs [0,3)");
}

// ---- the device loop on two processors --------------------------------------------------------------

// Processor 0 "cpu", processor 1 "gpu"; one memory of `capacity` bytes (0: no limit), shared.
std::shared_ptr<const DeviceHardware> board(double capacity = 0) {
  return std::make_shared<const DeviceHardware>(coinfer::test::two_processor_board("cpu", "gpu", capacity));
}

// The shared recorder (tests/unit/device_loop_recorder.hpp), writing down segments, with memory
// figures per stage: every stage has weights of 100 kB and a working set of 200 kB (stage k: 200 kB
// + 10 kB x k), and each tensor crossing split k is 50 kB.
struct SegmentRecorder : coinfer::test::Recorder {
  void start_compute(DeviceRequest& r) override {
    const DeviceSegment& s = r.plan->segments[static_cast<size_t>(r.segment)];
    log.push_back("compute " + std::to_string(r.rec.id) + " [" + std::to_string(s.begin) + "," + std::to_string(s.end) + ") on " +
                  std::to_string(s.proc) + (s.with >= 0 ? "+" + std::to_string(s.with) : ""));
  }
  double tensor_bytes(const DeviceRequest&, int) override { return 50e3; }
  double weight_bytes(const DeviceRequest&, int b, int e) override { return 100e3 * (e - b); }
  double working_bytes(const DeviceRequest&, int, int e) override { return 200e3 + 10e3 * (e - 1); }
};

using Log = std::vector<std::string>;

DeviceSpec device(const std::string& strategy, int in_flight, double capacity = 0) {
  DeviceSpec d;
  d.id = "d0";
  d.strategy = parse_strategy(strategy);
  d.workload.in_flight = in_flight;
  d.hardware = board(capacity);
  return d;
}

DataParallelCosts costs() { return DataParallelCosts{0.9, 0.009, 12288, 160, 0.030}; }

// An open-loop device whose inputs arrive at `times` (a trace).
DeviceSpec traced(const std::string& strategy, std::vector<double> times, double capacity = 0) {
  DeviceSpec d = device(strategy, 0, capacity);
  d.workload.arrival = WorkloadSpec::Arrival::trace;
  d.workload.arrival_times_s = std::move(times);
  return d;
}

TEST(DeviceProcessors, SegmentsRunInOrderAndTheDevicePipelinesAcrossItsProcessors) {
  // local on 3 stages: [0,1) on the CPU, [1,3) on the GPU, two inputs in flight. The first input
  // runs on the CPU; when it moves to the GPU the CPU is free, so the second input starts there
  // (the closed loop admits when the first segment's processor is free).
  const DeviceSpec d = device("local[cpu:0-1,gpu:1-3]", 2);
  SegmentRecorder e;
  DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,1) on 0"}));
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), (Log{"new 1@0.1", "compute 1 [0,1) on 0", "compute 0 [1,3) on 1"}));
  EXPECT_TRUE(loop.processor_busy());
  loop.on_computed(1, 0.2);  // input 1 is done on the CPU, but the GPU still runs input 0: it waits
  loop.wake(0.2);
  EXPECT_EQ(e.take(), Log{});  // 2 unfinished: no new input; nothing free for input 1 yet
  EXPECT_EQ(loop.queued(), 1);
  loop.on_computed(0, 0.3);
  loop.wake(0.3);
  EXPECT_EQ(e.take(), (Log{"finished 0 ok", "new 2@0.3", "compute 2 [0,1) on 0", "compute 1 [1,3) on 1"}));
  EXPECT_DOUBLE_EQ(e.done[0].t_device_start, 0);  // the first segment's start
  EXPECT_DOUBLE_EQ(e.done[0].t_device_end, 0.3);  // the last segment's end
  EXPECT_DOUBLE_EQ(e.done[0].t_result, 0.3);
  EXPECT_EQ(e.done[0].strategy, "local[cpu:0-1,gpu:1-3]");
}

TEST(DeviceProcessors, ASplitStageStartsWhenItHeadsBothProcessorsQueues) {
  // pp(2) of 3 stages: [0,1) split 75/25 between GPU and CPU, [1,2) on the GPU, then the upload.
  // Inputs arrive at 0 and 0.05 s (open loop).
  const DeviceSpec d = traced("pp(2)[gpu*0.75+cpu:0-1,gpu:1-2]", {0, 0.05});
  SegmentRecorder e;
  DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,1) on 1+0"}));  // both processors busy with it
  loop.wake(0.05);
  EXPECT_EQ(e.take(), Log{"new 1@0.05"});  // waits in both queues
  EXPECT_EQ(loop.queued(), 1);             // counted once
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  // Input 0 now waits for the GPU behind input 1, which heads both queues: input 1 goes first (FIFO).
  EXPECT_EQ(e.take(), Log{"compute 1 [0,1) on 1+0"});
  loop.on_computed(1, 0.2);
  loop.wake(0.2);
  EXPECT_EQ(e.take(), Log{"compute 0 [1,2) on 1"});
  loop.on_computed(0, 0.3);
  loop.wake(0.3);
  EXPECT_EQ(e.take(), (Log{"compute 1 [1,2) on 1", "upload 0 @2"}));
}

TEST(DeviceProcessors, ASplitStageWaitsForItsTurnOnBothProcessors) {
  // local[gpu:0-1,gpu*0.5+cpu:1-3]; inputs at 0 and 0.01 s. When input 0 reaches its split segment,
  // the CPU is free and input 0 heads the CPU's queue, but the GPU's queue holds input 1's first
  // segment ahead of it: input 1 goes first (FIFO on every processor), input 0 waits for both.
  const DeviceSpec d = traced("local[gpu:0-1,gpu*0.5+cpu:1-3]", {0, 0.01});
  SegmentRecorder e;
  DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  loop.wake(0.01);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,1) on 1", "new 1@0.01"}));
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), Log{"compute 1 [0,1) on 1"});
  loop.on_computed(1, 0.2);
  loop.wake(0.2);
  EXPECT_EQ(e.take(), Log{"compute 0 [1,3) on 1+0"});
}

TEST(DeviceProcessors, AHelperBatchRunsOnTheDefaultProcessorFirst) {
  const DeviceSpec d = device("local[gpu:0-1,cpu:1-3]", 1);
  SegmentRecorder e;
  DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
  loop.on_help_arrived(7);
  loop.on_join(0);
  loop.wake(0);
  // The new input's first segment is on the GPU (processor 1): it starts; the CPU takes the help.
  EXPECT_EQ(e.take(), (Log{"new 0@0", "help 7", "compute 0 [0,1) on 1"}));
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), Log{});  // its CPU segment waits for the forwarded batch
  loop.on_help_done();
  loop.wake(0.15);
  EXPECT_EQ(e.take(), Log{"compute 0 [1,3) on 0"});
}

TEST(DeviceProcessors, APlacementOnAProcessorTheDeviceLacksFailsItsRequestsWithTheReason) {
  DeviceSpec d = device("local", 1);
  SegmentRecorder e;
  DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
  loop.on_join(0);
  loop.on_strategy(parse_strategy("local[npu]"));  // e.g. from an external scheduler
  loop.wake(0);
  const Log log = e.take();
  ASSERT_EQ(log.size(), 2u);  // one request, failed at once; the next waits for another event
  EXPECT_EQ(log[0], "new 0@0");
  EXPECT_NE(log[1].find("finished 0 failed: strategy local[npu]: device d0 has no processor 'npu' (it has: cpu, gpu)"), std::string::npos) << log[1];
}

TEST(DeviceProcessors, OutOfMemoryWhenTheNeedExceedsTheCapacity) {
  // local[cpu:0-1,gpu:1-3], 3 stages, memory 800 kB. Request 0 at its first segment: weights of its
  // plan 100 kB (stage 0 on the CPU) + 200 kB (stages 1-2 on the GPU) = 300 kB; working set of
  // [0,1) = 200 kB; held tensors: none (its own input became the segment's) -> 500 kB <= 800 kB.
  // At its second segment ([1,3), working set 200 + 10 x 2 = 220 kB), request 1 (created when the
  // CPU freed) runs [0,1) on the CPU: 300 + 200 (request 1's CPU segment) + 220 = 720 kB: fits.
  {
    const DeviceSpec d = device("local[cpu:0-1,gpu:1-3]", 2, 800e3);
    SegmentRecorder e;
    DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
    loop.on_join(0);
    loop.wake(0);
    loop.on_computed(0, 0.1);
    loop.wake(0.1);
    EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,1) on 0", "new 1@0.1", "compute 1 [0,1) on 0", "compute 0 [1,3) on 1"}));
    EXPECT_DOUBLE_EQ(loop.pool_peak_bytes()[0], 720e3);
    EXPECT_DOUBLE_EQ(loop.processor_peak_bytes()[0], 300e3);  // 100 kB of weights + 200 kB working
    EXPECT_DOUBLE_EQ(loop.processor_peak_bytes()[1], 420e3);  // 200 kB of weights + 220 kB working
  }
  // With 700 kB the GPU segment of request 0 does not fit (720 kB): it fails there, by name.
  {
    const DeviceSpec d = device("local[cpu:0-1,gpu:1-3]", 2, 700e3);
    SegmentRecorder e;
    DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
    loop.on_join(0);
    loop.wake(0);
    loop.on_computed(0, 0.1);
    loop.wake(0.1);
    // It still runs its segment (the allocation fails somewhere inside it) and fails at its end.
    EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,1) on 0", "new 1@0.1", "compute 1 [0,1) on 0", "compute 0 [1,3) on 1"}));
    loop.on_computed(0, 0.2);
    loop.wake(0.2);
    const Log log = e.take();
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log[0], "finished 0 failed: out of memory on d0:gpu (needs 0.72 MB, has 0.70 MB)");
    EXPECT_DOUBLE_EQ(e.done[0].t_device_end, 0.2);
  }
}

// ---- what a plan keeps in memory (core/plan_memory.hpp) ----------------------------------------------

// Stage k's weights are 100 kB x (k + 1) (100, 200, 300 kB), its working set 1 MB + 10 kB x k.
double stage_weights(int b, int e) {
  double w = 0;
  for (int k = b; k < e; ++k) w += 100e3 * (k + 1);
  return w;
}
double stage_working(int b, int e) {
  double w = 0;
  for (int k = b; k < e; ++k) w = std::max(w, 1e6 + 10e3 * k);
  return w;
}

TEST(PlanMemory, ASplitStagesWeightsAreWholeOnBothProcessorsByRowsAndByShareByChannels) {
  // local[cpu:0-1,gpu*0.75+cpu:1-3] on (cpu, gpu): stage 0 on the CPU (100 kB); stages 1-2 split, the
  // GPU taking 0.75 (500 kB of weights).
  const DeviceHardware hw = coinfer::test::two_processor_board("cpu", "gpu");
  const DevicePlan plan = make_device_plan(parse_strategy("local[cpu:0-1,gpu*0.75+cpu:1-3]"), 3, hw, "d0");
  ASSERT_EQ(plan.segments.size(), 2u);
  std::vector<double> rows(2, 0.0), channels(2, 0.0);
  add_plan_weight_bytes(plan, stage_weights, SplitStorage::rows, rows);
  add_plan_weight_bytes(plan, stage_weights, SplitStorage::channels, channels);
  // Rows: the CPU 100 + 500, the GPU 500 (each holds the split stages' weights whole): 1.1 MB in all.
  EXPECT_DOUBLE_EQ(rows[0], 600e3);
  EXPECT_DOUBLE_EQ(rows[1], 500e3);
  // Channels: the CPU 100 + 0.25 x 500 = 225, the GPU 0.75 x 500 = 375: the model's 600 kB, once.
  EXPECT_DOUBLE_EQ(channels[0], 225e3);
  EXPECT_DOUBLE_EQ(channels[1], 375e3);
}

TEST(PlanMemory, OneInferenceHoldsASplitStagesWorkingSetOnEachProcessorOnlyWhereTheBoardCopies) {
  // The same plan, one pool. Segment [0,1) on the CPU: the weights + 1 MB working. Segment [1,3) split:
  // its working set is stage 2's 1.02 MB; with shared tensors 0.75 / 0.25 of it (1.02 MB in all), on a
  // board that copies 1.02 MB on each processor (2.04 MB).
  const DevicePlan plan =
      make_device_plan(parse_strategy("local[cpu:0-1,gpu*0.75+cpu:1-3]"), 3, coinfer::test::two_processor_board("cpu", "gpu"), "d0");
  DeviceHardware shared = coinfer::test::two_processor_board("cpu", "gpu");
  DeviceHardware copying = shared;
  copying.zero_copy = false;
  // Shared, rows: max(1.1 MB + 1 MB, 1.1 MB + 1.02 MB) = 2.12 MB; channels: 0.6 MB + 1.02 MB = 1.62 MB.
  EXPECT_DOUBLE_EQ(one_inference_pool_peak_bytes(plan, shared, stage_weights, stage_working, SplitStorage::rows).at(0), 2.12e6);
  EXPECT_DOUBLE_EQ(one_inference_pool_peak_bytes(plan, shared, stage_weights, stage_working, SplitStorage::channels).at(0), 1.62e6);
  // Copying: rows 1.1 + 2.04 = 3.14 MB; channels 0.6 + 2.04 = 2.64 MB.
  EXPECT_DOUBLE_EQ(one_inference_pool_peak_bytes(plan, copying, stage_weights, stage_working, SplitStorage::rows).at(0), 3.14e6);
  EXPECT_DOUBLE_EQ(one_inference_pool_peak_bytes(plan, copying, stage_weights, stage_working, SplitStorage::channels).at(0), 2.64e6);
  // A plan without a split stage holds the same either way: all on the GPU, 600 kB + 1.02 MB.
  const DevicePlan whole = make_device_plan(parse_strategy("local[gpu]"), 3, shared, "d0");
  EXPECT_DOUBLE_EQ(one_inference_pool_peak_bytes(whole, copying, stage_weights, stage_working, SplitStorage::channels).at(0), 1.62e6);
  EXPECT_DOUBLE_EQ(one_inference_pool_peak_bytes(whole, shared, stage_weights, stage_working, SplitStorage::rows).at(0), 1.62e6);
}

TEST(DeviceProcessors, OnABoardThatCopiesASplitSegmentsWorkingSetIsOnBothProcessors) {
  // local[gpu*0.5+cpu] on 3 stages (one split segment), one input: weights 300 kB on each processor (the
  // runtime splits rows: whole on both); working set of [0,3) 220 kB. Shared tensors: 110 kB on each,
  // 820 kB in all; on a board that copies, 220 kB on each, 1,040 kB in all.
  for (const bool copies : {false, true}) {
    DeviceSpec d = device("local[gpu*0.5+cpu]", 1);
    DeviceHardware hw = coinfer::test::two_processor_board("cpu", "gpu", 10e6);
    hw.zero_copy = !copies;
    d.hardware = std::make_shared<const DeviceHardware>(hw);
    SegmentRecorder e;
    DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
    loop.on_join(0);
    loop.wake(0);
    EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3) on 1+0"}));
    EXPECT_DOUBLE_EQ(loop.pool_peak_bytes()[0], copies ? 1040e3 : 820e3) << (copies ? "copies" : "shared");
    EXPECT_DOUBLE_EQ(loop.processor_peak_bytes()[1], copies ? 520e3 : 410e3);
  }
}

TEST(DeviceProcessors, WaitingInputsCountInMainMemory) {
  // local on the default processor, 3 stages, memory 560 kB; inputs arrive at 0, 0.01 and 0.02 s.
  // Request 0 needs its weights 300 kB + working set 220 kB = 520 kB and runs. Requests 1 and 2 wait
  // holding 50 kB each. When request 0 ends, request 1 starts: 520 kB + request 2's input 50 kB =
  // 570 kB > 560 kB: out of memory (it runs its time, then fails). Then request 2 starts with nothing
  // held and request 1's allocation not counted: 520 kB, it fits.
  const DeviceSpec d = traced("local", {0, 0.01, 0.02}, 560e3);
  SegmentRecorder e;
  DeviceLoop loop(d, 0, 0, 1, 3, 100, costs(), e);
  loop.on_join(0);
  loop.wake(0);
  loop.wake(0.01);
  loop.wake(0.02);
  EXPECT_EQ(e.take(), (Log{"new 0@0", "compute 0 [0,3) on 0", "new 1@0.01", "new 2@0.02"}));
  loop.on_computed(0, 0.1);
  loop.wake(0.1);
  EXPECT_EQ(e.take(), (Log{"finished 0 ok", "compute 1 [0,3) on 0"}));
  loop.on_computed(1, 0.2);
  loop.wake(0.2);
  EXPECT_EQ(e.take(), (Log{"finished 1 failed: out of memory on d0:cpu (needs 0.57 MB, has 0.56 MB)", "compute 2 [0,3) on 0"}));
  EXPECT_DOUBLE_EQ(loop.pool_peak_bytes()[0], 570e3);
  EXPECT_DOUBLE_EQ(e.done[1].t_device_start, 0.1);
  loop.on_computed(2, 0.3);
  loop.wake(0.3);
  EXPECT_EQ(e.take(), Log{"finished 2 ok"});
}

}  // namespace
