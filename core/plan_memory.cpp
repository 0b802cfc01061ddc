#include "core/plan_memory.hpp"

#include <algorithm>

namespace coinfer {

void add_plan_weight_bytes(const DevicePlan& plan, const StageBytes& weight_bytes, SplitStorage storage, std::vector<double>& per_processor) {
  for (const DeviceSegment& s : plan.segments) {
    const double w = weight_bytes(s.begin, s.end);
    if (s.with < 0) {
      per_processor[static_cast<size_t>(s.proc)] += w;
    } else if (storage == SplitStorage::rows) {
      per_processor[static_cast<size_t>(s.proc)] += w;
      per_processor[static_cast<size_t>(s.with)] += w;
    } else {
      per_processor[static_cast<size_t>(s.proc)] += w * s.share;
      per_processor[static_cast<size_t>(s.with)] += w * (1 - s.share);
    }
  }
}

SegmentWorkingBytes segment_working_bytes(const DeviceSegment& seg, double work, const DeviceHardware& hw) {
  if (seg.with < 0) return {work, 0};
  if (!hw.zero_copy) return {work, work};
  const double mine = work * seg.share;
  return {mine, work - mine};
}

std::vector<double> one_inference_pool_peak_bytes(const DevicePlan& plan, const DeviceHardware& hw, const StageBytes& weight_bytes,
                                                  const StageBytes& working_bytes, SplitStorage storage) {
  const size_t np = std::max<size_t>(1, hw.pool_capacity_bytes.size());
  std::vector<double> weights(static_cast<size_t>(std::max(1, hw.size())), 0.0);
  add_plan_weight_bytes(plan, weight_bytes, storage, weights);
  std::vector<double> peak(np, 0.0);
  const auto pool = [&](int proc) { return hw.pool_of.empty() ? size_t{0} : static_cast<size_t>(hw.pool_of[static_cast<size_t>(proc)]); };
  for (const DeviceSegment& seg : plan.segments) {
    std::vector<double> need(np, 0.0);
    for (size_t i = 0; i < weights.size(); ++i) need[pool(static_cast<int>(i))] += weights[i];
    const SegmentWorkingBytes w = segment_working_bytes(seg, working_bytes(seg.begin, seg.end), hw);
    need[pool(seg.proc)] += w.on_proc;
    if (seg.with >= 0) need[pool(seg.with)] += w.on_with;
    for (size_t k = 0; k < np; ++k) peak[k] = std::max(peak[k], need[k]);
  }
  return peak;
}

}  // namespace coinfer
