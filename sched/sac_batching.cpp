#include "sched/sac_batching.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/execution_time.hpp"
#include "core/units.hpp"
#include "sched/analytic_estimator.hpp"
#include "sched/policy_meta.hpp"

namespace coinfer {

const std::vector<std::string>& sac_batching_feature_names() {
  // Scaled so that typical values lie within a few units of 0 (the networks' inputs). "Offloading":
  // a device bound to the server whose strategy (as just decided) runs a part of its model there.
  static const std::vector<std::string> names = {
      "log1p_offloading_devices",     // how many devices send it work
      "log1p_open_loop_rate",         // their Poisson rates summed (1/s)
      "log1p_closed_loop_in_flight",  // their closed loops' in_flight summed (at least 1 each)
      "log10_server_s",               // their mean server part at batch 1 (s), from the server's LUT
      "batch_gain_at_limit",          // their mean time per request at the size limit over batch 1's (1: batching gains nothing)
      "log10_transfer_s",             // their mean time to upload the tensor at their split, plus the path's latency
      "log1p_server_queue",           // requests waiting at the server
      "server_busy_share",            // busy workers / workers
      "log2_workers/4",
      "batch_window_s*10",  // its batching now
      "log2_batch_max/6",
      "log2_batch_size_limit/6",  // the largest size it may be given
      "current_action",           // the centre of the current batching's slot (0.5 when it is no candidate)
      "log2_devices/10",          // connected devices with inputs of their own, in the system
  };
  return names;
}

int sac_batching_feature_count() { return static_cast<int>(sac_batching_feature_names().size()); }

std::vector<BatchSpec> sac_batching_candidates(const BatchingChoices& choices, const BatchSpec& current, int size_limit) {
  std::vector<BatchSpec> out = batching_candidates(choices, current, size_limit);
  std::sort(out.begin(), out.end(),
            [](const BatchSpec& a, const BatchSpec& b) { return a.window_ms != b.window_ms ? a.window_ms < b.window_ms : a.max_size < b.max_size; });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty()) out.push_back(current);
  return out;
}

int sac_batching_slot(double action, int count) {
  if (count < 1) throw std::invalid_argument("a batching action needs at least one candidate");
  const double a = std::isfinite(action) ? std::clamp(action, 0.0, 1.0) : 0.0;
  return std::min(static_cast<int>(std::floor(a * count)), count - 1);
}

double sac_batching_slot_action(int index, int count) { return (std::clamp(index, 0, count - 1) + 0.5) / count; }

std::vector<SacBatchingObservation> sac_batching_observe(const SystemState& state, const AnalyticEstimator& est,
                                                         const std::map<std::string, Strategy>& strategies, const BatchingChoices& choices) {
  const ExecutionTimeModel& time = lut_mean_time();
  int system_devices = 0;
  for (const auto& d : state.devices)
    if (d.connected && d.generates) ++system_devices;
  std::vector<SacBatchingObservation> out;
  for (const ServerState& sv : state.servers) {
    if (!sv.up) continue;
    SacBatchingObservation o;
    o.server = sv.id;
    const BatchSpec current{sv.batch_window_ms, sv.batch_max_size};
    o.candidates = sac_batching_candidates(choices, current, sv.batch_size_limit);
    int offloading = 0;
    double rate = 0, in_flight = 0, server_s = 0, gain = 0, transfer_s = 0;
    for (const DeviceState& d : state.devices) {
      if (!d.connected || !d.generates || d.server != sv.id) continue;
      o.devices.push_back(d.id);
      auto it = strategies.find(d.id);
      const Strategy& s = it != strategies.end() ? it->second : d.strategy;
      const ModelSpec& m = est.model(d.model, d.dataset);
      const int n = m.num_stages();
      if (s.kind == Strategy::Kind::local || s.kind == Strategy::Kind::data_parallel) continue;
      const int k = s.device_split(n), end = s.server_end(n);
      if (k >= end) continue;
      ++offloading;
      if (d.arrival_rate_per_s > 0)
        rate += d.arrival_rate_per_s;
      else
        in_flight += std::max(1, d.in_flight);
      const LutTable& sl = est.luts().table({sv.type, d.model, d.dataset});
      const double one = time.seconds(sl, k, end, 1);
      server_s += one;
      const int limit = std::max(1, sv.batch_size_limit);
      gain += limit > 1 && sl.has_latency(k, end, limit) && one > 0 ? time.seconds(sl, k, end, limit) / limit / one : 1.0;
      const double mbps = std::min({d.link_bandwidth_mbps, state.access_point_mbps, sv.link_bandwidth_mbps});
      transfer_s += m.bytes_at_split(k) / mbps_to_bytes_per_s(std::max(mbps, 1e-6)) +
                    (d.link_latency_ms + state.access_point_latency_ms + sv.link_latency_ms) * 1e-3;
    }
    if (o.devices.empty()) continue;
    const double per = offloading > 0 ? 1.0 / offloading : 0;
    int current_slot = -1;
    for (size_t i = 0; i < o.candidates.size(); ++i)
      if (o.candidates[i] == current) current_slot = static_cast<int>(i);
    const int count = static_cast<int>(o.candidates.size());
    o.features = {
        static_cast<float>(std::log1p(offloading)),
        static_cast<float>(std::log1p(rate)),
        static_cast<float>(std::log1p(in_flight)),
        static_cast<float>(offloading > 0 ? sac_log_feature(server_s * per) : 0),
        static_cast<float>(offloading > 0 ? gain * per : 1),
        static_cast<float>(offloading > 0 ? sac_log_feature(transfer_s * per) : 0),
        static_cast<float>(std::log1p(std::max(0, sv.queue_length))),
        static_cast<float>(static_cast<double>(sv.busy_workers) / std::max(1, sv.workers)),
        static_cast<float>(std::log2(std::max(1, sv.workers)) / 4),
        static_cast<float>(sv.batch_window_ms * 1e-3 * 10),
        static_cast<float>(std::log2(std::max(1, sv.batch_max_size)) / 6),
        static_cast<float>(std::log2(std::max(1, sv.batch_size_limit)) / 6),
        static_cast<float>(current_slot >= 0 ? sac_batching_slot_action(current_slot, count) : 0.5),
        static_cast<float>(std::log2(std::max(1, system_devices)) / 10),
    };
    out.push_back(std::move(o));
  }
  return out;
}

std::string sac_batching_info_to_json(const SacBatchingPolicyInfo& i) {
  return nlohmann::ordered_json{{"layout_version", i.layout_version},
                                {"feature_names", i.feature_names},
                                {"hidden", i.hidden},
                                {"batch_windows_ms", i.candidates.windows_ms},
                                {"batch_sizes", i.candidates.sizes},
                                {"episodes", i.episodes},
                                {"scenarios", i.scenarios},
                                {"provenance", i.provenance}}
      .dump();
}

SacBatchingPolicyInfo sac_batching_info_from_json(const std::string& text) {
  SacBatchingPolicyInfo i;
  const nlohmann::json j = parse_policy_meta(text);
  const auto get = [&j](const char* key, auto& into) { read_policy_meta(j, key, into); };
  get("layout_version", i.layout_version);
  get("feature_names", i.feature_names);
  get("hidden", i.hidden);
  get("batch_windows_ms", i.candidates.windows_ms);
  get("batch_sizes", i.candidates.sizes);
  get("episodes", i.episodes);
  get("scenarios", i.scenarios);
  get("provenance", i.provenance);
  if (i.layout_version != kSacBatchingLayoutVersion || i.feature_names != sac_batching_feature_names())
    throw std::invalid_argument("layout_version: the policy observes SAC batching layout " + std::to_string(i.layout_version) + " (" +
                                std::to_string(i.feature_names.size()) + " features), this coinfer builds layout " +
                                std::to_string(kSacBatchingLayoutVersion) + "; train it again with this coinfer");
  if (i.hidden < 1 || i.hidden > 8192) throw std::invalid_argument("hidden: network width out of range");
  if (i.candidates.empty()) throw std::invalid_argument("batch_windows_ms: the policy names no batching candidates");
  return i;
}

}  // namespace coinfer
