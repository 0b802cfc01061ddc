#include "sched/sac_mdp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/record_energy.hpp"
#include "core/execution_time.hpp"
#include "core/units.hpp"
#include "sched/analytic_estimator.hpp"
#include "sched/sac_batching.hpp"

namespace coinfer {

const std::vector<std::string>& sac_feature_names() {
  // Scaled so that typical values lie within a few units of 0 (the networks' inputs).
  static const std::vector<std::string> names = {
      // the device
      "log10_bandwidth_mbps/2",       // the bottleneck of its link, the access point and the server link
      "link_latency_s*10",            // one way, summed over the hops
      "log1p_queue_length",           // requests waiting on the device
      "log1p_unfinished",             // requests created and not finished
      "log1p_arrival_rate",           // open loop rate (1/s); 0 = closed loop
      "log10_local_s",                // the whole model on the device, batch 1
      "log10_offload_s",              // the whole model on the server alone: input up, server, result down
      "log10_best_isolated_s",        // the best split's latency for the device alone (the reward's unit)
      "best_isolated_share",          // that split's device share k/n
      "log10_input_upload_s",         // the raw input's transfer time
      "log10_min_interior_upload_s",  // the smallest intermediate state's transfer time (pp(1..n-1))
      "current_action",               // the centre of the current strategy's action slot
      "stages/10",                    // n
      // its server
      "log1p_server_queue",  // requests waiting at the server
      "server_busy_share",   // busy workers / workers
      "log2_workers/4", "batch_window_s*10", "log2_batch_max/6",
      "server_offload_pressure",  // sum over the server's devices of server time / offload latency, per worker
      "device_share_of_server",   // 1 / devices on this server
      "rank_on_server",           // the device's place among this server's devices (state order), k / count:
                                  // identical devices see different values, so one shared policy can
                                  // give them different strategies (some offload, the rest local)
      // the system
      "log2_devices/10",  // connected devices with inputs of their own
  };
  return names;
}

int sac_feature_count() { return static_cast<int>(sac_feature_names().size()); }

namespace {
int slot_count(int n, bool dp) { return n + 1 + (dp ? 1 : 0); }
}  // namespace

double sac_log_feature(double x) { return std::log10(std::max(x, 1e-6)); }

Strategy action_strategy(double action, int n, bool dp) {
  const int slots = slot_count(n, dp);
  const double a = std::isfinite(action) ? std::clamp(action, 0.0, 1.0) : 0.0;
  const int slot = std::min(static_cast<int>(std::floor(a * slots)), slots - 1);
  if (slot > n) return Strategy::data_parallel();
  return Strategy::at_split(slot, n);
}

double strategy_action(const Strategy& s, int n, bool dp) {
  const int slots = slot_count(n, dp);
  int slot = s.kind == Strategy::Kind::data_parallel ? (dp ? n + 1 : n) : s.device_split(n);
  slot = std::clamp(slot, 0, slots - 1);
  return (slot + 0.5) / slots;
}

std::vector<SacObservation> sac_observe(const SystemState& state, const AnalyticEstimator& est, bool dp) {
  struct Device {
    const DeviceState* d;
    const ServerState* sv;
    int n;
    double bw, lat, local_s, offload_s, best_s, best_k, input_s, min_interior_s, server_s;
  };
  std::vector<Device> devs;
  const ExecutionTimeModel& time = lut_mean_time();
  for (const auto& d : state.devices) {
    if (!d.connected || !d.generates) continue;
    const ServerState* sv = state.server(d.server);
    if (!sv) throw std::invalid_argument("device " + d.id + " names unknown server " + d.server);
    const ModelSpec& m = est.model(d.model, d.dataset);
    const int n = m.num_stages();
    const LutTable& dl = est.luts().table(d.lut_key(d.model));
    const LutTable& sl = est.luts().table({sv->type, d.model, d.dataset});
    Device x{&d, sv, n, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const double mbps = std::min({d.link_bandwidth_mbps, state.access_point_mbps, sv->link_bandwidth_mbps});
    x.bw = mbps;
    const double bps = mbps_to_bytes_per_s(std::max(mbps, 1e-6));
    x.lat = (d.link_latency_ms + state.access_point_latency_ms + sv->link_latency_ms) * 1e-3;
    x.best_s = std::numeric_limits<double>::infinity();
    x.min_interior_s = std::numeric_limits<double>::infinity();
    for (int k = 0; k <= n; ++k) {
      double t = time.seconds(dl, 0, k, 1);
      if (k < n) t += 2 * x.lat + m.bytes_at_split(k) / bps + time.seconds(sl, k, n, 1) + m.bytes_at_split(n) / bps;
      if (k == 0) x.offload_s = t;
      if (k == n) x.local_s = t;
      if (t < x.best_s) x.best_s = t, x.best_k = k;
      if (k > 0 && k < n) x.min_interior_s = std::min(x.min_interior_s, m.bytes_at_split(k) / bps);
    }
    x.input_s = m.bytes_at_split(0) / bps;
    if (!std::isfinite(x.min_interior_s)) x.min_interior_s = x.input_s;
    x.server_s = time.seconds(sl, 0, n, 1);
    devs.push_back(x);
  }
  std::map<const ServerState*, double> pressure;
  std::map<const ServerState*, int> on_server, rank;
  for (const Device& x : devs) {
    pressure[x.sv] += x.server_s / std::max(x.offload_s, 1e-9) / std::max(1, x.sv->workers);
    ++on_server[x.sv];
  }
  std::vector<SacObservation> out;
  for (const Device& x : devs) {
    const DeviceState& d = *x.d;
    SacObservation o;
    o.device = d.id;
    o.num_stages = x.n;
    o.features = {
        static_cast<float>(sac_log_feature(x.bw) / 2),
        static_cast<float>(x.lat * 10),
        static_cast<float>(std::log1p(std::max(0, d.queue_length))),
        static_cast<float>(std::log1p(std::max(0, d.unfinished))),
        static_cast<float>(std::log1p(std::max(0.0, d.arrival_rate_per_s))),
        static_cast<float>(sac_log_feature(x.local_s)),
        static_cast<float>(sac_log_feature(x.offload_s)),
        static_cast<float>(sac_log_feature(x.best_s)),
        static_cast<float>(x.best_k / std::max(1, x.n)),
        static_cast<float>(sac_log_feature(x.input_s)),
        static_cast<float>(sac_log_feature(x.min_interior_s)),
        static_cast<float>(strategy_action(d.strategy, x.n, dp)),
        static_cast<float>(x.n / 10.0),
        static_cast<float>(std::log1p(std::max(0, x.sv->queue_length))),
        static_cast<float>(static_cast<double>(x.sv->busy_workers) / std::max(1, x.sv->workers)),
        static_cast<float>(std::log2(std::max(1, x.sv->workers)) / 4),
        static_cast<float>(x.sv->batch_window_ms * 1e-3 * 10),
        static_cast<float>(std::log2(std::max(1, x.sv->batch_max_size)) / 6),
        static_cast<float>(pressure[x.sv]),
        static_cast<float>(1.0 / on_server[x.sv]),
        static_cast<float>(static_cast<double>(rank[x.sv]++) / on_server[x.sv]),
        static_cast<float>(std::log2(static_cast<double>(devs.size())) / 10),
    };
    out.push_back(std::move(o));
  }
  return out;
}

std::string sac_decision_to_json(const SacDecision& d) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : d.steps) steps.push_back({{"device", s.device}, {"action", s.action}, {"strategy", s.strategy}, {"features", s.features}});
  nlohmann::json j{{"sac_layout", kSacLayoutVersion}, {"t_s", d.t_s}, {"steps", steps}};
  if (!d.servers.empty()) {
    nlohmann::json servers = nlohmann::json::array();
    for (const auto& s : d.servers)
      servers.push_back({{"server", s.server},
                         {"action", s.action},
                         {"window_ms", s.batching.window_ms},
                         {"max_size", s.batching.max_size},
                         {"devices", s.devices},
                         {"features", s.features}});
    j["sac_batching_layout"] = kSacBatchingLayoutVersion;
    j["servers"] = servers;
  }
  return j.dump();
}

SacDecision sac_decision_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("sac_layout")) throw std::invalid_argument("not a SAC decision record (no sac_layout)");
  try {
    if (j.at("sac_layout").get<int>() != kSacLayoutVersion)
      throw std::invalid_argument("SAC layout " + j.at("sac_layout").dump() + ", this build reads " + std::to_string(kSacLayoutVersion));
    SacDecision d;
    d.t_s = j.at("t_s").get<double>();
    for (const auto& s : j.at("steps")) {
      SacStep x;
      x.device = s.at("device").get<std::string>();
      x.action = s.at("action").get<double>();
      x.strategy = s.at("strategy").get<std::string>();
      x.features = s.at("features").get<std::vector<float>>();
      if (static_cast<int>(x.features.size()) != sac_feature_count())
        throw std::invalid_argument("device " + x.device + " has " + std::to_string(x.features.size()) + " features, the layout " +
                                    std::to_string(sac_feature_count()));
      d.steps.push_back(std::move(x));
    }
    if (j.contains("servers")) {
      if (!j.contains("sac_batching_layout") || j.at("sac_batching_layout").get<int>() != kSacBatchingLayoutVersion)
        throw std::invalid_argument("SAC batching layout " +
                                    (j.contains("sac_batching_layout") ? j.at("sac_batching_layout").dump() : std::string("missing")) +
                                    ", this build reads " + std::to_string(kSacBatchingLayoutVersion));
      for (const auto& s : j.at("servers")) {
        SacServerStep x;
        x.server = s.at("server").get<std::string>();
        x.action = s.at("action").get<double>();
        x.batching = {s.at("window_ms").get<double>(), s.at("max_size").get<int>()};
        x.devices = s.at("devices").get<std::vector<std::string>>();
        x.features = s.at("features").get<std::vector<float>>();
        if (static_cast<int>(x.features.size()) != sac_batching_feature_count())
          throw std::invalid_argument("server " + x.server + " has " + std::to_string(x.features.size()) + " features, the batching layout " +
                                      std::to_string(sac_batching_feature_count()));
        d.servers.push_back(std::move(x));
      }
    }
    return d;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed SAC decision record: ") + e.what());
  }
}

double sac_reference_s(const std::vector<float>& features) {
  static const int kBest = 7;  // "log10_best_isolated_s"
  return std::max(std::pow(10.0, static_cast<double>(features.at(kBest))), 1e-6);
}

double sac_latency_term(const SacRewardWeights& w, double window_s, long long done, double latency_sum_s, bool waiting, double oldest_s,
                        double ref_s) {
  const double window = std::max(window_s, 1e-9);
  if (done > 0) return std::log(std::max((w.per_result ? window : latency_sum_s) / static_cast<double>(done) / ref_s, 1e-6));
  if (waiting) return std::log(std::max(oldest_s, window) / ref_s);
  return NAN;
}

std::vector<double> sac_window_rewards(const SacRewardWeights& w, const std::vector<double>& l, const std::vector<double>& mb,
                                       const std::vector<bool>& switched) {
  double mean = 0;
  int counted = 0;
  for (double x : l)
    if (!std::isnan(x)) mean += x, ++counted;
  mean = counted ? mean / counted : 0;
  std::vector<double> r;
  for (size_t k = 0; k < l.size(); ++k) {
    const double own = std::isnan(l[k]) ? mean : l[k];
    r.push_back(-(w.latency * ((1 - w.shared) * own + w.shared * mean) + w.energy * mb[k] + w.switching * (switched[k] ? 1 : 0)));
  }
  return r;
}

std::vector<SacTransition> sac_transitions(const std::vector<SacDecision>& decisions, const std::vector<RequestRecord>& requests,
                                           const std::vector<std::string>& device_ids, double end_s, const SacRewardWeights& w,
                                           double* episode_return, const std::vector<PowerSpec>* power,
                                           std::vector<SacTransition>* server_transitions) {
  if (w.energy_per_result && (power == nullptr || power->size() != device_ids.size()))
    throw std::invalid_argument("the energy objective needs every device's power");
  std::map<std::string, int> index;
  for (size_t i = 0; i < device_ids.size(); ++i) index[device_ids[i]] = static_cast<int>(i);
  std::vector<std::vector<const RequestRecord*>> by_device(device_ids.size());
  for (const auto& r : requests)
    if (r.device >= 0 && static_cast<size_t>(r.device) < by_device.size()) by_device[static_cast<size_t>(r.device)].push_back(&r);
  std::vector<SacTransition> out;
  std::map<std::string, std::string> previous_strategy;
  double total = 0;
  for (size_t j = 0; j < decisions.size(); ++j) {
    const double t0 = decisions[j].t_s;
    if (t0 >= end_s) break;
    const bool last = j + 1 == decisions.size() || decisions[j + 1].t_s >= end_s;
    const double t1 = last ? end_s : decisions[j + 1].t_s;
    std::vector<const SacStep*> steps;  // the steps of known devices
    for (const SacStep& s : decisions[j].steps)
      if (index.count(s.device)) steps.push_back(&s);
    std::vector<double> l, mb;
    std::vector<bool> switched;
    for (const SacStep* s : steps) {
      double sum = 0, oldest = 0, bytes = 0;
      long long done = 0;
      bool waiting = false;
      for (const RequestRecord* r : by_device[static_cast<size_t>(index[s->device])]) {
        if (r->done() && r->t_result >= t0 && r->t_result < t1) {
          sum += r->latency_s();
          ++done;
          bytes += (r->bytes_up + r->bytes_down) * 1e-6;
        } else if (r->t_created < t1 && !(r->done() && r->t_result < t1)) {
          waiting = true;
          oldest = std::max(oldest, t1 - r->t_created);
        }
      }
      if (w.energy_per_result) {  // ln(J per result) from the records (core/record_energy.hpp)
        const size_t di = static_cast<size_t>(index[s->device]);
        const double joules = window_energy_from_records((*power)[di], by_device[di], t0, t1).total_j();
        l.push_back(done > 0 || waiting ? std::log(std::max(joules / static_cast<double>(std::max(done, 1LL)), 1e-9)) : NAN);
      } else {
        l.push_back(sac_latency_term(w, t1 - t0, done, sum, waiting, oldest, sac_reference_s(s->features)));
      }
      mb.push_back(bytes);
      auto prev = previous_strategy.find(s->device);
      switched.push_back(prev != previous_strategy.end() && prev->second != s->strategy);
      previous_strategy[s->device] = s->strategy;
    }
    const std::vector<double> rewards = sac_window_rewards(w, l, mb, switched);
    for (size_t k = 0; k < steps.size(); ++k) {
      const SacStep& s = *steps[k];
      SacTransition t;
      t.obs = s.features;
      t.action = static_cast<float>(s.action);
      t.reward = static_cast<float>(rewards[k]);
      t.done = last;
      t.next_obs = s.features;
      if (!last) {
        bool found = false;
        for (const SacStep& n : decisions[j + 1].steps)
          if (n.device == s.device) t.next_obs = n.features, found = true;
        if (!found) t.done = true;  // the device left
      }
      total += rewards[k];
      out.push_back(std::move(t));
    }
    if (!server_transitions) continue;
    for (const SacServerStep& sv : decisions[j].servers) {
      double sum = 0;
      int counted = 0;
      for (size_t k = 0; k < steps.size(); ++k)
        if (std::find(sv.devices.begin(), sv.devices.end(), steps[k]->device) != sv.devices.end()) sum += rewards[k], ++counted;
      if (counted == 0) continue;
      SacTransition t;
      t.obs = sv.features;
      t.action = static_cast<float>(sv.action);
      t.reward = static_cast<float>(sum / counted);
      t.done = last;
      t.next_obs = sv.features;
      if (!last) {
        bool found = false;
        for (const SacServerStep& n : decisions[j + 1].servers)
          if (n.server == sv.server) t.next_obs = n.features, found = true;
        if (!found) t.done = true;  // the server went down or lost its devices
      }
      server_transitions->push_back(std::move(t));
    }
  }
  if (episode_return) *episode_return = total;
  return out;
}

double sac_squash(double mean, double log_std, double noise) {
  const double u = mean + std::exp(std::clamp(log_std, -20.0, 2.0)) * noise;
  return (std::tanh(u) + 1) / 2;
}

double standard_normal(double u1, double u2) { return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2); }

}  // namespace coinfer
