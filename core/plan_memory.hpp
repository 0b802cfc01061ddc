#pragma once
// What a device plan keeps in memory: the weights each processor holds and what a running segment's
// working set puts on its processors. Written once for the device loop's accounting
// (core/device_loop.cpp: out of memory, the peaks in summary.json) and for pricing a placement alone
// on its board (`coinfer train sparoa --json`'s memory_mb: SparOA Fig. 12). Bytes per sample; pure
// functions, nothing blocks or allocates beyond the vectors returned.
#include <functional>
#include <vector>

#include "core/device_hardware.hpp"
#include "core/device_plan.hpp"

namespace coinfer {

// How a stage split between two processors is divided, which decides the weights each holds:
// rows: each computes its share of the output rows with all of the stage's weights, so both hold them
//   whole (coinfer's runtime: a split stage's share is of its output rows, core/device_plan.hpp; CoDL's
//   partition along the height);
// channels: each computes its share of the output channels (features, heads) and holds only their
//   weights (SparOA's sharded storage, its Sec. 6.8.2: "CPU stores sparse attention heads while GPU
//   stores dense weights").
enum class SplitStorage { rows, channels };

// Stages [b, e)'s bytes of weights, and the working set of running [b, e) (the largest stage's live
// inputs, output and workspace), as a caller knows them (a model spec, the simulator's prefix sums).
using StageBytes = std::function<double(int b, int e)>;

// Adds to per_processor[i] (sized hw.size()) the weights `plan` keeps on processor i: a segment's
// stages on its processor; a split segment's on both processors whole (rows) or by share (channels).
void add_plan_weight_bytes(const DevicePlan& plan, const StageBytes& weight_bytes, SplitStorage storage, std::vector<double>& per_processor);

// What a running segment's working set of `work` bytes puts on its processor and on its second one:
// all on its processor when not split; split on a board whose processors share their tensors
// (DeviceHardware::zero_copy): by share, one copy of each tensor; split on a board that copies: the whole
// working set on each, as each holds its own copy of the stage's input and, after the exchange that
// segment_seconds prices, of its output.
struct SegmentWorkingBytes {
  double on_proc = 0, on_with = 0;
};
SegmentWorkingBytes segment_working_bytes(const DeviceSegment& seg, double work, const DeviceHardware& hw);

// One inference alone on the board: per memory pool (hw.pool_capacity_bytes' order) the most bytes it
// holds at once, over its segments: the plan's weights plus the running segment's working set (the
// device loop's sum with nothing else in flight and nothing waiting).
std::vector<double> one_inference_pool_peak_bytes(const DevicePlan& plan, const DeviceHardware& hw, const StageBytes& weight_bytes,
                                                  const StageBytes& working_bytes, SplitStorage storage);

}  // namespace coinfer
