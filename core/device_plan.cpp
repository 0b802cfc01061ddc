#include "core/device_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/model_spec.hpp"

namespace coinfer {

DevicePlan make_device_plan(const Strategy& s, int num_stages, const DeviceHardware& hw, const std::string& device_id) {
  const int split = s.placed_stages(num_stages);
  DevicePlan plan;
  if (s.placement.empty() || split <= 0) {
    if (split > 0) plan.segments.push_back({0, split, 0, -1, 1});
    return plan;
  }
  try {
    for (const PlacementPart& part : s.placement.resolved(split)) {
      for (const std::string* name : {&part.processor, &part.with})
        if (!name->empty() && hw.slot(*name) < 0)
          throw std::invalid_argument("device " + device_id + " has no processor '" + *name + "' (it has: " + hw.describe() + ")");
      if (part.end > num_stages)
        throw std::invalid_argument("the placement names stage " + std::to_string(part.end - 1) + " of a model of " + std::to_string(num_stages));
      const DeviceSegment seg{part.begin, part.end, hw.slot(part.processor), part.with.empty() ? -1 : hw.slot(part.with), part.share};
      DeviceSegment* last = plan.segments.empty() ? nullptr : &plan.segments.back();
      if (last && last->proc == seg.proc && last->with == seg.with && last->share == seg.share)
        last->end = seg.end;  // consecutive parts on the same processor(s): one segment
      else
        plan.segments.push_back(seg);
    }
  } catch (const std::invalid_argument& e) {
    plan.segments.clear();
    plan.invalid = "strategy " + s.to_string() + ": " + e.what();
  }
  return plan;
}

std::vector<const LutTable*> processor_tables(const LutSet& luts, const LutKey& own_key, const LutTable* own, const DeviceHardware& hw) {
  std::vector<const LutTable*> out = {own};
  for (int p = 1; p < hw.size(); ++p) {
    LutKey k = own_key;
    k.processor = hw.processors[static_cast<size_t>(p)];
    const LutTable* t = !k.processor.empty() && luts.contains(k) ? &luts.table(k) : nullptr;
    out.push_back(t != nullptr && t->key().processor == k.processor ? t : nullptr);
  }
  return out;
}

double segment_seconds(const DevicePlan& plan, size_t j, int device_split, const ModelSpec& model, const DeviceHardware& hw,
                       const std::vector<const LutTable*>& tables, const ExecutionTimeModel& time, double u) {
  const DeviceSegment& seg = plan.segments.at(j);
  const LutTable& tp = *tables.at(static_cast<size_t>(seg.proc));
  const auto run = [&time, u](const LutTable& t, int b, int e) { return u < 0 ? time.seconds(t, b, e, 1) : time.sample_seconds(t, b, e, 1, u); };
  double seconds = 0;
  if (seg.with < 0) {
    seconds = run(tp, seg.begin, seg.end);
  } else {
    const LutTable& tq = *tables.at(static_cast<size_t>(seg.with));
    for (int st = seg.begin; st < seg.end; ++st)
      seconds += std::max(seg.share * run(tp, st, st + 1), (1 - seg.share) * run(tq, st, st + 1)) +
                 hw.copy_seconds(model.stages[static_cast<size_t>(st)].out_bytes);
  }
  if (hw.zero_copy) {  // nothing moves: only the compression below
  } else {
    const auto in_main = [&hw](int p) { return p < 0 || hw.pool_of.at(static_cast<size_t>(p)) == 0; };
    const bool outside = !in_main(seg.proc) || !in_main(seg.with);
    if (j == 0) {
      if (outside) seconds += hw.copy_seconds(model.bytes_at_split(seg.begin));
    } else {
      const DeviceSegment& prev = plan.segments[j - 1];
      if (prev.proc != seg.proc || prev.with != seg.with) seconds += hw.copy_seconds(model.bytes_at_split(seg.begin));
    }
    if (j + 1 == plan.segments.size() && outside) seconds += hw.copy_seconds(model.bytes_at_split(seg.end));
  }
  if (j + 1 == plan.segments.size() && device_split < model.num_stages()) seconds += tp.wire_compress_seconds(device_split);
  return seconds;
}

std::vector<double> processor_seconds(const DevicePlan& plan, int device_split, const ModelSpec& model, const DeviceHardware& hw,
                                      const std::vector<const LutTable*>& tables, const ExecutionTimeModel& time) {
  std::vector<double> out(static_cast<size_t>(std::max(1, hw.size())), 0.0);
  for (size_t j = 0; j < plan.segments.size(); ++j) {
    const double s = segment_seconds(plan, j, device_split, model, hw, tables, time, -1);
    out[static_cast<size_t>(plan.segments[j].proc)] += s;
    if (plan.segments[j].with >= 0) out[static_cast<size_t>(plan.segments[j].with)] += s;
  }
  return out;
}

}  // namespace coinfer
