#include "core/server_timing.hpp"

#include <limits>

#include "core/helper_forwarding.hpp"

namespace coinfer {

ServerTiming::ServerTiming(const Scenario& s, int server, const LutSet& luts, const std::vector<std::vector<std::string>>& run_models,
                           const ExecutionTimeModel& time)
    : ServerTiming(s, server, luts, std::make_shared<const ServerLutIndex>(s, luts, run_models), helper_pairs(s), run_models, time) {}

ServerTiming::ServerTiming(const Scenario& s, int server, const LutSet& luts, std::shared_ptr<const ServerLutIndex> tables,
                           const std::vector<std::pair<int, int>>& helpers, const std::vector<std::vector<std::string>>& run_models,
                           const ExecutionTimeModel& time)
    : server_(server), tables_(std::move(tables)), time_(&time) {
  const ServerSpec& me = s.servers.at(static_cast<size_t>(server));
  dynamic_ = me.dynamic_batching;
  max_size_ = me.batch.max_size;
  // Who may help whom: core/helper_forwarding.hpp's helper_pairs; only this server's helpers.
  for (const auto& [h, o] : helpers) {
    if (s.server_index(s.devices[static_cast<size_t>(h)].server) != server) continue;
    may_have_helpers_ = true;
    const std::vector<std::string>& models = run_models.at(static_cast<size_t>(o));
    for (size_t b = 0; b < models.size(); ++b) {
      const LutKey key{s.devices[static_cast<size_t>(h)].type, models[b], s.devices[static_cast<size_t>(o)].dataset,
                       s.devices[static_cast<size_t>(h)].default_processor()};
      if (b == 0 || luts.contains(key)) helper_luts_[{h, o, static_cast<int>(b)}] = &luts.table(key);
    }
  }
}

std::vector<std::vector<std::string>> ServerTiming::named_models(const Scenario& s) {
  std::vector<std::vector<std::string>> out;
  for (const auto& d : s.devices) out.push_back({d.model});
  return out;
}

const LutTable* ServerTiming::server_lut(int device, int binding) const { return tables_->table(server_, device, binding); }

double ServerTiming::batch_seconds(int device, int binding, int split, int size, int end) const {
  const LutTable* lut = server_lut(device, binding);
  return lut ? time_->seconds(*lut, split, end < 0 ? lut->num_stages() : end, size) : 0;
}

int ServerTiming::batch_limit(int device, int binding, int split, int end) const {
  const LutTable* lut = dynamic_ ? server_lut(device, binding) : nullptr;
  if (!lut) return 0;
  const int n = end < 0 ? lut->num_stages() : end;
  std::lock_guard<std::mutex> lock(limits_mutex_);
  auto [it, fresh] = limits_.try_emplace({lut, split, n}, 0);
  if (!fresh) return it->second;
  DynamicBatchingInputs in;
  in.initial = in.max_size = max_size_;
  in.batch_seconds = [&](int b) { return time_->seconds(*lut, split, n, b); };
  const bool memory_known = lut->peak_memory(split, n, std::min(max_size_, lut->max_batch())).has_value();
  if (memory_known) in.peak_memory_bytes = [&](int b) { return lut->peak_memory(split, n, std::min(b, lut->max_batch())); };
  if (split > 0) in.input_sparsity = lut->stage_output_sparsity(split - 1);
  it->second = sparoa_batch_size(in, *dynamic_).batch;
  return it->second;
}

const LutTable* ServerTiming::helper_lut(int helper, int device, int binding) const {
  const auto it = helper_luts_.find({helper, device, binding});
  return it == helper_luts_.end() ? nullptr : it->second;
}

double ServerTiming::helper_seconds(int helper, int device, int binding, int split, int size, double input_bytes, double bytes_per_s) const {
  const LutTable* lut = helper_lut(helper, device, binding);
  if (!lut) return std::numeric_limits<double>::infinity();  // no LUT for that model: never sooner
  return helper_batch_seconds(input_bytes, bytes_per_s, *lut, split, size, *time_);
}

}  // namespace coinfer
