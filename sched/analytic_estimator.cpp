#include "sched/analytic_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include "core/units.hpp"
#include "core/execution_time.hpp"
#include "core/model_key.hpp"

namespace coinfer {

namespace {

// Server seconds for a batch of (possibly fractional) size b: linear between the integer entries.
double batch_seconds(const LutTable& t, int begin, int end, double b) {
  b = std::clamp(b, 1.0, static_cast<double>(t.max_batch()));
  const int lo = static_cast<int>(std::floor(b));
  const int hi = std::min(lo + 1, t.max_batch());
  const double f = b - lo;
  const double a = lut_mean_time().seconds(t, begin, end, lo);
  return f > 0 ? a + f * (lut_mean_time().seconds(t, begin, end, hi) - a) : a;
}

struct Path {  // one device's traffic through its server (or its local path)
  int device = 0;
  bool to_server = false;
  int split = 0;              // device runs [0, split)
  double device_s = 0;        // device stages
  double up_s = 0, down_s = 0;        // transfer incl. latency
  double up_xfer_s = 0;       // bytes / bandwidth only (the radio's busy time)
  int server = -1;
  int group = -1;             // batch group: same server, model/dataset and split (index into group_rate)
  int in_flight = 1;          // closed loop; 0 = open loop
  double rate = 0;            // open loop
  const LutTable* server_lut = nullptr;
  int n = 0;
  double lambda = 0;          // requests/s (iterated)
  // outputs
  double latency_s = 0, batch_s = 0, per_request_s = 0;
};

}  // namespace

const ModelSpec& AnalyticEstimator::model(const std::string& m, const std::string& d) const {
  auto it = models_.find(ModelKey{m, d}.to_string());
  if (it == models_.end()) throw std::invalid_argument("estimator has no model spec for " + m + "/" + d);
  return it->second;
}

namespace {
// A scheme as a compact key: every (device id, strategy) in the map's order, then the helpers.
std::string scheme_memo_key(const Scheme& scheme) {
  std::string key;
  for (const auto& [id, st] : scheme.strategies) {
    key += id;
    key += '\0';
    key += static_cast<char>('0' + static_cast<int>(st.kind));
    key.append(reinterpret_cast<const char*>(&st.split), sizeof st.split);
    key += st.variant;  // the model variant it runs (empty for most schemes)
    key += '\0';
  }
  key += '\1';
  for (const auto& h : scheme.helpers) {
    key += h;
    key += '\0';
  }
  return key;
}
}  // namespace

Prediction AnalyticEstimator::predict_cached(const SystemState& state, const Scheme& scheme) const {
  std::string key = scheme_memo_key(scheme);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (!memo_valid_ || !(memo_state_ == state)) {
      memo_.clear();
      memo_bytes_ = 0;
      memo_state_ = state;
      memo_valid_ = true;
    } else if (auto it = memo_.find(key); it != memo_.end()) {
      return it->second;
    }
  }
  Prediction p = predict(state, scheme);
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (memo_valid_ && memo_state_ == state) {
    const size_t bytes = key.size() + sizeof(Prediction) + 64 * p.server_utilisation.size() + 64;
    if (memo_bytes_ + bytes > kMemoBytes) {
      memo_.clear();
      memo_bytes_ = 0;
    }
    if (memo_.emplace(std::move(key), p).second) memo_bytes_ += bytes;
  }
  return p;
}

Prediction AnalyticEstimator::predict(const SystemState& state, const Scheme& scheme) const {
  std::vector<Path> paths;
  std::vector<const DeviceState*> devs;
  std::map<std::tuple<int, std::string, std::string, int>, int> group_ids;  // (server, model, dataset, split) -> id
  for (const auto& d : state.devices) {
    if (!d.connected || !d.generates) continue;
    const int di = static_cast<int>(devs.size());
    devs.push_back(&d);
    auto sit = scheme.strategies.find(d.id);
    const Strategy st = sit == scheme.strategies.end() ? d.strategy : sit->second;
    const std::string run_model = model_under(d.model, st);  // the variant the strategy runs
    const ModelSpec& m = model(run_model, d.dataset);
    const int n = m.num_stages();
    const LutTable& dev_lut = luts_.table({d.type, run_model, d.dataset});
    const ServerState* sv = state.server(d.server);
    if (!sv) throw std::invalid_argument("device " + d.id + " names unknown server " + d.server);
    const LutTable& srv_lut = luts_.table({sv->type, run_model, d.dataset});
    const double bw = mbps_to_bytes_per_s(std::min({d.link_bandwidth_mbps, state.access_point_mbps, sv->link_bandwidth_mbps}));
    const double lat = (d.link_latency_ms + state.access_point_latency_ms + sv->link_latency_ms) * 1e-3;
    const int closed_in_flight = d.in_flight > 0 ? d.in_flight : (st.kind == Strategy::Kind::local || st.kind == Strategy::Kind::offload ? 1 : 2);
    auto make = [&](int split, bool to_server, int in_flight) {
      Path p;
      p.device = di;
      p.split = split;
      p.to_server = to_server;
      p.n = n;
      p.device_s = lut_mean_time().seconds(dev_lut, 0, split, 1);
      p.in_flight = d.arrival_rate_per_s > 0 ? 0 : in_flight;
      p.rate = d.arrival_rate_per_s;
      if (to_server) {
        p.up_xfer_s = m.bytes_at_split(split) / bw;
        p.up_s = lat + p.up_xfer_s;
        p.down_s = lat + m.bytes_at_split(n) / bw;
        p.server = static_cast<int>(sv - state.servers.data());
        p.server_lut = &srv_lut;
        p.group = group_ids.emplace(std::make_tuple(p.server, run_model, d.dataset, split), static_cast<int>(group_ids.size())).first->second;
      }
      return p;
    };
    if (st.kind == Strategy::Kind::data_parallel) {
      // Two independent paths, one input each: whole on the device, whole on the server.
      Path local = make(n, false, 1), remote = make(0, true, 1);
      if (d.arrival_rate_per_s > 0) {  // open loop: split the arrivals in proportion to the path speeds
        double tl = local.device_s, tr = remote.up_s + remote.down_s + lut_mean_time().seconds(srv_lut, 0, n, 1);
        local.rate = d.arrival_rate_per_s * tr / (tl + tr);
        remote.rate = d.arrival_rate_per_s * tl / (tl + tr);
      }
      paths.push_back(local);
      paths.push_back(remote);
    } else {
      const int k = st.device_split(n);
      paths.push_back(make(k, k < n, closed_in_flight));
    }
  }

  // Fixed point: rates -> batch sizes and server utilisation -> latencies -> rates.
  const double kDamping = 0.5;
  std::vector<double> group_rate(group_ids.size(), 0);  // requests/s per batch group
  std::vector<double> server_load(state.servers.size(), 0);        // busy worker-seconds per second
  std::vector<double> server_batch_rate(state.servers.size(), 0);  // batches per second
  // What closed loops can have queued at a server at most (their in-flight requests' batch times), and
  // whether an open loop (no such bound) sends there.
  std::vector<double> server_closed_work(state.servers.size(), 0);
  std::vector<int> server_open_paths(state.servers.size(), 0);
  std::vector<double> saturation_load(state.servers.size(), 0);
  auto evaluate = [&](bool update_rates) {
    std::fill(group_rate.begin(), group_rate.end(), 0.0);
    for (const auto& p : paths)
      if (p.to_server) group_rate[p.group] += p.lambda;
    std::fill(server_load.begin(), server_load.end(), 0.0);
    std::fill(server_batch_rate.begin(), server_batch_rate.end(), 0.0);
    std::fill(server_closed_work.begin(), server_closed_work.end(), 0.0);
    std::fill(server_open_paths.begin(), server_open_paths.end(), 0);
    for (auto& p : paths) {
      if (!p.to_server) continue;
      const ServerState& sv = state.servers[p.server];
      const double w = sv.batch_window_ms * 1e-3;
      const double L = group_rate[p.group];
      double b = 1;
      if (w > 0 && sv.batch_max_size > 1) b = std::clamp(1 + L * w, 1.0, static_cast<double>(sv.batch_max_size));
      p.batch_s = batch_seconds(*p.server_lut, p.split, p.n, b);
      p.per_request_s = p.batch_s / b;
      server_load[p.server] += p.lambda * p.per_request_s;
      server_batch_rate[p.server] += p.lambda / b;
      if (p.in_flight > 0) server_closed_work[p.server] += p.in_flight * p.batch_s;
      else ++server_open_paths[p.server];
    }
    for (auto& p : paths) {
      double latency = p.device_s;
      double bottleneck = p.device_s;
      if (p.to_server) {
        const ServerState& sv = state.servers[p.server];
        const double c = std::max(1, sv.workers);
        const double w = sv.batch_window_ms * 1e-3;
        const double L = group_rate[p.group];
        // Window wait: the first request of a batch waits the whole window (or until the batch fills),
        // later ones on average half of it.
        double wait_window = 0;
        if (w > 0 && sv.batch_max_size > 1) {
          const double fill = L > 0 ? (sv.batch_max_size - 1) / L : w;
          const double close = std::min(w, fill);
          const double b = std::clamp(1 + L * close, 1.0, static_cast<double>(sv.batch_max_size));
          wait_window = close * (1 + (b - 1) / 2) / b;
        }
        // Queueing behind the other devices' work (a request never waits behind its own device's
        // previous one in a closed loop): M/M/c waiting time (Sakasegawa) at the others' utilisation,
        // in units of the others' mean batch time: what is queued ahead is their work, not this path's
        // (scaling by this path's own batch time had a light gcode split predicted at 3.3x its
        // simulated throughput beside two DGCNN offloaders: issue 17).
        const double own_load = p.lambda * p.per_request_s;
        const double own_batches = p.per_request_s > 0 ? p.lambda * p.per_request_s / p.batch_s : 0;
        const double others_load = std::max(0.0, server_load[p.server] - own_load);
        const double others_batches = server_batch_rate[p.server] - own_batches;
        const double others_batch_s = others_batches > 1e-12 ? others_load / others_batches : 0;
        const double rho_others = std::clamp(others_load / c, 0.0, 0.999);
        double wq = std::pow(rho_others, std::sqrt(2 * (c + 1)) - 1) / (c * (1 - rho_others)) * others_batch_s;
        // Closed loops are finite populations: no more than their in-flight requests can be ahead (the
        // open M/M/c formula diverges as the others saturate the server; measured: 0.27 req/s predicted
        // for a device simulated at 19.6). Open-loop senders have no such bound.
        const int others_open = server_open_paths[p.server] - (p.in_flight > 0 ? 0 : 1);
        if (others_open == 0) wq = std::min(wq, std::max(0.0, server_closed_work[p.server] - p.in_flight * p.batch_s) / c);
        latency += p.up_s + wait_window + wq + p.batch_s + p.down_s;
        bottleneck = std::max({bottleneck, p.up_xfer_s, p.per_request_s});
      }
      p.latency_s = latency;
      if (!update_rates) continue;
      double target = p.in_flight > 0 ? std::min(p.in_flight / latency, bottleneck > 0 ? 1 / bottleneck : 1e12) : p.rate;
      p.lambda = p.lambda == 0 ? target : (1 - kDamping) * p.lambda + kDamping * target;
    }
    // A saturated server cannot serve more than its workers: scale its paths down. (Each server's
    // load summed over its paths in path order, as a loop per server would.)
    std::fill(saturation_load.begin(), saturation_load.end(), 0.0);
    for (const auto& p : paths)
      if (p.to_server) saturation_load[p.server] += p.lambda * p.per_request_s;
    for (auto& p : paths) {
      if (!p.to_server) continue;
      const double load = saturation_load[p.server];
      const double cap = 0.999 * std::max(1, state.servers[p.server].workers);
      if (load > cap) p.lambda *= cap / load;
    }
  };
  // 60 damped rounds at most; a round that leaves every rate bit for bit as it was has reached the fixed
  // point exactly (a round is a function of the rates alone), so the rounds left would change nothing.
  std::vector<double> rates_before(paths.size());
  for (int it = 0; it < 60; ++it) {
    for (size_t i = 0; i < paths.size(); ++i) rates_before[i] = paths[i].lambda;
    evaluate(true);
    bool unchanged = true;
    for (size_t i = 0; i < paths.size() && unchanged; ++i) unchanged = paths[i].lambda == rates_before[i];
    if (unchanged) break;
  }
  evaluate(false);

  Prediction out;
  out.devices.resize(devs.size());
  for (size_t i = 0; i < devs.size(); ++i) out.devices[i].id = devs[i]->id;
  std::vector<double> weighted_latency(devs.size(), 0);
  for (const auto& p : paths) {
    auto& d = out.devices[p.device];
    d.throughput_rps += p.lambda;
    if (p.to_server) d.server_rps += p.lambda;
    weighted_latency[p.device] += p.lambda * p.latency_s;
  }
  double total_weighted = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    auto& d = out.devices[i];
    d.latency_s = d.throughput_rps > 0 ? weighted_latency[i] / d.throughput_rps : 0;
    out.throughput_rps += d.throughput_rps;
    total_weighted += weighted_latency[i];
  }
  out.mean_latency_s = out.throughput_rps > 0 ? total_weighted / out.throughput_rps : 0;
  for (const auto& d : out.devices) out.mean_device_latency_s += d.latency_s / out.devices.size();
  std::fill(saturation_load.begin(), saturation_load.end(), 0.0);
  for (const auto& p : paths)
    if (p.to_server) saturation_load[p.server] += p.lambda * p.per_request_s;
  for (size_t j = 0; j < state.servers.size(); ++j)
    out.server_utilisation[state.servers[j].id] = saturation_load[j] / std::max(1, state.servers[j].workers);
  return out;
}

double AnalyticEstimator::score(const SystemState& state, const Scheme& scheme) const {
  return predict(state, scheme).throughput_rps;
}

Objective parse_objective(const std::string& text) {
  if (text == "throughput") return Objective::throughput;
  if (text == "latency") return Objective::latency;
  throw std::invalid_argument("objective '" + text + "' is not allowed (allowed: throughput, latency)");
}

double AnalyticEstimator::compare(const SystemState& state, const Scheme& a, const Scheme& b) const {
  const Prediction pa = predict_cached(state, a), pb = predict_cached(state, b);
  const double scale = std::max({pa.throughput_rps, pb.throughput_rps, 1e-12});
  const double by_throughput = (pa.throughput_rps - pb.throughput_rps) / scale;
  const double by_latency =
      pa.mean_device_latency_s > 0 && pb.mean_device_latency_s > 0 ? pb.mean_device_latency_s / pa.mean_device_latency_s - 1 : 0;
  if (objective_ == Objective::throughput) return std::fabs(by_throughput) > 1e-9 ? by_throughput : by_latency;
  return std::fabs(by_latency) > 1e-9 ? by_latency : by_throughput;
}

}  // namespace coinfer
