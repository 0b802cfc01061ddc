#pragma once
// A request's device stages as segments on the device's processors, and what a segment
// costs: written once for the device loop (core/device_loop.hpp), the simulator (sim/device.cpp) and
// the analytic estimator (sched/analytic_estimator.cpp). Times in seconds, sizes in bytes.
#include <string>
#include <vector>

#include "core/device_hardware.hpp"
#include "core/execution_time.hpp"
#include "core/strategy.hpp"

namespace coinfer {

class ModelSpec;

// One segment: stages [begin, end) on processor `proc` (its position in DeviceHardware::processors),
// or split with processor `with` taking 1 - share of each stage's output rows.
struct DeviceSegment {
  int begin = 0, end = 0;
  int proc = 0;
  int with = -1;
  double share = 1;
};

// A request's device stages as segments in order; `invalid` says why a strategy's placement cannot
// run on the device (its requests fail with that reason).
struct DevicePlan {
  std::vector<DeviceSegment> segments;
  std::string invalid;
  // The default plan: at most one segment, on processor 0, not split.
  bool plain() const { return segments.size() <= 1 && (segments.empty() || (segments[0].proc == 0 && segments[0].with < 0)); }
};

// The plan of strategy `s` on a device with `hw` running a model of `num_stages` (data_parallel: the
// plan of its inputs that run on the device, whole, [0, num_stages)): no placement: one segment
// [0, split) on processor 0 (none when split is 0); else the placement's parts, consecutive parts on
// the same processor(s) merged. A processor the device lacks, or ranges that do not cover its stages, make it invalid.
DevicePlan make_device_plan(const Strategy& s, int num_stages, const DeviceHardware& hw, const std::string& device_id);

// Per processor of `hw`, the table a device of `own_key`'s type, model and dataset runs on it: [0] is
// `own` (its default processor's, as the caller found it); another processor's only a table that
// names that processor (never a table that names none: that one is the default processor's), null
// where the LUTs hold none (a plan placing stages there cannot run). One rule for the simulator, the
// estimator and the search schedulers' options.
std::vector<const LutTable*> processor_tables(const LutSet& luts, const LutKey& own_key, const LutTable* own, const DeviceHardware& hw);

// Seconds of segment `j` of `plan` for a request whose device runs [0, device_split) of `model`
// (scenarios/README.md "Placement"): the segment's stages on its processor's table; a split stage
// max(share x t_P, (1 - share) x t_Q) plus exchanging its output (DeviceHardware::copy_seconds of
// the stage's output bytes); a copy of the tensor at its start when the processor(s) differ from
// the previous segment's, or when the first segment runs outside main memory; for the last segment,
// a copy back to main memory when it ran outside it, and compressing what it sends when the request
// goes on to the server (wire_compress_seconds of its processor's table). `tables[p]`: processor p's
// table (non-null for every processor the segment uses). u < 0: expected times (time.seconds); else
// one execution's (time.sample_seconds at u, the same u for every stage).
double segment_seconds(const DevicePlan& plan, size_t j, int device_split, const ModelSpec& model, const DeviceHardware& hw,
                       const std::vector<const LutTable*>& tables, const ExecutionTimeModel& time, double u);

// Per processor, the seconds one request keeps it busy under `plan` (expected times): the bottleneck
// of a device pipelining across its processors is the largest.
std::vector<double> processor_seconds(const DevicePlan& plan, int device_split, const ModelSpec& model, const DeviceHardware& hw,
                                      const std::vector<const LutTable*>& tables, const ExecutionTimeModel& time);

}  // namespace coinfer
