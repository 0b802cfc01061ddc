#include "sched/analytic_estimator.hpp"
#include "sched/power_near_base.hpp"
#include "sched/queue_tail.hpp"
#include "sched/queue_transient.hpp"

#include "core/text_util.hpp"

#include "core/background_load.hpp"
#include "core/radio_energy.hpp"
#include "core/device_plan.hpp"
#include "core/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include "core/units.hpp"
#include "core/execution_time.hpp"
#include "core/model_key.hpp"

namespace coinfer {

namespace {

// An open-loop queue whose run meets at least this share of its steady mean wait keeps its steady tail
// in the p95 (ServerSolver::device_outcomes).
constexpr double kSettledShare = 0.999;

// One path of a device under one strategy: its traffic through its server, or its local path. Constant
// for a state.
struct PathSpec {
  bool to_server = false;
  int split = 0;  // device runs [0, split)
  int n = 0;
  int server_end = 0;   // its server runs [split, server_end): n, or m under pp(k,m) (a cloud tier)
  double device_s = 0;  // device stages
  // The busiest of the device's processors per request (a device pipelines across its
  // processors): device_s unless a placement spreads the stages.
  double device_bottleneck_s = 0;
  // The device's memory cannot hold one request's device part (its weights and largest working set,
  // core/device_loop.hpp "memory"): every request fails, the path serves nothing.
  bool out_of_memory = false;
  // Its server is down (ServerState::up false, core/server_failures.hpp): the path serves nothing.
  bool server_down = false;
  bool serves_nothing() const { return out_of_memory || server_down; }
  double up_s = 0, down_s = 0;  // transfer incl. latency
  double up_xfer_s = 0;         // bytes / bandwidth only (the radio's busy time)
  // pp(k,m), a cloud tier: the tensor at m on the WAN (bytes / the slower of the edge's and the cloud's
  // link: the edge's one sender to its cloud is a queue of its own) and the cloud's batch-1 time for
  // [m,n) on one of its `cloud_workers`; both also in down_s. 0 without a cloud part.
  double wan_xfer_s = 0, cloud_s = 0;
  int cloud_workers = 1;
  double cloud_link_s = 0;  // the tensor at m on the cloud's own link alone (which every edge of that cloud crosses)
  // Its upload and its result on its server's own link alone (bytes / that link's rate; 0 for a local
  // path): as a cloud's own device, its uploads share the cloud's inbound link with the edges' tensors
  // to it; as an edge's device, its results share the edge's outbound link with its tensors to the cloud.
  double server_link_up_s = 0, server_link_down_s = 0;
  double energy_j = 0;  // the device's energy above idle per request: its compute and its (flat) radio
  // A radio with power states (core/radio_energy.hpp): bytes each way and seconds on the radio per
  // request (its energy depends on the device's rate: DeviceOutcome).
  double radio_up_bytes = 0, radio_down_bytes = 0, radio_active_s = 0;
  int in_flight = 1;  // closed loop; 0 = open loop
  double rate = 0;    // open loop
  // An open-loop data_parallel device (both its paths; 0 otherwise): its whole arrival rate, which the
  // two sides share as core/data_parallel_router.hpp routes it (dp_server_rate, not by `rate`); the
  // device side's seconds per input; whether an input finding both sides free goes to the server.
  double dp_rate = 0, dp_local_s = 0;
  bool dp_prefers_server = false;
  // The most requests it can have at its server at once: in_flight, or 1 for an open-loop
  // data_parallel server side (it holds one input at a time); 0: no bound (an open loop).
  int population() const { return in_flight > 0 ? in_flight : dp_rate > 0 && to_server ? 1 : 0; }
  const LutTable* server_lut = nullptr;
  int batch_key = -1;  // (model run, dataset, split): paths at one server with one key batch together
  // Server seconds of [split, server_end) at batch k (index k), asked of the LUT once each (NaN: not yet).
  mutable std::vector<double> batch_time;

  double batch_time_at(int k) const {
    if (batch_time.size() <= static_cast<size_t>(k)) batch_time.resize(static_cast<size_t>(k) + 1, std::nan(""));
    double& t = batch_time[static_cast<size_t>(k)];
    if (std::isnan(t)) t = lut_mean_time().seconds(*server_lut, split, server_end, k);
    return t;
  }
  // Server seconds for a batch of (possibly fractional) size b: linear between the integer entries.
  double batch_seconds(double b) const {
    b = std::clamp(b, 1.0, static_cast<double>(server_lut->max_batch()));
    const int lo = static_cast<int>(std::floor(b));
    const int hi = std::min(lo + 1, server_lut->max_batch());
    const double f = b - lo;
    const double a = batch_time_at(lo);
    return f > 0 ? a + f * (batch_time_at(hi) - a) : a;
  }
};

// A device under one strategy: one path, or two for data_parallel (whole on the device, whole on the
// server).
struct DeviceOption {
  Strategy strategy;
  int num_paths = 1;
  PathSpec path[2];
};

// Devices identical in every input of a prediction (type, model, dataset, server, link, loop) share a
// class: under one strategy they have the very same paths.
struct DeviceClass {
  const DeviceState* first = nullptr;  // a device of the class (its inputs)
  int server = -1;                     // index in the state's servers; -1: unknown (an error when asked)
  std::vector<DeviceOption> options;   // each strategy asked about, resolved once
};

// What one server's solution gives each of its devices.
struct DeviceOutcome {
  double throughput_rps = 0, server_rps = 0;
  double weighted_latency = 0;  // sum over its paths of rate x latency
  // Open-loop paths: the rate offered, and what of it no bottleneck can serve (a queue that grows).
  double offered_rps = 0, unserved_rps = 0;
  int serves_nothing = 0;  // 1: a path of it serves nothing (PathSpec::serves_nothing: out of memory, or its server down)
  double idle_w = 0;       // its power when idle (the board's and every processor's)
  double dynamic_w = 0;    // its power above idle: per second, compute and radio energy of what it serves
  // Its radio with power states: requests per second through it, and their rate-weighted sums of
  // bytes up and down and of radio seconds (the radio's power: radio_power_w).
  double radio_rps = 0, radio_up_bytes = 0, radio_down_bytes = 0, radio_active_s = 0;
  // Per path: its rate, the fixed part of its latency and its mean wait (+inf: a queue that grows), for
  // the p95 (PathTail; at most two paths).
  struct Tail {
    double rate = 0, fixed_s = 0, wait_s = 0;  // wait_s: the mean wait over all requests
    double wait_p = 1;                         // the probability of waiting at all (those that wait: wait_s / wait_p on average)
    // theta > 0: the wait is one M/D/1 queue's, P(W > x) = min(wait_p, c exp(-theta x)) (sched/queue_tail.hpp);
    // else the exponential of the mean, wait_p exp(-x wait_p / wait_s)
    double c = 0, theta = 0;
    // theta > 0 and transient_m > 0: that queue starts empty; its tail is the steady one's times
    // transient_tail_ratio(x, transient_m, transient_v, the window) (sched/queue_transient.hpp)
    double transient_m = 0, transient_v = 0;
  };
  Tail tails[2];
  int num_tails = 0;
};

struct ServerSolution {
  std::vector<DeviceOutcome> devices;  // the server's devices, in state order
  double load = 0;                     // busy worker-seconds per second
  double cloud_load = 0;               // its cloud paths' batch-1 seconds per second on its cloud (pp(k,m))
  // What the other servers of a shared cloud see of this one (CloudBackground, outcome_of): as a cloud,
  // its own paths' work before saturation scaled it (worker-seconds per second) and their sum of
  // rate x (seconds per request per worker)^2; as an edge, its cloud paths' work on the cloud before
  // the cloud's saturation scaled it (seconds per second at batch 1), their sum of rate x (seconds per
  // request per cloud worker)^2, and their rate (requests/s).
  double offered_load = 0, own_second = 0;
  double cloud_offered_work = 0, cloud_second = 0, cloud_rate = 0;
  double cloud_link_offered = 0;  // as an edge: its transfers' utilisation of its cloud's link (offered)
  double link_in_used = 0;        // as a cloud: its own devices' uploads' utilisation of its link (served rates)
  // Each flow's rate, by its key (class, option, path), in key order: where a later solution of the
  // server starts from.
  std::vector<std::pair<long long, double>> rates;
};

// The load a server's solve takes from the servers it shares a cloud with: an edge's cloud paths see the
// other edges' cloud paths and the cloud's own devices, and the cloud's devices see the work passed on to
// it (solved apart, each would see none of it). All 0 where nothing is shared: the solve is then a lone
// server's, to the bit.
struct CloudBackground {
  // As an edge: its cloud's utilisation by others (the other edges' cloud paths and the cloud's own
  // devices, offered: before saturation scales them) and their sum of rate x (seconds per request per
  // worker)^2 (the M/G/1 wait's numerator).
  double cloud_rho = 0, cloud_second = 0;
  // As an edge: the cloud's link's utilisation by the other edges' transfers to it (offered), which
  // shares that link with this edge's (processor sharing, as the WAN's own).
  double wan_rho = 0;
  // As a cloud: the work its edges pass on (worker-seconds per second, offered) and its rate (req/s).
  double forwarded_load = 0, forwarded_rate = 0;

  // Whether any figure moved from `o` by more than `rel` of itself.
  bool moved_from(const CloudBackground& o, double rel) const {
    auto moved = [rel](double a, double b) { return std::fabs(a - b) > rel * std::max(std::fabs(a), std::fabs(b)); };
    return moved(cloud_rho, o.cloud_rho) || moved(cloud_second, o.cloud_second) || moved(wan_rho, o.wan_rho) ||
           moved(forwarded_load, o.forwarded_load) || moved(forwarded_rate, o.forwarded_rate);
  }
  // Each figure moved `step` of the way to `to`'s.
  void move_towards(const CloudBackground& to, double step) {
    auto mix = [step](double& a, double b) { a = (1 - step) * a + step * b; };
    mix(cloud_rho, to.cloud_rho);
    mix(cloud_second, to.cloud_second);
    mix(wan_rho, to.wan_rho);
    mix(forwarded_load, to.forwarded_load);
    mix(forwarded_rate, to.forwarded_rate);
  }
};

// What a scheme gives each device and server (per device in state order; load per server).
struct Outcome {
  std::vector<DeviceOutcome> devices;
  std::vector<double> server_load;
};

// What totals_of sums of one device, in the order it sums them (a compact copy that a search over
// edits keeps per device: summing it gives the same bits as summing the outcomes).
struct DeviceSums {
  double throughput_rps = 0, weighted_latency = 0, offered_rps = 0, unserved_rps = 0;
  int serves_nothing = 0;
  double power_w = 0;          // idle_w + dynamic_w
  double latency_share_s = 0;  // its latency / the number of devices
};
DeviceSums sums_of(const DeviceOutcome& d, size_t num_devices) {
  DeviceSums s;
  s.throughput_rps = d.throughput_rps;
  s.weighted_latency = d.weighted_latency;
  s.offered_rps = d.offered_rps;
  s.unserved_rps = d.unserved_rps;
  s.serves_nothing = d.serves_nothing;
  s.power_w = d.idle_w + d.dynamic_w;
  s.latency_share_s = (d.throughput_rps > 0 ? d.weighted_latency / d.throughput_rps : 0) / num_devices;
  return s;
}

// Identical paths of one server's devices: one unknown rate of its fixed point.
struct Flow {
  const PathSpec* spec;
  long long key;       // (class, option, path)
  int group = -1;      // batch group at this server (index into SolverScratch::groups)
  int population = 0;  // spec->population(), read in every round
  double lambda = 0, latency_s = 0, batch_s = 0, per_request_s = 0, b = 1;
  double wait_s = 0;        // of latency_s, the queueing waits: the random part (the p95's model)
  double wait_p = 0;        // the probability that a request waits at all (Erlang C's at the server, rho on the device)
  double bottleneck_s = 0;  // its slowest stage's seconds per request (1 / the most it can serve)
  double offered = -1;      // open loop: the arrivals it is offered, req/s (< 0: spec->rate)
  double dp_wait_s = -1;    // an open-loop data_parallel server side: the one queue's wait, once added (< 0: not yet)
  double target = 0;        // the round's target rate (what the path would send at the round's latency), req/s
};

// Batch groups of one server: what their paths share in a round (same LUT and split, same arrivals).
struct BatchGroup {
  const PathSpec* spec = nullptr;  // one of its paths
  double rate = 0;                 // requests/s
  // The most requests its closed loops can have at the server at once (their in-flight limits), and
  // whether an open loop sends to it (then no such bound): a batch holds no more than that.
  double population = 0;
  bool open = false;
  double b = 1, batch_s = 0, per_request_s = 0, wait_window = 0;
};

// Working memory of solve_server, kept between solves (a search solves one server thousands of times:
// allocating these each time was a sixth of a decision).
struct SolverScratch {
  std::vector<Flow> flows;            // through the server: the unknowns of the fixed point
  std::vector<Flow> local_flows;      // on their devices alone
  std::vector<int> path_flow;         // per path, in path order: index into flows, or -1 - index into local_flows
  std::vector<int> server_path_flow;  // per path to the server, in path order
  std::vector<int> group_key;         // per batch group: its batch key
  std::vector<BatchGroup> groups;
  // flow_of[class][2 * option + path]: the flow of those paths in the solve under way (as path_flow
  // holds it), or kNoFlow (every entry is kNoFlow between solves). (Until stop 54 "none" was -1, which
  // a local flow's own -1 - index also is below 0: every device's local path got a flow of its own.)
  static constexpr int kNoFlow = std::numeric_limits<int>::min();
  std::vector<std::vector<int>> flow_of;
  std::vector<double> x, g, best;
  // The Anderson mixer's history (AndersonMixer).
  std::vector<double> dg, dr, r, g_prev, r_prev;
  std::string memo_key;  // server_solution's look-up key
};

}  // namespace

// The state's devices resolved for predictions (see the header). Device pointers point into the state
// the cache was made for.
struct AnalyticStateCache {
  SystemState state;                     // what the cache is for (a copy; unused by predict())
  std::vector<const DeviceState*> devs;  // connected, with inputs of their own, in state order
  std::vector<int> class_of;             // per device
  std::vector<DeviceClass> classes;
  std::vector<int> by_id;                     // device indices sorted by id
  std::vector<std::vector<int>> server_devs;  // per server: its devices (indices), in state order
  std::vector<int> cloud_of;                  // per server: the index of its cloud, or -1
  // Whether servers share a cloud (two edges with devices behind one cloud, or a cloud with devices of
  // its own behind an edge with devices): outcome_of then solves them together (CloudBackground).
  bool cloud_coupled = false;
  // Batch keys: (model run, dataset, device split, end of the server's part), each once.
  struct BatchKey {
    std::string model, dataset;
    int split, end;
  };
  std::vector<BatchKey> batch_keys;
  // Solutions per server, keyed by the options of its devices (their indices, as bytes).
  std::vector<std::unordered_map<std::string, ServerSolution>> solved;  // empty in predict()
  std::vector<const ServerSolution*> last_solved;                       // per server: the latest solution (into `solved`), or null
  size_t solved_bytes = 0;
  // best_of_edits' latest base and its devices' options: a search asks with one base for a whole round
  // (resolving it again took 6 % of a hierarchical decision's instructions).
  Scheme base;
  std::vector<int> base_option;
  bool has_base = false;
  // best_of_edits on servers that share no cloud (edit_totals): each server's solution for the base,
  // found when an edit first leaves that server as the base has it (a pointer into `solved`, known
  // while memo_clears is unchanged), the devices' outcomes under the base, and the buffers an edit is
  // evaluated in (equal to the base's wherever the edit does not reach, between evaluations).
  std::vector<const ServerSolution*> base_solved;  // per server; null: not known
  size_t base_solved_clears = 0;                   // memo_clears when base_solved was last known
  std::vector<DeviceOutcome> base_devices, edit_devices;
  std::vector<DeviceSums> base_sums, edit_sums;  // of base_devices and edit_devices
  std::vector<int> edit_option;
  std::vector<int> edited;          // device indices an edit names
  std::vector<char> server_edited;  // per server: an edited device is its
  size_t memo_clears = 0;           // how often `solved` was emptied (its pointers then dangle)
  SolverScratch scratch;
  SolverScratch* solver = &scratch;  // what solve_server works in (predict(): the thread's own)
  double horizon_s = 60;             // SystemState::horizon_s (60 s when the state does not say)
  // The requests whose waits the prediction gives: those created in [window_from_s, window_to_s] of
  // the run, its device queues empty at its start (time 0): from max(warm-up, now) to the end
  // (SystemState::time_s + warmup_left_s, time_s + horizon_s; to +inf: the steady state, where the
  // state gives no horizon). A decision late in a run sees queues that have had the whole run to fill,
  // never emptied ones. sched/queue_transient.hpp.
  double window_from_s = 0, window_to_s = std::numeric_limits<double>::infinity();
  double other_idle_w = 0;  // idle power of the connected devices that create no inputs (helpers)
  bool need_p95 = false;    // totals compute the p95 (a max_p95_ms constraint is set)
  Outcome outcome;          // of the latest candidate (buffers reused)
};

namespace {

std::string bits_of(double x) { return std::string(reinterpret_cast<const char*>(&x), sizeof x); }
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Devices identical in every input of a prediction (DeviceClass).
bool same_inputs(const DeviceState& a, const DeviceState& b) {
  return a.type == b.type && a.model == b.model && a.dataset == b.dataset && a.server == b.server &&
         same_bits(a.link_bandwidth_mbps, b.link_bandwidth_mbps) && same_bits(a.link_latency_ms, b.link_latency_ms) &&
         same_bits(a.arrival_rate_per_s, b.arrival_rate_per_s) && a.in_flight == b.in_flight && same_bits(a.idle_w, b.idle_w) &&
         same_bits(a.busy_w, b.busy_w) && same_bits(a.radio_j_per_mb, b.radio_j_per_mb) && a.radio == b.radio &&
         a.processor_idle_w == b.processor_idle_w && a.processor_busy_w == b.processor_busy_w && same_bits(a.load, b.load);
}

// Devices and servers of `state` (pointers into it) with nothing resolved yet. Few servers and device
// classes are looked up by a linear search, more through hash maps.
void prepare(AnalyticStateCache& c, const SystemState& state) {
  constexpr size_t kLinear = 8;
  c.horizon_s = state.horizon_s > 0 ? state.horizon_s : 60;
  const double now = std::max(0.0, state.time_s);
  c.window_to_s = state.horizon_s > 0 ? now + state.horizon_s : std::numeric_limits<double>::infinity();
  c.window_from_s = now + std::max(0.0, state.warmup_left_s);
  c.other_idle_w = 0;
  for (const auto& d : state.devices)
    if (d.connected && !d.generates) {
      c.other_idle_w += d.idle_w;
      for (double w : d.processor_idle_w) c.other_idle_w += w;
      if (d.radio.stated()) c.other_idle_w += d.radio.idle_w;
    }
  std::unordered_map<std::string, int> server_index, class_index;
  size_t taking_part = 0;
  for (const auto& d : state.devices) taking_part += d.connected && d.generates;
  const bool hash_servers = state.servers.size() > kLinear && taking_part > kLinear;  // else a map costs more than it saves
  if (hash_servers)
    for (size_t j = 0; j < state.servers.size(); ++j) server_index.emplace(state.servers[j].id, static_cast<int>(j));
  auto server_of = [&](const std::string& id) {
    if (hash_servers) {
      auto it = server_index.find(id);
      return it == server_index.end() ? -1 : it->second;
    }
    for (size_t j = 0; j < state.servers.size(); ++j)
      if (state.servers[j].id == id) return static_cast<int>(j);
    return -1;
  };
  auto class_key = [](const DeviceState& d) {
    return d.type + '\0' + d.model + '\0' + d.dataset + '\0' + d.server + '\0' + bits_of(d.link_bandwidth_mbps) + bits_of(d.link_latency_ms) +
           bits_of(d.arrival_rate_per_s) + std::to_string(d.in_flight) + bits_of(d.load) + bits_of(d.idle_w) + bits_of(d.busy_w) +
           bits_of(d.radio_j_per_mb) + d.radio.name + '\0' + bits_of(d.radio.base_w) + bits_of(d.radio.up_w_per_mbps) +
           bits_of(d.radio.down_w_per_mbps) + bits_of(d.radio.tail_w) + bits_of(d.radio.tail_s) + bits_of(d.radio.idle_w) +
           bits_of(d.radio.promotion_w) + bits_of(d.radio.promotion_s) + std::to_string(d.processor_idle_w.size()) +
           (d.processor_idle_w.empty()
                ? std::string()
                : std::string(reinterpret_cast<const char*>(d.processor_idle_w.data()), d.processor_idle_w.size() * sizeof(double)) +
                      std::string(reinterpret_cast<const char*>(d.processor_busy_w.data()), d.processor_busy_w.size() * sizeof(double)));
  };
  c.server_devs.assign(state.servers.size(), {});
  for (const auto& d : state.devices) {
    if (!d.connected || !d.generates) continue;
    const int di = static_cast<int>(c.devs.size());
    c.devs.push_back(&d);
    int cls = -1;
    if (c.classes.size() <= kLinear) {
      for (size_t k = 0; k < c.classes.size() && cls < 0; ++k)
        if (same_inputs(*c.classes[k].first, d)) cls = static_cast<int>(k);
      if (cls < 0 && c.classes.size() == kLinear)  // from here on through the map
        for (size_t k = 0; k < c.classes.size(); ++k) class_index.emplace(class_key(*c.classes[k].first), static_cast<int>(k));
    } else if (auto it = class_index.find(class_key(d)); it != class_index.end()) {
      cls = it->second;
    }
    if (cls < 0) {
      cls = static_cast<int>(c.classes.size());
      c.classes.push_back(DeviceClass{&d, server_of(d.server), {}});
      if (c.classes.size() > kLinear) class_index.emplace(class_key(d), cls);
    }
    c.class_of.push_back(cls);
    const int server = c.classes[static_cast<size_t>(cls)].server;
    if (server >= 0) c.server_devs[static_cast<size_t>(server)].push_back(di);
  }
  c.cloud_of.assign(state.servers.size(), -1);
  c.cloud_coupled = false;
  std::vector<int> edges_with_devices(state.servers.size(), 0);
  for (size_t j = 0; j < state.servers.size(); ++j) {
    if (state.servers[j].cloud.empty()) continue;
    c.cloud_of[j] = server_of(state.servers[j].cloud);
    if (c.cloud_of[j] >= 0 && !c.server_devs[j].empty()) ++edges_with_devices[static_cast<size_t>(c.cloud_of[j])];
  }
  for (size_t k = 0; k < state.servers.size(); ++k)
    if (edges_with_devices[k] >= 2 || (edges_with_devices[k] == 1 && !c.server_devs[k].empty())) c.cloud_coupled = true;
  c.by_id.resize(c.devs.size());
  for (size_t i = 0; i < c.devs.size(); ++i) c.by_id[i] = static_cast<int>(i);
  std::sort(c.by_id.begin(), c.by_id.end(), [&](int a, int b) { return c.devs[static_cast<size_t>(a)]->id < c.devs[static_cast<size_t>(b)]->id; });
}

}  // namespace

const ModelSpec& AnalyticEstimator::model(const std::string& m, const std::string& d) const {
  auto it = models_.find(ModelKey{m, d});
  if (it == models_.end()) throw std::invalid_argument("estimator has no model spec for " + m + "/" + d);
  return it->second;
}

AnalyticEstimator::AnalyticEstimator(const LutSet& luts, ModelSpecs models, Objective objective, Constraints constraints)
    : luts_(luts), models_(std::move(models)), objective_(objective), constraints_(constraints) {}

std::vector<std::string> Constraints::missed(const Prediction& p) const {
  std::vector<std::string> out;
  auto ms = [](double s) { return format_double(std::round(s * 1e4) / 10); };
  if (std::isfinite(max_p95_s) && p.p95_latency_s > max_p95_s) out.push_back("p95 " + ms(p.p95_latency_s) + " ms > " + ms(max_p95_s) + " ms");
  if (min_throughput_rps > 0 && p.throughput_rps < min_throughput_rps)
    out.push_back("throughput " + format_double(std::round(p.throughput_rps * 100) / 100) + " req/s < " + format_double(min_throughput_rps) +
                  " req/s");
  if (std::isfinite(max_energy_j) && p.energy_per_inference_j > max_energy_j)
    out.push_back("energy " + format_double(std::round(p.energy_per_inference_j * 1e6) / 1e6) + " J per inference > " + format_double(max_energy_j) +
                  " J");
  return out;
}
AnalyticEstimator::~AnalyticEstimator() = default;

namespace {

// The paths of a device of class `cls` under `st` (the formulas of sched/README.md).
DeviceOption resolve_option(const AnalyticEstimator& est, const SystemState& state, AnalyticStateCache& c, const DeviceClass& cls,
                            const Strategy& st) {
  const DeviceState& d = *cls.first;
  const std::string run_model = model_under(d.model, st);  // the variant the strategy runs
  const ModelSpec& m = est.model(run_model, d.dataset);
  const int n = m.num_stages();
  const LutTable& dev_lut = est.luts().table(d.lut_key(run_model));
  if (cls.server < 0) throw std::invalid_argument("device " + d.id + " names unknown server " + d.server);
  const ServerState& sv = state.servers[static_cast<size_t>(cls.server)];
  const LutTable& srv_lut = est.luts().table({sv.type, run_model, d.dataset});
  const double bw = mbps_to_bytes_per_s(std::min({d.link_bandwidth_mbps, state.access_point_mbps, sv.link_bandwidth_mbps}));
  const double lat = (d.link_latency_ms + state.access_point_latency_ms + sv.link_latency_ms) * 1e-3;
  const int closed_in_flight = d.in_flight > 0 ? d.in_flight : default_in_flight(st);
  auto make = [&](int split, bool to_server, int in_flight) {
    PathSpec p;
    p.split = split;
    p.to_server = to_server;
    p.n = n;
    p.server_end = st.server_end(n);
    p.device_s = lut_mean_time().seconds(dev_lut, 0, split, 1);
    p.device_bottleneck_s = p.device_s;
    if (!st.placement.empty() && split > 0) {  // data_parallel: its device path (split n) as placed
      // core/device_plan.hpp: the segments' expected times on their processors' tables
      const DeviceHardware hw = d.hardware ? *d.hardware : single_processor_hardware(d.processor, 0);
      const DevicePlan plan = make_device_plan(st, n, hw, d.id);
      if (!plan.invalid.empty()) throw std::invalid_argument(plan.invalid);
      const std::vector<const LutTable*> tables = processor_tables(est.luts(), d.lut_key(run_model), &dev_lut, hw);
      for (const DeviceSegment& g : plan.segments)
        for (const int q : {g.proc, g.with})
          if (q >= 0 && tables[static_cast<size_t>(q)] == nullptr)
            throw std::invalid_argument("device " + d.id + ": no LUT for " + d.lut_key(run_model, hw.processors[static_cast<size_t>(q)]).to_string());
      p.device_s = 0;
      for (size_t j = 0; j < plan.segments.size(); ++j) p.device_s += segment_seconds(plan, j, split, m, hw, tables, lut_mean_time(), -1);
      const std::vector<double> busy = processor_seconds(plan, split, m, hw, tables, lut_mean_time());
      p.device_bottleneck_s = *std::max_element(busy.begin(), busy.end());
      if (!d.processor_busy_w.empty())  // each processor's busy seconds at its own power (core/device_energy.hpp)
        for (size_t q = 0; q < busy.size() && q < d.processor_busy_w.size(); ++q)
          p.energy_j += busy[q] * (d.processor_busy_w[q] - d.processor_idle_w[q]);
    }
    if (d.load > 0) {  // background load (core/background_load.hpp): every device stage takes 1 / (1 - load) as long
      const double slow = load_slowdown(d.load);
      p.device_s *= slow;
      p.device_bottleneck_s *= slow;
      p.energy_j *= slow;
    }
    if (p.energy_j == 0 && p.device_s > 0) {
      if (d.processor_busy_w.empty()) {
        p.energy_j = p.device_s * (d.busy_w - d.idle_w);
      } else {  // every stage on its default processor
        const DeviceHardware hw = d.hardware ? *d.hardware : single_processor_hardware(d.processor, 0);
        const int q = std::max(0, hw.slot(d.processor));
        if (static_cast<size_t>(q) < d.processor_busy_w.size()) p.energy_j = p.device_s * (d.processor_busy_w[q] - d.processor_idle_w[q]);
      }
    }
    if (split > 0 && d.hardware) {
      double capacity = 0;  // the smallest memory it computes in (one memory on the shipped boards)
      for (double cap : d.hardware->pool_capacity_bytes)
        if (cap > 0) capacity = capacity > 0 ? std::min(capacity, cap) : cap;
      p.out_of_memory = capacity > 0 && m.peak_memory_bytes(0, split) > capacity;
    }
    p.in_flight = d.arrival_rate_per_s > 0 ? 0 : in_flight;
    p.rate = d.arrival_rate_per_s;
    if (to_server) {
      p.server_down = !sv.up;
      p.energy_j += (m.bytes_at_split(split) + m.bytes_at_split(n)) * d.radio_j_per_mb * 1e-6;
      p.radio_up_bytes = m.bytes_at_split(split);
      p.radio_down_bytes = m.bytes_at_split(n);
      p.radio_active_s = (p.radio_up_bytes + p.radio_down_bytes) / bw;
      p.up_xfer_s = m.bytes_at_split(split) / bw;
      p.up_s = lat + p.up_xfer_s;
      p.down_s = lat + m.bytes_at_split(n) / bw;
      p.server_link_up_s = m.bytes_at_split(split) / mbps_to_bytes_per_s(sv.link_bandwidth_mbps);
      p.server_link_down_s = m.bytes_at_split(n) / mbps_to_bytes_per_s(sv.link_bandwidth_mbps);
      p.server_lut = &srv_lut;
      if (p.server_end < n) {
        // pp(k,m), a cloud tier (sched/README.md "Cloud tier"): after its edge batch, the tensor at m
        // crosses the edge's link and the cloud's (WAN), the cloud runs [m,n) at batch 1 (its queue in
        // the rounds), and the result comes back over the cloud's link, the access point and the
        // device's link.
        int ci = -1;
        for (size_t j = 0; j < state.servers.size(); ++j)
          if (state.servers[j].id == sv.cloud) ci = static_cast<int>(j);
        if (ci < 0) throw std::invalid_argument("device " + d.id + ": " + st.to_string() + " needs a cloud, and server " + sv.id + " has none");
        const ServerState& cloud = state.servers[static_cast<size_t>(ci)];
        const LutTable& cloud_lut = est.luts().table({cloud.type, run_model, d.dataset});
        const double wan_bw = mbps_to_bytes_per_s(std::min(sv.link_bandwidth_mbps, cloud.link_bandwidth_mbps));
        const double wan_lat = (sv.link_latency_ms + cloud.link_latency_ms) * 1e-3;
        const double back_bw = mbps_to_bytes_per_s(std::min({d.link_bandwidth_mbps, state.access_point_mbps, cloud.link_bandwidth_mbps}));
        const double back_lat = (d.link_latency_ms + state.access_point_latency_ms + cloud.link_latency_ms) * 1e-3;
        p.wan_xfer_s = m.bytes_at_split(p.server_end) / wan_bw;
        p.cloud_link_s = m.bytes_at_split(p.server_end) / mbps_to_bytes_per_s(cloud.link_bandwidth_mbps);
        p.cloud_s = lut_mean_time().seconds(cloud_lut, p.server_end, n, 1);
        p.cloud_workers = std::max(1, cloud.workers);
        p.down_s = wan_lat + p.wan_xfer_s + p.cloud_s + back_lat + m.bytes_at_split(n) / back_bw;
        p.server_down = p.server_down || !cloud.up;
      }
      auto& keys = c.batch_keys;
      auto k = std::find_if(keys.begin(), keys.end(), [&](const AnalyticStateCache::BatchKey& b) {
        return b.split == split && b.end == p.server_end && b.model == run_model && b.dataset == d.dataset;
      });
      p.batch_key = static_cast<int>(k - keys.begin());
      if (k == keys.end()) keys.push_back({run_model, d.dataset, split, p.server_end});
    }
    return p;
  };
  DeviceOption o;
  o.strategy = st;
  if (st.kind == Strategy::Kind::data_parallel) {
    // Two independent paths, one input each: whole on the device, whole on the server.
    PathSpec local = make(n, false, 1), remote = make(0, true, 1);
    if (d.arrival_rate_per_s > 0 && !sv.up) {  // its server down: every input stays on the device (core/device_loop.hpp)
      local.rate = d.arrival_rate_per_s;
      remote.rate = 0;
    } else if (d.arrival_rate_per_s > 0) {
      // Open loop: the router's split (dp_server_rate, in the server's rounds). `rate` keeps the split in
      // proportion to the path speeds for what does not go through the rounds.
      double tl = local.device_s, tr = remote.up_s + remote.down_s + lut_mean_time().seconds(srv_lut, 0, n, 1);
      local.rate = d.arrival_rate_per_s * tr / (tl + tr);
      remote.rate = d.arrival_rate_per_s * tl / (tl + tr);
      for (PathSpec* p : {&local, &remote}) {
        p->dp_rate = d.arrival_rate_per_s;
        p->dp_local_s = tl;
        p->dp_prefers_server = tr < tl;  // the router's rule, at the state's bandwidth (ties: the device)
      }
    }
    o.num_paths = 2;
    o.path[0] = local;
    o.path[1] = remote;
  } else {
    const int k = st.device_split(n);
    o.path[0] = make(k, k < n, closed_in_flight);
  }
  return o;
}

// Device i's option index for strategy `st`, resolved when not seen before for its class.
int option_index(const AnalyticEstimator& est, const SystemState& state, AnalyticStateCache& c, size_t i, const Strategy& st) {
  DeviceClass& cls = c.classes[static_cast<size_t>(c.class_of[i])];
  size_t k = 0;
  while (k < cls.options.size() && !(cls.options[k].strategy == st)) ++k;
  if (k == cls.options.size()) {
    DeviceOption o = resolve_option(est, state, c, cls, st);
    cls.options.push_back(std::move(o));
  }
  return static_cast<int>(k);
}

// Each device's option index under `scheme` (its own strategy where the scheme names none), resolving
// strategies not seen before; in state order, so the first error is the first device's.
std::vector<int> options_of(const AnalyticEstimator& est, const SystemState& state, AnalyticStateCache& c, const Scheme& scheme) {
  std::vector<const Strategy*> st(c.devs.size());
  auto it = scheme.strategies.begin();
  for (int di : c.by_id) {  // the scheme's map and the devices, both in id order
    const DeviceState& d = *c.devs[static_cast<size_t>(di)];
    while (it != scheme.strategies.end() && it->first < d.id) ++it;
    st[static_cast<size_t>(di)] = it != scheme.strategies.end() && it->first == d.id ? &it->second : &d.strategy;
  }
  std::vector<int> out(c.devs.size());
  for (size_t i = 0; i < c.devs.size(); ++i) out[i] = option_index(est, state, c, i, *st[i]);
  return out;
}

// `option` (every device's option index) with the devices the edit names moved to its strategies;
// devices not taking part are passed over (as options_of passes over a scheme's other entries).
// `reached`: where given, the indices of the devices moved are appended (in the edit's order).
void apply_edit(const AnalyticEstimator& est, const SystemState& state, AnalyticStateCache& c, const SchemeEdit& edit, std::vector<int>& option,
                std::vector<int>* reached = nullptr) {
  for (const auto& [id, strategy] : edit.set) {
    auto it =
        std::lower_bound(c.by_id.begin(), c.by_id.end(), id, [&](int di, const std::string& v) { return c.devs[static_cast<size_t>(di)]->id < v; });
    if (it == c.by_id.end() || c.devs[static_cast<size_t>(*it)]->id != id) continue;
    option[static_cast<size_t>(*it)] = option_index(est, state, c, static_cast<size_t>(*it), strategy);
    if (reached) reached->push_back(*it);
  }
}

// Anderson acceleration of a fixed-point iteration x <- G(x) (type II, Walker & Ni 2011): the next
// iterate is G(x) corrected by the combination of the last `depth` steps that best cancels the residual
// r = G(x) - x in least squares (a small ridge keeps the normal equations solvable). Where G is a
// contraction (a lightly loaded server: each rate halves its distance per damped round) it converges in a
// handful of steps instead of one bit per step; where the damped rounds alternate between two states (a
// saturated server, scaled to its capacity in one round and far below it in the next) it finds the point
// between them.
class AndersonMixer {
 public:
  static constexpr size_t kMaxDepth = 4;
  // Its history lives in `scratch` (resized here, contents unused until written).
  AndersonMixer(size_t n, size_t depth, SolverScratch& scratch)
      : n_(n),
        depth_(std::min(depth, kMaxDepth)),
        dg_(scratch.dg),
        dr_(scratch.dr),
        r_(scratch.r),
        g_prev_(scratch.g_prev),
        r_prev_(scratch.r_prev) {}

  // x: the current iterate, g = G(x). Leaves the next iterate in x. When the combination leaves the
  // domain (a rate <= 0 or not finite), x becomes G(x) and the history is dropped.
  void step(std::vector<double>& x, const std::vector<double>& g) {
    if (!sized_) {  // buffers on the first step (most isolated devices converge in two rounds)
      dg_.resize(depth_ * n_);
      dr_.resize(depth_ * n_);
      r_.resize(n_);
      g_prev_.resize(n_);
      r_prev_.resize(n_);
      sized_ = true;
    }
    for (size_t i = 0; i < n_; ++i) r_[i] = g[i] - x[i];
    if (have_prev_) {  // a new column of differences, in the slot of the oldest
      const size_t slot = next_slot_;
      next_slot_ = (next_slot_ + 1) % depth_;
      count_ = std::min(count_ + 1, depth_);
      for (size_t i = 0; i < n_; ++i) {
        dg_[slot * n_ + i] = g[i] - g_prev_[i];
        dr_[slot * n_ + i] = r_[i] - r_prev_[i];
      }
      for (size_t k = 0; k < count_; ++k) gram_[slot * kMaxDepth + k] = gram_[k * kMaxDepth + slot] = dot(&dr_[slot * n_], &dr_[k * n_]);
    }
    std::copy(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(n_), g_prev_.begin());
    std::copy(r_.begin(), r_.begin() + static_cast<std::ptrdiff_t>(n_), r_prev_.begin());
    have_prev_ = true;
    std::copy(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(n_), x.begin());
    if (count_ == 0) return;
    // (dR^T dR + ridge) gamma = dR^T r, by Gaussian elimination with partial pivoting (count_ <= depth).
    const size_t m = count_;
    double a[kMaxDepth * (kMaxDepth + 1)];
    double trace = 0;
    for (size_t k = 0; k < m; ++k) trace += gram_[k * kMaxDepth + k];
    for (size_t k = 0; k < m; ++k) {
      for (size_t q = 0; q < m; ++q) a[k * (m + 1) + q] = gram_[k * kMaxDepth + q] + (k == q ? 1e-10 * trace + 1e-300 : 0);
      a[k * (m + 1) + m] = dot(&dr_[k * n_], r_.data());
    }
    double gamma[kMaxDepth] = {0};
    for (size_t c = 0; c < m; ++c) {
      size_t pivot = c;
      for (size_t q = c + 1; q < m; ++q)
        if (std::fabs(a[q * (m + 1) + c]) > std::fabs(a[pivot * (m + 1) + c])) pivot = q;
      for (size_t k = 0; k <= m; ++k) std::swap(a[c * (m + 1) + k], a[pivot * (m + 1) + k]);
      if (!(std::fabs(a[c * (m + 1) + c]) > 0)) return reset();
      for (size_t q = c + 1; q < m; ++q) {
        const double f = a[q * (m + 1) + c] / a[c * (m + 1) + c];
        for (size_t k = c; k <= m; ++k) a[q * (m + 1) + k] -= f * a[c * (m + 1) + k];
      }
    }
    for (size_t c = m; c-- > 0;) {
      double sum = a[c * (m + 1) + m];
      for (size_t q = c + 1; q < m; ++q) sum -= a[c * (m + 1) + q] * gamma[q];
      gamma[c] = sum / a[c * (m + 1) + c];
    }
    for (size_t i = 0; i < n_; ++i) {
      double v = g[i];
      for (size_t k = 0; k < m; ++k) v -= gamma[k] * dg_[k * n_ + i];
      if (!(v > 0) || !std::isfinite(v)) {
        std::copy(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(n_), x.begin());
        return reset();
      }
      x[i] = v;
    }
  }

 private:
  double dot(const double* a, const double* b) const {
    double s = 0;
    for (size_t i = 0; i < n_; ++i) s += a[i] * b[i];
    return s;
  }
  void reset() {
    count_ = 0;
    next_slot_ = 0;
  }
  size_t n_, depth_;
  // Differences of G(x) and of r between successive steps (depth x n, by slot); r = G(x) - x; the
  // previous step's G(x) and r.
  std::vector<double>&dg_, &dr_, &r_, &g_prev_, &r_prev_;
  double gram_[kMaxDepth * kMaxDepth] = {0};
  bool sized_ = false, have_prev_ = false;
  size_t count_ = 0, next_slot_ = 0;
};

// An open-loop data_parallel device (core/data_parallel_router.hpp): inputs arrive at `rate` a second and
// each side holds one input at a time, the server side for its whole round trip (`server_s`, its
// waits included), the device side `device_s`. An input that finds both sides free goes to the
// preferred one, one free side takes it, and one that finds both busy waits for whichever frees first.
// With u_a, u_b the two sides' utilisations (rate x time, taken as independent), the preferred side a
// takes the arrivals that find it free, R (1 - u_a), and of those that find both busy, R u_a u_b, the
// share of its speed c_a / (c_a + c_b); b takes the rest: at light load nearly every input goes to
// the preferred side, at heavy load each side serves in proportion to its speed. Solved for a's rate
// by bisection to the last bit (g(x) - x falls from R at 0); each side at most 99.9 % of its capacity
// (what neither can serve is the device's unserved rate). Returns the server side's rate. (Until stop 54 the arrivals
// were split in proportion to the sides' speeds without waits, whatever the load: 16 Pi 4B at 3 req/s
// on one i7-7700 edge were predicted to send it 42.7 req/s and leave 18.1 unserved, a mean latency of
// 9.8 s, where the simulated router sends what the edge cannot take to the devices: 424 ms.)
double dp_server_rate(double rate, double server_s, double device_s, bool prefers_server) {
  const double ta = std::max(1e-12, prefers_server ? server_s : device_s), tb = std::max(1e-12, prefers_server ? device_s : server_s);
  const double share = tb / (ta + tb);  // c_a / (c_a + c_b)
  auto g = [&](double la) {
    const double ua = std::min(la * ta, 0.999), ub = std::clamp((rate - la) * tb, 0.0, 0.999);
    return rate * ((1 - ua) + ua * ub * share);
  };
  double lo = 0, hi = std::min(rate, 0.999 / ta);
  if (g(hi) < hi)
    for (int it = 0; it < 200; ++it) {  // to the last bit (about 60 steps)
      const double mid = (lo + hi) / 2;
      if (mid <= lo || mid >= hi) break;
      (g(mid) > mid ? lo : hi) = mid;
    }
  else
    lo = hi;  // the preferred side is full
  const double la = lo, lb = std::min(std::max(0.0, rate - la), 0.999 / tb);
  return prefers_server ? la : lb;
}

// The fixed point of one server: rates -> batch sizes and server utilisation -> latencies -> rates,
// over the paths of its devices (a server's paths depend on each other and on nothing else). Paths of
// one device class under one option are identical in every round, so each such set is computed once
// and counted once per path in the sums, in path order (the very same sums as path by path).
// One solve of one server (solve_server): its flows, their rounds to the fixed point, and what the
// devices and the server get from it, each a step below. Works in c.solver's memory (SolverScratch);
// every reference must outlive it. Advances no simulated time.
class ServerSolver {
 public:
  // `bg`: the load from the servers it shares a cloud with (all 0: a lone server's solve).
  ServerSolver(const ServerState& sv, AnalyticStateCache& c, const std::vector<int>& devices, const std::vector<int>& option,
               const CloudBackground& bg)
      : sv(sv),
        c(c),
        devices(devices),
        option(option),
        bg(bg),
        sc(*c.solver),
        flows(sc.flows),
        local_flows(sc.local_flows),
        path_flow(sc.path_flow),
        server_path_flow(sc.server_path_flow),
        group_key(sc.group_key),
        groups(sc.groups),
        best(sc.best),
        workers(std::max(1, sv.workers)),
        w(sv.batch_window_ms * 1e-3),
        batching(w > 0 && sv.batch_max_size > 1),
        others_power(std::sqrt(2 * (workers + 1)) - 1),
        inv_workers(1 / workers),
        cap(0.999 * std::max(1, sv.workers)),
        shared(bg.cloud_rho > 0 || bg.cloud_second > 0 || bg.wan_rho > 0 || bg.forwarded_load > 0 || bg.forwarded_rate > 0) {}

  // `start`: a solution of the server to start from (null: from zero); `keep_rates`: fill ServerSolution::rates.
  ServerSolution solve(const ServerSolution* start, bool keep_rates) {
    collect_flows();
    solve_local_flows();
    prepare_groups();
    fixed_point(start);
    data_parallel_local_sides();
    ServerSolution out = device_outcomes();
    server_figures(out, keep_rates);
    return out;
  }

 private:
  // What a round sums over the paths through the server: busy worker-seconds per second, batches per
  // second; what closed loops can have queued here at most (their in-flight requests' batch times), and
  // how many open loops (no such bound) send here.
  struct ServerSums {
    double server_load = 0, server_batch_rate = 0, server_closed_work = 0;
    int server_open_paths = 0;
  };
  // A cloud tier's utilisation of the WAN and of the cloud's workers, and the cloud's sum of rate x
  // (seconds per request per worker)^2.
  struct CloudSums {
    double wan_rho = 0, cloud_rho = 0, cloud_second = 0;
  };

  // A path's target rate at a latency and bottleneck.
  static double target_rate(const PathSpec& p, double latency, double bottleneck) {
    // Open loop: what arrives, up to what the path's bottleneck can serve (the rate
    // offered whatever the capacity had a Pi 4B at 241.5 ms predicted to do 100 req/s).
    if (p.in_flight <= 0) return bottleneck > 0 ? std::min(p.rate, 1 / bottleneck) : p.rate;
    // min(in_flight / latency, 1 / bottleneck) with one division
    if (bottleneck > 0) return p.in_flight * bottleneck < latency ? p.in_flight / latency : 1 / bottleneck;
    return std::min(p.in_flight / latency, 1e12);
  }
  // An open-loop path also queues at its own device (and radio) in front of each stage: M/D/1's mean
  // wait rho s / (2 (1 - rho)) at utilisation rho = lambda s (LUT means: deterministic service). A
  // closed loop with one request in flight never queues there. At or past saturation the wait is the
  // queue's growth, added once the rates are known.
  static double open_wait(const PathSpec& p, double lambda, double service_s) {
    if (p.in_flight > 0 || service_s <= 0) return 0.0;
    const double rho = lambda * service_s;
    return rho < 0.999 ? rho * service_s / (2 * (1 - rho)) : 0.0;
  }

  // The server's paths as flows (identical paths of a class under one option: one flow), its local paths
  // apart, and each path's flow in path order.
  void collect_flows() {
    flows.clear();
    local_flows.clear();
    path_flow.clear();
    server_path_flow.clear();
    group_key.clear();
    if (sc.flow_of.size() < c.classes.size()) sc.flow_of.resize(c.classes.size());
    for (int di : devices) {
      const int cls = c.class_of[static_cast<size_t>(di)];
      const int opt = option[static_cast<size_t>(di)];
      const DeviceOption& o = c.classes[static_cast<size_t>(cls)].options[static_cast<size_t>(opt)];
      std::vector<int>& slots = sc.flow_of[static_cast<size_t>(cls)];
      if (slots.size() < 2 * c.classes[static_cast<size_t>(cls)].options.size())
        slots.resize(2 * c.classes[static_cast<size_t>(cls)].options.size(), SolverScratch::kNoFlow);
      for (int j = 0; j < o.num_paths; ++j) {
        int& fi = slots[static_cast<size_t>(2 * opt + j)];
        if (fi == SolverScratch::kNoFlow) {
          const long long key = (static_cast<long long>(cls) << 32) | (static_cast<long long>(opt) << 1) | j;
          Flow f{&o.path[j], key};
          f.population = f.spec->population();
          if (f.spec->to_server) {
            fi = static_cast<int>(flows.size());
            auto g = std::find(group_key.begin(), group_key.end(), f.spec->batch_key);
            f.group = static_cast<int>(g - group_key.begin());
            if (g == group_key.end()) group_key.push_back(f.spec->batch_key);
            flows.push_back(f);
          } else {
            fi = -1 - static_cast<int>(local_flows.size());
            local_flows.push_back(f);
          }
        }
        path_flow.push_back(fi);
        if (o.path[j].to_server) server_path_flow.push_back(fi);
      }
    }
    for (const std::vector<Flow>* v : {&flows, &local_flows})  // every slot back to kNoFlow for the next solve
      for (const Flow& f : *v) sc.flow_of[static_cast<size_t>(f.key >> 32)][static_cast<size_t>(f.key & 0xffffffff)] = SolverScratch::kNoFlow;
  }

  // A path that stays on its device depends on nothing else: its rate and latency once. (It takes no
  // part in the rounds: a third of the paths of bench_decisions' systems.)
  void solve_local_flows() {
    for (Flow& f : local_flows) {
      f.lambda = f.spec->serves_nothing() ? 0 : target_rate(*f.spec, f.spec->device_s, f.spec->device_bottleneck_s);
      f.wait_s = open_wait(*f.spec, f.lambda, f.spec->device_s);
      f.wait_p = f.wait_s > 0 ? std::min(1.0, f.lambda * f.spec->device_s) : 0;
      f.latency_s = f.spec->device_s + f.wait_s;
      f.bottleneck_s = f.spec->device_bottleneck_s;
    }
  }

  // The batch groups of the flows through the server.
  void prepare_groups() {
    // Whether any path here has a cloud part (pp(k,m)): the rounds' cloud terms only then.
    cloud_paths = std::any_of(flows.begin(), flows.end(), [](const Flow& f) { return f.spec->cloud_s > 0 || f.spec->wan_xfer_s > 0; });
    groups.assign(group_key.size(), BatchGroup{});
    for (const Flow& f : flows)
      if (f.group >= 0 && !groups[static_cast<size_t>(f.group)].spec) groups[static_cast<size_t>(f.group)].spec = f.spec;
  }

  // One round: rates -> batch sizes and server utilisation -> latencies -> (update_rates) damped rates,
  // scaled to the server's capacity.
  void round(bool update_rates) {
    batch_groups();
    path_latencies(update_rates, server_sums(), cloud_sums());
    scale_to_capacity(update_rates);
  }

  void batch_groups() {
    for (BatchGroup& g : groups) g.rate = g.population = 0, g.open = false;
    for (int fi : server_path_flow) {
      const Flow& f = flows[static_cast<size_t>(fi)];
      BatchGroup& g = groups[static_cast<size_t>(f.group)];
      g.rate += f.lambda;
      if (f.population > 0)
        g.population += f.population;
      else
        g.open = true;
    }
    for (BatchGroup& g : groups) {
      const double L = g.rate;
      // A batch fills from the group's arrivals within the window, but closed loops cannot send more
      // than their in-flight requests: one device with one request in flight always batches alone
      // (its next request starts after this one's result), whatever its rate.
      const double largest = g.open ? sv.batch_max_size : std::min<double>(sv.batch_max_size, std::max(1.0, g.population));
      g.b = 1;
      if (batching) g.b = std::clamp(1 + L * w, 1.0, largest);
      g.batch_s = g.spec->batch_seconds(g.b);
      g.per_request_s = g.batch_s / g.b;
      // Window wait: the first request of a batch waits the whole window (or until the batch fills),
      // later ones on average half of it.
      g.wait_window = 0;
      if (batching) {
        const double fill = L > 0 ? (sv.batch_max_size - 1) / L : w;
        const double close = std::min(w, fill);
        const double b = std::clamp(1 + L * close, 1.0, largest);
        g.wait_window = close * (1 + (b - 1) / 2) / b;
      }
    }
    for (Flow& f : flows) {
      const BatchGroup& g = groups[static_cast<size_t>(f.group)];
      f.b = g.b;
      f.batch_s = g.batch_s;
      f.per_request_s = g.per_request_s;
    }
  }

  ServerSums server_sums() const {
    // busy worker-seconds per second, batches per second; what closed loops can have queued here at
    // most (their in-flight requests' batch times), and whether an open loop (no such bound) sends here.
    ServerSums s;
    for (int fi : server_path_flow) {
      const Flow& f = flows[static_cast<size_t>(fi)];
      s.server_load += f.lambda * f.per_request_s;
      s.server_batch_rate += f.lambda / f.b;
      if (f.population > 0)
        s.server_closed_work += f.population * f.batch_s;
      else
        ++s.server_open_paths;
    }
    // As a cloud: the work its edges pass on queues with its own, an open stream of batch-1 requests
    // as this server sees it (CloudBackground; 0 where nothing is passed on).
    s.server_load += bg.forwarded_load;
    s.server_batch_rate += bg.forwarded_rate;
    if (bg.forwarded_rate > 0) ++s.server_open_paths;
    return s;
  }

  CloudSums cloud_sums() const {
    // A cloud tier (pp(k,m)): the WAN to its cloud and the cloud's workers, as this server's cloud paths
    // load them (the cloud's other load is not seen here). The WAN shares its rate among the transfers
    // on it (processor sharing: a transfer of s seconds alone takes s / (1 - rho)); the cloud is a queue
    // (M/G/1's mean wait sum(lambda c^2) / (2 (1 - rho)), c its batch-1 time per worker). Past saturation
    // the paths are scaled down below (sched/README.md "Cloud tier").
    CloudSums k;
    double &wan_rho = k.wan_rho, &cloud_rho = k.cloud_rho, &cloud_second = k.cloud_second;
    if (cloud_paths)
      for (int fi : server_path_flow) {
        const Flow& f = flows[static_cast<size_t>(fi)];
        if (f.spec->cloud_s <= 0 && f.spec->wan_xfer_s <= 0) {  // its result leaves on the link the tensors to the cloud take
          wan_rho += f.lambda * f.spec->server_link_down_s;
          continue;
        }
        const double c = f.spec->cloud_s / f.spec->cloud_workers;
        wan_rho += f.lambda * f.spec->wan_xfer_s;
        cloud_rho += f.lambda * c;
        cloud_second += f.lambda * c * c;
      }
    // ... and as the other servers sharing the cloud load it and its link (CloudBackground; 0 where
    // none does).
    cloud_rho += bg.cloud_rho;
    cloud_second += bg.cloud_second;
    wan_rho += bg.wan_rho;
    return k;
  }

  // Each flow's latency, bottleneck and waits at the round's rates, and (update_rates) its next rate.
  void path_latencies(bool update_rates, const ServerSums& s, const CloudSums& k) {
    const double server_load = s.server_load, server_batch_rate = s.server_batch_rate, server_closed_work = s.server_closed_work;
    const int server_open_paths = s.server_open_paths;
    const double wan_rho = k.wan_rho, cloud_rho = k.cloud_rho, cloud_second = k.cloud_second;
    // The wait of one path's request: beside the others' transfers and behind their batches, and its
    // own device's only in an open loop (a closed loop's next request starts after this one's result).
    auto cloud_tier_wait = [&](const Flow& f) {
      const PathSpec& p = *f.spec;
      double wr = wan_rho, cs = cloud_second;
      if (p.in_flight > 0) {
        const double c = p.cloud_s / p.cloud_workers;
        wr = std::max(0.0, wr - f.lambda * p.wan_xfer_s);
        cs = std::max(0.0, cs - f.lambda * c * c);
      }
      // The transfers already on the WAN (ServerState::to_cloud, the backlog a snapshot sees): a new one
      // shares the rate with each for about half its own time (each has half of it left on average).
      const double backlog = 0.5 * sv.to_cloud * p.wan_xfer_s;
      return backlog + (wan_rho < 0.999 ? p.wan_xfer_s * wr / (1 - wr) : 0) + (cloud_rho < 0.999 ? cs / (2 * (1 - cloud_rho)) : 0);
    };
    others_power.set_base(server_load * inv_workers);
    for (Flow& f : flows) {  // each through the server
      const PathSpec& p = *f.spec;
      double latency = p.device_s;
      double bottleneck = p.device_bottleneck_s;
      {
        const double wait_window = groups[static_cast<size_t>(f.group)].wait_window;
        // Queueing behind the other devices' work (a request never waits behind its own device's
        // previous one in a closed loop): M/M/c waiting time (Sakasegawa) at the others' utilisation,
        // in units of the others' mean batch time: what is queued ahead is their work, not this path's
        // (scaling by this path's own batch time had a light gcode split predicted at 3.3x its
        // simulated throughput beside two DGCNN offloaders).
        const double own_load = f.lambda * f.per_request_s;
        const double own_batches = f.per_request_s > 0 ? f.lambda / f.b : 0;  // per_request_s = batch_s / b
        const double others_load = std::max(0.0, server_load - own_load);
        const double others_batches = server_batch_rate - own_batches;
        const double others_batch_s = others_batches > 1e-12 ? others_load / others_batches : 0;
        const double rho_others = std::clamp(others_load * inv_workers, 0.0, 0.999);
        const double rho_power = rho_others > 0 ? others_power(rho_others) : 0;
        double wq = rho_power / (workers * (1 - rho_others)) * others_batch_s;
        // Closed loops are finite populations: no more than their in-flight requests can be ahead (the
        // open M/M/c formula diverges as the others saturate the server; measured: 0.27 req/s predicted
        // for a device simulated at 19.6). Open-loop senders have no such bound.
        const int others_open = server_open_paths - (f.population > 0 ? 0 : 1);
        if (others_open == 0) wq = std::min(wq, std::max(0.0, server_closed_work - f.population * f.batch_s) * inv_workers);
        // (A data_parallel side holds one input at a time: its inputs wait in the device's one queue
        // for either side, after the rounds, not in front of its radio.)
        // The device's computation and its radio are two FIFO servers in tandem with fixed service times:
        // every request leaves them when it would leave the slower one alone (Friedman 1965), so their
        // waits are one M/D/1 queue's at the longer of the two times, not the sum of two.
        const double device_waits = p.dp_rate > 0 ? 0 : open_wait(p, f.lambda, std::max(p.device_s, p.up_xfer_s));
        const double cloud_waits = cloud_paths && (p.cloud_s > 0 || p.wan_xfer_s > 0) ? cloud_tier_wait(f) : 0;
        latency += p.up_s + wait_window + wq + f.batch_s + p.down_s + device_waits + cloud_waits;
        // The tail's waits: the server queue's (rho^e approximates Erlang C's probability of waiting, the
        // same term as in wq) and the device's own queues (probability rho); the window's wait is taken
        // as fixed (each request's share of it depends on the arrival pattern, not on chance alone).
        f.wait_s = wq + device_waits + cloud_waits;
        // A closed loop is not a Poisson stream: held behind the others' batch, it sends at most its
        // population into it, so of its requests only others_batches x min(population / lambda,
        // others_batch_s) a second wait, not the share of time the server is busy: a fast device beside
        // another's long batches meets each of them with one request (its population), then sends nothing
        // until it ends. The mean wait stays; fewer requests share it.
        double p_server = std::clamp(rho_power, 0.0, 1.0);
        if (f.population > 0) {
          const double met = f.lambda * others_batch_s;  // its requests sent in one of the others' batches
          if (met > f.population) p_server *= f.population / met;
        }
        double p_none = wq > 0 ? 1 - p_server : 1;
        if (device_waits > 0) p_none *= 1 - std::min(1.0, f.lambda * std::max(p.device_s, p.up_xfer_s));
        f.wait_p = 1 - p_none;
        bottleneck = std::max({bottleneck, p.up_xfer_s, f.per_request_s});
      }
      f.latency_s = latency;
      f.bottleneck_s = bottleneck;
      if (!update_rates) continue;
      const double target = p.serves_nothing() ? 0
                            : p.dp_rate > 0    ? dp_server_rate(p.dp_rate, latency, p.dp_local_s, p.dp_prefers_server)
                                               : target_rate(p, latency, bottleneck);
      f.target = target;
      f.lambda = f.lambda == 0 ? target : (1 - damping) * f.lambda + damping * target;
    }
  }

  void scale_to_capacity(bool update_rates) {
    // A saturated server cannot serve more than its workers: scale its paths down.
    double load = 0;
    for (int fi : server_path_flow) load += flows[static_cast<size_t>(fi)].lambda * flows[static_cast<size_t>(fi)].per_request_s;
    round_offered_load = load;
    round_offered_cloud = round_offered_link = 0;
    if (!shared) {
      if (load > cap)
        for (Flow& f : flows) f.lambda *= cap / load;
    } else {
      // Shared with the work its edges pass on (as a cloud): its paths get cap x (their offer) / (their
      // offer + the edges'), the offers at the round's targets (damped rates would shrink their share:
      // the damping must not move the fixed point). The final round (no update) keeps the rates.
      if (!update_rates) return;
      double target_load = 0;
      for (int fi : server_path_flow) target_load += flows[static_cast<size_t>(fi)].target * flows[static_cast<size_t>(fi)].per_request_s;
      round_offered_load = target_load;
      if (target_load + bg.forwarded_load > cap && load > 0)
        for (Flow& f : flows) f.lambda *= cap * target_load / (target_load + bg.forwarded_load) / load;
    }
    // ... nor its WAN more than its rate, nor the cloud more than its workers.
    if (!cloud_paths) return;
    double wan = 0, cloud_work = 0;
    for (int fi : server_path_flow) {
      const Flow& f = flows[static_cast<size_t>(fi)];
      wan += f.lambda * f.spec->wan_xfer_s;
      cloud_work += f.lambda * f.spec->cloud_s / f.spec->cloud_workers;
    }
    if (!shared) {
      const double over = std::max(wan, cloud_work);
      if (over > 0.999)
        for (Flow& f : flows)
          if (f.spec->cloud_s > 0 || f.spec->wan_xfer_s > 0) f.lambda *= 0.999 / over;
      return;
    }
    // Shared with the other edges of its cloud (and the cloud's own devices): of the WAN and of the
    // cloud, its cloud paths get 0.999 x (their offer) / (their offer + the others'), the offers at the
    // round's targets after this server's own share above.
    const double own_share = round_offered_load + bg.forwarded_load > cap ? cap / (round_offered_load + bg.forwarded_load) : 1;
    double t_wan = 0, t_cloud = 0;
    for (int fi : server_path_flow) {
      const Flow& f = flows[static_cast<size_t>(fi)];
      const double t = f.target * own_share;
      t_wan += t * f.spec->wan_xfer_s;
      t_cloud += t * f.spec->cloud_s / f.spec->cloud_workers;
      round_offered_cloud += t * f.spec->cloud_s;
      round_offered_link += t * f.spec->cloud_link_s;
    }
    double scale = 1;
    if (t_wan + bg.wan_rho > 0.999 && wan > 0) scale = std::min(scale, 0.999 * t_wan / (t_wan + bg.wan_rho) / wan);
    if (t_cloud + bg.cloud_rho > 0.999 && cloud_work > 0) scale = std::min(scale, 0.999 * t_cloud / (t_cloud + bg.cloud_rho) / cloud_work);
    if (scale < 1)
      for (Flow& f : flows)
        if (f.spec->cloud_s > 0 || f.spec->wan_xfer_s > 0) f.lambda *= scale;
  }

  // The fixed point of the round (a round is a function of the rates alone), Anderson-accelerated from
  // zero until a round moves no rate by more than kTolerance of itself: undamped rounds (at most 100),
  // then, from where that left off, rounds of damping 1/10 (at most 400 more: a saturated server whose
  // rates swing too far in a round). Should neither get there, the rates of the round that moved them
  // least (damped rounds alone, 60 of them, could end anywhere in a
  // swing: a saturated server alternating between its capacity and far below it). The damping does not
  // move the fixed point: unsaturated, rate = target; saturated, the rates are the targets scaled to the
  // capacity whatever the damping (rate = s((1 - d) rate + d target) with s < 1 makes rate parallel to
  // target). Undamped, the accelerated rounds need ~30 % fewer (measured on bench_decisions' systems).
  void fixed_point(const ServerSolution* start) {
    constexpr size_t kDepth = 3;
    constexpr double kTolerance = 1e-13;
    const size_t F = flows.size();
    std::vector<double>&x = sc.x, &g = sc.g;
    x.assign(F, 0.0);
    g.assign(F, 0.0);
    best.assign(F, 0.0);
    if (start) {  // flows the start had keep their rates (a search changes a few devices at a time)
      for (size_t i = 0; i < F; ++i) {
        auto it = std::lower_bound(start->rates.begin(), start->rates.end(), std::make_pair(flows[i].key, -std::numeric_limits<double>::infinity()));
        if (it != start->rates.end() && it->first == flows[i].key) {
          x[i] = it->second;
        } else {  // a device moved to another option: from the rate its class had there
          const long long cls_first = flows[i].key >> 32 << 32;
          auto same = std::lower_bound(start->rates.begin(), start->rates.end(), std::make_pair(cls_first, -std::numeric_limits<double>::infinity()));
          if (same != start->rates.end() && same->first >> 32 == flows[i].key >> 32) x[i] = same->second;
        }
      }
    }
    double best_change = std::numeric_limits<double>::infinity();
    bool started = start && std::any_of(x.begin(), x.end(), [](double v) { return v != 0; });
    bool converged = false;  // the latest round moved no rate by more than kTolerance
    auto accelerated = [&](double d, int rounds) {
      damping = d;
      AndersonMixer mixer(F, kDepth, sc);
      for (int it = 0; it < rounds; ++it) {
        const bool from_zero = !started;  // every rate still 0: no start and no round yet
        started = true;
        for (size_t i = 0; i < F; ++i) flows[i].lambda = x[i];
        round(true);
        converged = false;
        double change = 0;
        for (size_t i = 0; i < F; ++i) {
          g[i] = flows[i].lambda;
          change = std::max(change, std::fabs(g[i] - x[i]) / std::fabs(g[i]));
        }
        if (change < best_change) {
          best_change = change;
          best = g;
          best_offered_load = round_offered_load;
          best_offered_cloud = round_offered_cloud;
          best_offered_link = round_offered_link;
        }
        if (change <= kTolerance) return converged = true;
        if (from_zero)
          x = g;  // a plain round from zero (most isolated devices end on the next)
        else
          mixer.step(x, g);
      }
      return false;
    };
    if (!accelerated(1.0, 100) && !accelerated(0.1, 400) && start) {
      // From the start it did not get there (seen once in the differential test's 80 systems, an open-loop
      // data_parallel device whose split moved with the server's waits: its least-moving round 1.3e-4 off
      // the fixed point): from zero, as a solve without a start.
      x.assign(F, 0.0);
      best_change = std::numeric_limits<double>::infinity();
      started = false;
      if (!accelerated(1.0, 100)) accelerated(0.1, 400);
    }
    // The latencies at the rates found: a round at them, unless the last round converged (its latencies,
    // at rates within kTolerance of these, are kept: the round at the fixed point would only repeat it to
    // the last bits; 7 % of a hierarchical decision's instructions at 100 devices).
    if (!converged) {
      for (size_t i = 0; i < F; ++i) flows[i].lambda = best[i];
      round(false);
    }
  }

  // Open-loop data_parallel: the device side takes what the server side does not (dp_server_rate), up
  // to its capacity; the rest is unserved. The server side is offered what it serves. An input that
  // finds both sides busy (probability u_a u_b) waits for the first to free: the two sides as one queue
  // with their speeds added, mean wait u_a u_b / (2 (c_a + c_b - R)) (M/M/c's, the sides' speeds as its
  // servers', halved for hold times that do not vary), on both sides' latencies. A side's hold time:
  // the device's computation, the server side's round trip (its server queue's wait included).
  void data_parallel_local_sides() {
    for (Flow& f : local_flows) {
      const PathSpec& p = *f.spec;
      if (!(p.dp_rate > 0)) continue;
      Flow* server_side = nullptr;
      for (Flow& r : flows)
        if (r.key == (f.key | 1)) server_side = &r;
      const double server_rate = server_side ? server_side->lambda : 0;
      if (server_side) server_side->offered = server_rate;
      f.offered = std::max(0.0, p.dp_rate - server_rate);
      f.lambda = p.serves_nothing() ? 0 : (p.device_bottleneck_s > 0 ? std::min(f.offered, 1 / p.device_bottleneck_s) : f.offered);
      const double hold_server = !server_side ? 0 : server_side->latency_s - std::max(0.0, server_side->dp_wait_s);
      const double ua = std::min(server_rate * hold_server, 0.999), ub = std::min(f.lambda * p.device_s, 0.999);
      const double spare = (hold_server > 0 ? 1 / hold_server : 0) + (p.device_s > 0 ? 1 / p.device_s : 0) - server_rate - f.lambda;
      const double both_busy = ua * ub;
      // (M/M/c's wait halved: deterministic hold times, Allen-Cunneen's (c_a^2 + c_s^2) / 2 with c_s = 0.)
      const double wait =
          f.lambda < f.offered * (1 - 1e-9) || !(spare > 0) ? 0 : both_busy / spare / 2;  // saturated: the unserved rate's growth instead
      f.wait_s = wait;
      f.wait_p = wait > 0 ? both_busy : 0;
      f.latency_s = p.device_s + wait;
      if (server_side && server_side->dp_wait_s < 0) {  // once (the devices of a class share their flows)
        server_side->dp_wait_s = wait;
        server_side->latency_s += wait;
        server_side->wait_s += wait;
        server_side->wait_p = 1 - (1 - server_side->wait_p) * (1 - both_busy);
      }
    }
  }

  // Each device's figures from its paths' flows.
  ServerSolution device_outcomes() const {
    ServerSolution out;
    out.devices.resize(devices.size());
    size_t path = 0;
    for (size_t k = 0; k < devices.size(); ++k) {
      const int di = devices[k];
      const DeviceOption& o =
          c.classes[static_cast<size_t>(c.class_of[static_cast<size_t>(di)])].options[static_cast<size_t>(option[static_cast<size_t>(di)])];
      for (int j = 0; j < o.num_paths; ++j, ++path) {
        const int fi = path_flow[path];
        const Flow& f = fi >= 0 ? flows[static_cast<size_t>(fi)] : local_flows[static_cast<size_t>(-1 - fi)];
        DeviceOutcome& d = out.devices[k];
        if (j == 0) {
          const DeviceState& ds = *c.devs[static_cast<size_t>(di)];
          d.idle_w = ds.idle_w;
          for (double w : ds.processor_idle_w) d.idle_w += w;
        }
        if (f.spec->serves_nothing()) d.serves_nothing = 1;
        d.throughput_rps += f.lambda;
        d.dynamic_w += f.lambda * f.spec->energy_j;
        if (f.spec->to_server) {
          d.radio_rps += f.lambda;
          d.radio_up_bytes += f.lambda * f.spec->radio_up_bytes;
          d.radio_down_bytes += f.lambda * f.spec->radio_down_bytes;
          d.radio_active_s += f.lambda * f.spec->radio_active_s;
        }
        if (j + 1 == o.num_paths) {
          const RadioStates& radio = c.devs[static_cast<size_t>(di)]->radio;
          if (radio.stated()) {
            // core/radio_energy.hpp: per request, with its transfers (an upload and a result) evenly
            // spaced over the device's cycle through the server; idle all along without one.
            if (d.radio_rps > 0)
              d.dynamic_w += d.radio_rps * radio_energy_per_inference(radio, 1 / d.radio_rps, d.radio_active_s / d.radio_rps,
                                                                      d.radio_up_bytes / d.radio_rps, d.radio_down_bytes / d.radio_rps, 2);
            else
              d.idle_w += radio.idle_w;
          }
        }
        if (f.spec->to_server) d.server_rps += f.lambda;
        // A closed loop whose bottleneck binds after its first stage keeps in_flight requests in its
        // pipeline, so each spends in_flight / rate (Little's law) in all: the time beyond its own path
        // waits for its siblings at the bottleneck, the same for every request (the tail's fixed part
        // too). Where the first stage itself binds (the device's computation for local and pp(k), the
        // upload for offload) nothing waits: a closed loop creates an input only once that stage is free
        // (core/arrival_process.hpp), so it is never full and each request takes its own path's time
        // (Little's law then gives fewer than in_flight in the loop, not a longer latency).
        const double first_stage_s = f.spec->split > 0 ? f.spec->device_s : f.spec->up_xfer_s;
        const double sibling_wait = f.spec->in_flight > 0 && f.lambda > 0 && first_stage_s < f.bottleneck_s * (1 - 1e-9)
                                        ? std::max(0.0, f.spec->in_flight / f.lambda - f.latency_s)
                                        : 0.0;
        double latency = f.latency_s + sibling_wait;
        double wait = f.wait_s;
        if (f.spec->in_flight <= 0) {
          // Open loop beyond its bottleneck: the queue grows by (offered - served) a second for the
          // rest of the run, so a request arriving t s from now waits (offered / served - 1) t more;
          // over the horizon H that is (offered / served - 1) H / 2 on average.
          const double offered = f.offered >= 0 ? f.offered : f.spec->rate;
          d.offered_rps += offered;
          if (f.lambda < offered * (1 - 1e-9)) {
            d.unserved_rps += offered - f.lambda;
            latency += (f.lambda > 0 ? offered / f.lambda - 1 : 1e9) * c.horizon_s / 2;
            wait = std::numeric_limits<double>::infinity();  // a queue that grows: no tail to speak of
          }
        }
        // The tail: the fixed part, then the waits (p95_of).
        const double fixed = f.latency_s - f.wait_s + sibling_wait;
        DeviceOutcome::Tail tail{f.lambda, fixed, wait, f.wait_p};
        if (f.spec->in_flight <= 0 && !(f.spec->dp_rate > 0) && std::isfinite(wait) && wait > 0) {
          // An open loop's M/D/1 queue on its device (its computation and its radio in tandem: one queue at
          // the longer time, above) starts empty: over a run its requests meet transient_mean_ratio of its
          // steady wait (sched/queue_transient.hpp; the queue's drift 1 - rho, its variance lambda s^2 =
          // rho s a second).
          const double sq = f.spec->to_server ? std::max(f.spec->device_s, f.spec->up_xfer_s) : f.spec->device_s;
          const double wq = open_wait(*f.spec, f.lambda, sq), rq = f.lambda * sq;
          const double share = wq > 0 ? transient_mean_ratio(1 - rq, rq * sq, c.window_from_s, c.window_to_s) : 1;
          latency -= wq * (1 - share);
          tail.wait_s -= wq * (1 - share);
          // Where its whole wait is there (none at the server): that queue's own tail, not the exponential
          // of the mean (sched/queue_tail.hpp), with its transient (transient_m, transient_v) where the run
          // meets less than 99.9 % of the steady wait (the tail ratio costs two integrals at every point
          // the p95's bisection tries; a queue that has settled over the run keeps its steady tail).
          if (wq > 0 && std::fabs(wait - wq) <= 1e-12 * wait) {
            const WaitTail q = md1_wait_tail(rq, sq);
            if (q.theta > 0) {
              tail.c = q.c;
              tail.theta = q.theta;
              if (share < kSettledShare) {
                tail.transient_m = 1 - rq;
                tail.transient_v = rq * sq;
              }
            }
          }
        }
        d.weighted_latency += f.lambda * latency;
        if (d.num_tails < 2) d.tails[d.num_tails++] = tail;
      }
    }
    return out;
  }

  // The server's own figures (its load, its cloud's share, what others sharing its cloud see) and
  // (keep_rates) each flow's rate for a later solve to start from.
  void server_figures(ServerSolution& out, bool keep_rates) const {
    for (int fi : server_path_flow) {
      const Flow& f = flows[static_cast<size_t>(fi)];
      out.load += f.lambda * f.per_request_s;
      out.cloud_load += f.lambda * f.spec->cloud_s;
      const double s_worker = f.per_request_s / workers;
      out.own_second += f.lambda * s_worker * s_worker;
      if (f.spec->cloud_s > 0 || f.spec->wan_xfer_s > 0) {
        const double c_worker = f.spec->cloud_s / f.spec->cloud_workers;
        out.cloud_second += f.lambda * c_worker * c_worker;
        out.cloud_rate += f.lambda;
      }
      out.link_in_used += f.lambda * f.spec->server_link_up_s;
    }
    out.offered_load = best_offered_load;
    out.cloud_offered_work = best_offered_cloud;
    out.cloud_link_offered = best_offered_link;
    if (keep_rates) {
      out.rates.reserve(flows.size());
      for (size_t i = 0; i < flows.size(); ++i) out.rates.emplace_back(flows[i].key, best[i]);
      std::sort(out.rates.begin(), out.rates.end());
    }
  }

  const ServerState& sv;
  AnalyticStateCache& c;
  const std::vector<int>& devices;
  const std::vector<int>& option;
  const CloudBackground& bg;
  SolverScratch& sc;
  std::vector<Flow>& flows;        // through the server: the unknowns of the fixed point
  std::vector<Flow>& local_flows;  // on their devices alone
  std::vector<int>& path_flow;     // per path, in path order: index into flows, or -1 - index into local_flows
  std::vector<int>& server_path_flow;
  std::vector<int>& group_key;
  std::vector<BatchGroup>& groups;
  std::vector<double>& best;  // the rates of the round that moved them least
  double damping = 1;         // of the rounds: rate <- (1 - damping) rate + damping target
  const double workers;
  const double w;  // the batch window, s
  const bool batching;
  // rho^e of Sakasegawa's wait, e = sqrt(2 (c + 1)) - 1, for utilisations just below the server's
  // total (sched/power_near_base.hpp)
  PowerNearBase others_power;
  const double inv_workers;
  const double cap;
  // Whether it shares a cloud (CloudBackground): saturation is then shared in proportion to the offers.
  const bool shared;
  bool cloud_paths = false;                                                        // whether any path here has a cloud part (prepare_groups)
  double round_offered_load = 0, round_offered_cloud = 0, round_offered_link = 0;  // the round's work before saturation scaled it
  double best_offered_load = 0, best_offered_cloud = 0, best_offered_link = 0;     // of the round that moved the rates least
};

// `start`: a solution of the server to start from (null: from zero); `keep_rates`: fill ServerSolution::rates.
ServerSolution solve_server(const ServerState& sv, AnalyticStateCache& c, const std::vector<int>& devices, const std::vector<int>& option,
                            const ServerSolution* start, bool keep_rates, const CloudBackground& bg) {
  return ServerSolver(sv, c, devices, option, bg).solve(start, keep_rates);
}

// The solution of server j for the devices' options and the load `bg` from the servers it shares a
// cloud with, from the memo when it was solved before (memo false: solve into `scratch`, remember
// nothing).
const ServerSolution& server_solution(const SystemState& state, AnalyticStateCache& c, size_t j, const std::vector<int>& option,
                                      const CloudBackground& bg, ServerSolution& scratch, bool memo, size_t memo_bytes) {
  const std::vector<int>& devices = c.server_devs[j];
  if (!memo) return scratch = solve_server(state.servers[j], c, devices, option, nullptr, false, bg);
  std::string& key = c.scratch.memo_key;  // the options of the server's devices, as bytes (and the shared cloud's load)
  key.resize(devices.size() * sizeof(int) + (c.cloud_coupled ? sizeof bg : 0));
  for (size_t k = 0; k < devices.size(); ++k) std::memcpy(&key[k * sizeof(int)], &option[static_cast<size_t>(devices[k])], sizeof(int));
  if (c.cloud_coupled) std::memcpy(&key[devices.size() * sizeof(int)], &bg, sizeof bg);
  auto& solved = c.solved[j];
  if (auto it = solved.find(key); it != solved.end()) {
    c.last_solved[j] = &it->second;
    return it->second;
  }
  const size_t bytes = key.size() + devices.size() * sizeof(DeviceOutcome) + 96;
  if (c.solved_bytes + bytes > memo_bytes) {
    for (auto& m : c.solved) m.clear();
    ++c.memo_clears;
    std::fill(c.last_solved.begin(), c.last_solved.end(), nullptr);
    c.solved_bytes = 0;
  }
  c.solved_bytes += bytes + devices.size() * 2 * sizeof(std::pair<long long, double>);
  // From the server's latest solution: the incumbent or a sibling candidate, a few devices away.
  ServerSolution s = solve_server(state.servers[j], c, devices, option, c.last_solved[j], true, bg);
  const ServerSolution& stored = solved.emplace(key, std::move(s)).first->second;
  c.last_solved[j] = &stored;
  return stored;
}

// Fills `out` (its buffers reused).
void outcome_of(const SystemState& state, AnalyticStateCache& c, const std::vector<int>& option, bool memo, size_t memo_bytes, Outcome& out) {
  out.devices.resize(c.devs.size());
  out.server_load.assign(state.servers.size(), 0);
  const size_t S = state.servers.size();
  auto take = [&](size_t j, const ServerSolution& s) {
    for (size_t k = 0; k < c.server_devs[j].size(); ++k) out.devices[static_cast<size_t>(c.server_devs[j][k])] = s.devices[k];
    out.server_load[j] += s.load;
    if (s.cloud_load > 0)  // its cloud's share of the work (sched/README.md "Cloud tier")
      for (size_t k = 0; k < S; ++k)
        if (state.servers[k].id == state.servers[j].cloud) out.server_load[k] += s.cloud_load;
  };
  ServerSolution scratch;
  if (!c.cloud_coupled) {
    for (size_t j = 0; j < S; ++j)
      if (!c.server_devs[j].empty()) take(j, server_solution(state, c, j, option, CloudBackground{}, scratch, memo, memo_bytes));
  } else {
    // Servers sharing a cloud, solved together (sched/README.md "Cloud tier"): each server from the
    // others' latest solutions (CloudBackground), in passes until no server's background moves by more
    // than 1e-10 of itself (Jacobi; from the 20th pass each background moves half-way, so two edges
    // saturating their cloud cannot swing; at most 200 passes, then the last).
    // (Each pass's solutions are copied: a later server's solve may empty the memo.)
    std::vector<ServerSolution> own(S);
    std::vector<const ServerSolution*> solution(S, nullptr);
    std::vector<CloudBackground> bg(S), next(S);
    for (int pass = 0; pass < 200; ++pass) {
      for (size_t j = 0; j < S; ++j)
        if (!c.server_devs[j].empty()) {
          own[j] = server_solution(state, c, j, option, bg[j], scratch, memo, memo_bytes);
          solution[j] = &own[j];
        }
      std::fill(next.begin(), next.end(), CloudBackground{});
      for (size_t e = 0; e < S; ++e) {
        const int k = c.cloud_of[e];
        if (k < 0 || !solution[e]) continue;
        const size_t cl = static_cast<size_t>(k);
        const double cloud_workers = std::max(1, state.servers[cl].workers);
        next[cl].forwarded_load += solution[e]->cloud_offered_work;
        next[cl].forwarded_rate += solution[e]->cloud_rate;
        if (!(solution[e]->cloud_rate > 0)) continue;  // no cloud paths: the cloud's load does not matter to it
        if (solution[cl]) {
          next[e].cloud_rho += solution[cl]->offered_load / cloud_workers;
          next[e].cloud_second += solution[cl]->own_second;
          next[e].wan_rho += solution[cl]->link_in_used;  // the cloud's own devices' uploads on its link
        }
        for (size_t o = 0; o < S; ++o)
          if (o != e && c.cloud_of[o] == k && solution[o]) {
            next[e].cloud_rho += solution[o]->cloud_offered_work / cloud_workers;
            next[e].cloud_second += solution[o]->cloud_second;
            next[e].wan_rho += solution[o]->cloud_link_offered;
          }
      }
      bool still = false;
      for (size_t j = 0; j < S; ++j) still = still || next[j].moved_from(bg[j], 1e-10);
      if (!still) break;
      for (size_t j = 0; j < S; ++j) bg[j].move_towards(next[j], pass >= 20 ? 0.5 : 1.0);
    }
    for (size_t j = 0; j < S; ++j)
      if (solution[j]) take(j, *solution[j]);
  }
}

// The system's figures from the devices' outcomes (in state order).
struct Totals {
  double throughput_rps = 0, mean_latency_s = 0, mean_device_latency_s = 0;
  double offered_rps = 0, unserved_rps = 0;                 // open-loop arrivals, and those no bottleneck serves
  int serves_nothing = 0;                                   // devices with a path predicted to serve nothing (out of memory, server down)
  double power_w = 0;                                       // the devices' power: idle, compute and radio
  double energy_per_inference_j = 0;                        // power / throughput (+inf without throughput)
  double p95_s = std::numeric_limits<double>::quiet_NaN();  // NaN: not asked for
};

// The p95 of request latency over every path (sched/README.md "Energy and tail latency"): a path's
// latency is its fixed part plus, with probability p, an exponential wait of mean wait / p (P(W > x) =
// p exp(-x p / wait)); the mixture weighted by the paths' rates is solved for its 95th percentile by
// bisection. +inf when paths whose queue grows carry 5 % or more of the requests.
// Waits with a transient (Tail::transient_m > 0) are those of the requests created in [from_s, to_s].
double p95_of(const std::vector<DeviceOutcome>& devices, double from_s, double to_s) {
  double total = 0, lo = std::numeric_limits<double>::infinity(), hi = 0, growing = 0;
  for (const DeviceOutcome& d : devices)
    for (int i = 0; i < d.num_tails; ++i) {
      const auto& t = d.tails[i];
      if (!(t.rate > 0)) continue;
      total += t.rate;
      if (std::isinf(t.wait_s)) {
        growing += t.rate;
        continue;
      }
      lo = std::min(lo, t.fixed_s);
      if (t.theta > 0)
        hi = std::max(hi, t.fixed_s + (50 + std::log(std::max(1.0, t.c))) / t.theta);
      else
        hi = std::max(hi, t.fixed_s + (t.wait_p > 0 ? t.wait_s / t.wait_p : 0) * 50);  // e^-50: nothing left beyond
    }
  if (!(total > 0)) return 0;
  if (growing >= 0.05 * total) return std::numeric_limits<double>::infinity();
  auto tail = [&](double x) {  // the rate of requests slower than x
    double above = growing;
    for (const DeviceOutcome& d : devices)
      for (int i = 0; i < d.num_tails; ++i) {
        const auto& t = d.tails[i];
        if (!(t.rate > 0) || std::isinf(t.wait_s)) continue;
        if (x < t.fixed_s)
          above += t.rate;
        else if (t.theta > 0)
          above += t.rate * std::min(t.wait_p, t.c * std::exp(-(x - t.fixed_s) * t.theta)) *
                   (t.transient_m > 0 ? transient_tail_ratio(x - t.fixed_s, t.transient_m, t.transient_v, from_s, to_s) : 1);
        else if (t.wait_s > 0 && t.wait_p > 0)
          above += t.rate * t.wait_p * std::exp(-(x - t.fixed_s) * t.wait_p / t.wait_s);
      }
    return above;
  };
  lo = std::max(0.0, lo - 1e-12);
  for (int it = 0; it < 100 && hi - lo > 1e-9 * std::max(1.0, hi); ++it) {
    const double mid = (lo + hi) / 2;
    (tail(mid) > 0.05 * total ? lo : hi) = mid;
  }
  return hi;
}

// The system's figures (all but the p95) from each device's sums, in state order.
template <class SumsOf>
Totals sum_totals(const AnalyticStateCache& c, size_t num_devices, SumsOf sums) {
  Totals t;
  t.power_w = c.other_idle_w;
  double total_weighted = 0;
  for (size_t i = 0; i < num_devices; ++i) {
    const DeviceSums d = sums(i);
    t.throughput_rps += d.throughput_rps;
    total_weighted += d.weighted_latency;
    t.offered_rps += d.offered_rps;
    t.unserved_rps += d.unserved_rps;
    t.serves_nothing += d.serves_nothing;
    t.power_w += d.power_w;
  }
  t.mean_latency_s = t.throughput_rps > 0 ? total_weighted / t.throughput_rps : 0;
  for (size_t i = 0; i < num_devices; ++i) t.mean_device_latency_s += sums(i).latency_share_s;
  t.energy_per_inference_j = t.throughput_rps > 0 ? t.power_w / t.throughput_rps : std::numeric_limits<double>::infinity();
  return t;
}

Totals totals_of(const AnalyticStateCache& c, const std::vector<DeviceOutcome>& devices, bool need_p95) {
  Totals t = sum_totals(c, devices.size(), [&](size_t i) { return sums_of(devices[i], devices.size()); });
  if (need_p95) t.p95_s = p95_of(devices, c.window_from_s, c.window_to_s);
  return t;
}

}  // namespace

Prediction AnalyticEstimator::predict(const SystemState& state, const Scheme& scheme) const { return predict(state, scheme, true); }

Prediction AnalyticEstimator::predict_figures(const SystemState& state, const Scheme& scheme) const { return predict(state, scheme, false); }

Prediction AnalyticEstimator::predict(const SystemState& state, const Scheme& scheme, bool whole) const {
  // A scheme that sets a server's batching or moves a device is predicted on the state it makes.
  if (scheme_alters_state(state, scheme)) return predict(state_under(state, scheme), scheme, whole);
  AnalyticStateCache c;
  // dp and gcode predict thousands of one-device systems a decision: the solver's buffers are kept
  // per thread between predictions.
  thread_local SolverScratch solver;
  c.solver = &solver;
  prepare(c, state);
  Outcome o;
  outcome_of(state, c, options_of(*this, state, c, scheme), false, 0, o);
  const Totals t = totals_of(c, o.devices, whole || std::isfinite(constraints_.max_p95_s));
  Prediction out;
  out.num_devices = static_cast<int>(c.devs.size());
  if (whole) out.devices.resize(c.devs.size());
  for (size_t i = 0; i < out.devices.size(); ++i) {
    auto& d = out.devices[i];
    d.id = c.devs[i]->id;
    d.throughput_rps = o.devices[i].throughput_rps;
    d.server_rps = o.devices[i].server_rps;
    d.latency_s = d.throughput_rps > 0 ? o.devices[i].weighted_latency / d.throughput_rps : 0;
    d.offered_rps = o.devices[i].offered_rps;
    d.unserved_rps = o.devices[i].unserved_rps;
  }
  out.offered_rps = t.offered_rps;
  out.unserved_rps = t.unserved_rps;
  out.throughput_rps = t.throughput_rps;
  out.mean_latency_s = t.mean_latency_s;
  out.mean_device_latency_s = t.mean_device_latency_s;
  out.power_w = t.power_w;
  out.energy_per_inference_j = t.energy_per_inference_j;
  out.p95_latency_s = t.p95_s;
  out.serves_nothing = t.serves_nothing;
  if (whole)
    for (size_t j = 0; j < state.servers.size(); ++j)
      out.server_utilisation[state.servers[j].id] = o.server_load[j] / std::max(1, state.servers[j].workers);
  return out;
}

void AnalyticEstimator::hold_state(const SystemState* state) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  held_ = state;
  held_cached_ = false;
}

void AnalyticEstimator::hold_base(const Scheme* base) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  held_base_ = base;
  held_base_cached_ = false;
}

void AnalyticEstimator::base_edited(const SchemeEdit& edit) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (!held_base_cached_ || !cache_ || !cache_->has_base) return;
  AnalyticStateCache& c = *cache_;
  edit.apply_to(c.base);
  // The devices the edit names take its options; a server of one of them has another base solution
  // (found again when asked: a memo hit on the candidate just applied, as a full comparison would find).
  std::vector<int> reached;
  apply_edit(*this, c.state, c, edit, c.base_option, &reached);
  for (int i : reached) {
    const size_t di = static_cast<size_t>(i);
    c.edit_option[di] = c.base_option[di];
    if (const int j = c.classes[static_cast<size_t>(c.class_of[di])].server; j >= 0 && static_cast<size_t>(j) < c.base_solved.size())
      c.base_solved[static_cast<size_t>(j)] = nullptr;
  }
}

AnalyticStateCache& AnalyticEstimator::cache_for(const SystemState& state) const {
  if (held_cached_ && &state == held_) return *cache_;
  if (!cache_ || !(cache_->state == state)) {
    cache_ = std::make_unique<AnalyticStateCache>();
    held_base_cached_ = false;
    cache_->state = state;
    cache_->need_p95 = std::isfinite(constraints_.max_p95_s);
    prepare(*cache_, cache_->state);
    cache_->solved.resize(state.servers.size());
    cache_->last_solved.assign(state.servers.size(), nullptr);
  }
  held_cached_ = &state == held_;  // (another state's cache replaced the held one's: compare again)
  return *cache_;
}

namespace {
Totals cached_totals(AnalyticStateCache& c, const std::vector<int>& option, size_t memo_bytes) {
  outcome_of(c.state, c, option, true, memo_bytes, c.outcome);
  return totals_of(c, c.outcome.devices, c.need_p95);
}
Totals cached_totals(const AnalyticEstimator& est, AnalyticStateCache& c, const Scheme& scheme, size_t memo_bytes) {
  // A scheme that sets other batching than the cached state has, or moves a device to another server,
  // is solved on its own state, uncached (the batching choice's handful a decision,
  // sched/batching_choice.hpp; the server choice's one per device and server, sched/server_choice.hpp).
  if (scheme_alters_state(c.state, scheme)) {
    const SystemState own = state_under(c.state, scheme);
    AnalyticStateCache oc;
    thread_local SolverScratch solver;
    oc.solver = &solver;
    prepare(oc, own);
    Outcome o;
    outcome_of(own, oc, options_of(est, own, oc, scheme), false, 0, o);
    return totals_of(oc, o.devices, c.need_p95);
  }
  return cached_totals(c, options_of(est, c.state, c, scheme), memo_bytes);
}

// The figures of c.base with `edit` made, on servers that share no cloud: the same figures, bit for
// bit, as cached_totals(c, options with the edit made), in a time that grows with the servers and the
// devices the edit reaches instead of with all devices. cached_totals solves every server in turn (a
// memo hit for each server the edit leaves as it was) and totals every device's outcome; here a server
// the edit leaves as it was contributes the base's outcome, kept from the first time it was solved
// for this base, and takes that solution as its latest (c.last_solved: the next solve of that server
// starts from it, as after cached_totals' memo hit). Servers go in the same order, so every solve
// starts from the same solution. When the memo is emptied, the base's solutions are found again.
Totals edit_totals(const AnalyticEstimator& est, AnalyticStateCache& c, const SchemeEdit& edit, size_t memo_bytes) {
  const size_t n = c.devs.size(), S = c.state.servers.size();
  if (c.edit_devices.size() != n) {  // devices of no server keep their default outcome, as in outcome_of
    c.base_devices.assign(n, DeviceOutcome{});
    c.edit_devices.assign(n, DeviceOutcome{});
    c.base_sums.assign(n, sums_of(DeviceOutcome{}, n));
    c.edit_sums = c.base_sums;
  }
  c.server_edited.assign(S, 0);
  c.edited.clear();
  apply_edit(est, c.state, c, edit, c.edit_option, &c.edited);
  for (int di : c.edited)
    if (const int j = c.classes[static_cast<size_t>(c.class_of[static_cast<size_t>(di)])].server; j >= 0) c.server_edited[static_cast<size_t>(j)] = 1;
  ServerSolution unused;
  for (size_t j = 0; j < S; ++j) {
    const std::vector<int>& devices = c.server_devs[j];
    if (devices.empty()) continue;
    if (c.base_solved_clears != c.memo_clears) {  // the pointers into the memo dangle
      std::fill(c.base_solved.begin(), c.base_solved.end(), nullptr);
      c.base_solved_clears = c.memo_clears;
    }
    if (!c.server_edited[j] && c.base_solved[j]) {
      c.last_solved[j] = c.base_solved[j];
      continue;  // edit_devices holds the base's outcome for its devices
    }
    const ServerSolution& sol = server_solution(c.state, c, j, c.edit_option, CloudBackground{}, unused, true, memo_bytes);
    for (size_t k = 0; k < devices.size(); ++k) {
      const size_t di = static_cast<size_t>(devices[k]);
      c.edit_devices[di] = sol.devices[k];
      c.edit_sums[di] = sums_of(sol.devices[k], n);
    }
    if (!c.server_edited[j]) {                      // the base's solution (the edit's options are the base's here)
      if (c.base_solved_clears != c.memo_clears) {  // emptied before `sol` was stored: only it is known
        std::fill(c.base_solved.begin(), c.base_solved.end(), nullptr);
        c.base_solved_clears = c.memo_clears;
      }
      c.base_solved[j] = &sol;
      for (int di : devices) {
        c.base_devices[static_cast<size_t>(di)] = c.edit_devices[static_cast<size_t>(di)];
        c.base_sums[static_cast<size_t>(di)] = c.edit_sums[static_cast<size_t>(di)];
      }
    }
  }
  Totals t = sum_totals(c, n, [&](size_t i) { return c.edit_sums[i]; });
  if (c.need_p95) t.p95_s = p95_of(c.edit_devices, c.window_from_s, c.window_to_s);
  for (size_t j = 0; j < S; ++j)  // back to the base's outcome where it is known
    if (c.server_edited[j])
      for (int di : c.server_devs[j]) {
        c.edit_devices[static_cast<size_t>(di)] = c.base_devices[static_cast<size_t>(di)];
        c.edit_sums[static_cast<size_t>(di)] = c.base_sums[static_cast<size_t>(di)];
      }
  for (int di : c.edited) c.edit_option[static_cast<size_t>(di)] = c.base_option[static_cast<size_t>(di)];
  return t;
}

// How far `t` is from meeting `k`: the sum of each constraint's relative excess (0: all met).
double violation(const Constraints& k, const Totals& t) {
  double v = 0;
  if (std::isfinite(k.max_p95_s) && !std::isnan(t.p95_s) && t.p95_s > k.max_p95_s) v += std::min(1e6, t.p95_s / k.max_p95_s - 1);
  if (k.min_throughput_rps > 0 && t.throughput_rps < k.min_throughput_rps) v += 1 - t.throughput_rps / k.min_throughput_rps;
  if (std::isfinite(k.max_energy_j) && t.energy_per_inference_j > k.max_energy_j) v += std::min(1e6, t.energy_per_inference_j / k.max_energy_j - 1);
  return v;
}

// > 0 when a is better (AnalyticEstimator::compare). First, whatever the objective: fewer devices out
// of memory or sending to a failed server, fewer open-loop arrivals left unserved (a scheme predicted to saturate a device loses to
// one that does not), then less violation of the constraints; then the objective.
double compare_totals(Objective objective, const Constraints& k, const Totals& pa, const Totals& pb) {
  // Before anything: fewer devices that run out of memory or send to a failed server (a scheme that
  // fits and reaches a live server beats one whose requests fail).
  if (pa.serves_nothing != pb.serves_nothing) return pb.serves_nothing - pa.serves_nothing;
  const double offered = std::max({pa.offered_rps, pb.offered_rps, 1e-12});
  const double by_unserved = (pb.unserved_rps - pa.unserved_rps) / offered;
  if (std::fabs(by_unserved) > 1e-6) return by_unserved;
  if (k.any()) {
    const double by_constraints = violation(k, pb) - violation(k, pa);
    if (std::fabs(by_constraints) > 1e-9) return by_constraints;
  }
  const double scale = std::max({pa.throughput_rps, pb.throughput_rps, 1e-12});
  const double by_throughput = (pa.throughput_rps - pb.throughput_rps) / scale;
  const double by_latency =
      pa.mean_device_latency_s > 0 && pb.mean_device_latency_s > 0 ? pb.mean_device_latency_s / pa.mean_device_latency_s - 1 : 0;
  if (objective == Objective::energy) {
    const double ea = pa.energy_per_inference_j, eb = pb.energy_per_inference_j;
    const double by_energy =
        std::isfinite(ea) && std::isfinite(eb) && ea > 0 ? eb / ea - 1 : (std::isfinite(ea) == std::isfinite(eb) ? 0 : (std::isfinite(ea) ? 1 : -1));
    return std::fabs(by_energy) > 1e-9 ? by_energy : by_throughput;
  }
  if (objective == Objective::throughput) return std::fabs(by_throughput) > 1e-9 ? by_throughput : by_latency;
  return std::fabs(by_latency) > 1e-9 ? by_latency : by_throughput;
}
}  // namespace

double AnalyticEstimator::score(const SystemState& state, const Scheme& scheme) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return cached_totals(*this, cache_for(state), scheme, kMemoBytes).throughput_rps;
}

Objective parse_objective(const std::string& text) {
  if (text == "throughput") return Objective::throughput;
  if (text == "latency") return Objective::latency;
  if (text == "energy") return Objective::energy;
  throw std::invalid_argument("objective '" + text + "' is not allowed (allowed: throughput, latency, energy)");
}

double AnalyticEstimator::compare_predictions(const Prediction& a, const Prediction& b) const {
  auto totals = [](const Prediction& p) {
    Totals t;
    t.throughput_rps = p.throughput_rps;
    t.mean_latency_s = p.mean_latency_s;
    t.mean_device_latency_s = p.mean_device_latency_s;
    t.offered_rps = p.offered_rps;
    t.unserved_rps = p.unserved_rps;
    t.serves_nothing = p.serves_nothing;
    t.power_w = p.power_w;
    t.energy_per_inference_j = p.energy_per_inference_j;
    t.p95_s = p.p95_latency_s;
    return t;
  };
  return compare_totals(objective_, constraints_, totals(a), totals(b));
}

double AnalyticEstimator::compare(const SystemState& state, const Scheme& a, const Scheme& b) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  AnalyticStateCache& c = cache_for(state);
  return compare_totals(objective_, constraints_, cached_totals(*this, c, a, kMemoBytes), cached_totals(*this, c, b, kMemoBytes));
}

namespace {
// Estimator::best_of's walk over n candidates: the index of the last one predicted better than the best
// so far (the incumbent to start with), or -1. totals_of(i): candidate i's figures, of the incumbent for
// i = -1 (asked only when there are candidates).
template <class TotalsOf>
int walk_candidates(Objective objective, const Constraints& k, size_t n, TotalsOf totals_of) {
  int best = -1;
  Totals best_totals;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0) best_totals = totals_of(-1);
    const Totals t = totals_of(static_cast<int>(i));
    if (compare_totals(objective, k, t, best_totals) > 1e-12) {
      best = static_cast<int>(i);
      best_totals = t;
    }
  }
  return best;
}
}  // namespace

int AnalyticEstimator::best_of(const SystemState& state, const Scheme& incumbent, const std::vector<Scheme>& candidates) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  AnalyticStateCache& c = cache_for(state);
  return walk_candidates(objective_, constraints_, candidates.size(),
                         [&](int i) { return cached_totals(*this, c, i < 0 ? incumbent : candidates[static_cast<size_t>(i)], kMemoBytes); });
}

int AnalyticEstimator::best_of_edits(const SystemState& state, const Scheme& base, const SchemeEdit& incumbent,
                                     const std::vector<SchemeEdit>& candidates) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  AnalyticStateCache& c = cache_for(state);
  if (candidates.empty()) return -1;
  if (scheme_alters_state(c.state, base))
    return walk_candidates(objective_, constraints_, candidates.size(), [&](int i) {
      return cached_totals(*this, c, (i < 0 ? incumbent : candidates[static_cast<size_t>(i)]).applied_to(base), kMemoBytes);
    });
  const bool held = held_base_cached_ && &base == held_base_ && c.has_base;
  if (!held && (!c.has_base || !(c.base == base))) {
    c.base_option = options_of(*this, c.state, c, base);
    c.base = base;
    c.has_base = true;
    c.base_solved.assign(c.state.servers.size(), nullptr);
    c.edit_option = c.base_option;
  }
  held_base_cached_ = &base == held_base_;
  if (c.cloud_coupled) {  // servers solved together: every candidate as a whole
    const std::vector<int>& base_option = c.base_option;
    std::vector<int> option;
    return walk_candidates(objective_, constraints_, candidates.size(), [&](int i) {
      option = base_option;
      apply_edit(*this, c.state, c, i < 0 ? incumbent : candidates[static_cast<size_t>(i)], option);
      return cached_totals(c, option, kMemoBytes);
    });
  }
  return walk_candidates(objective_, constraints_, candidates.size(),
                         [&](int i) { return edit_totals(*this, c, i < 0 ? incumbent : candidates[static_cast<size_t>(i)], kMemoBytes); });
}

Estimator::RecordFigures AnalyticEstimator::figures_for_record(const SystemState& state, const Scheme& scheme) const {
  const Prediction p = predict(state, scheme);
  RecordFigures f;
  f.has_figures = true;
  f.throughput_rps = p.throughput_rps;
  f.mean_latency_ms = p.mean_latency_s * 1e3;
  f.p95_latency_ms = p.p95_latency_s * 1e3;
  f.energy_j_per_inference = p.energy_per_inference_j;
  f.constrained = constraints_.any();
  if (f.constrained) f.missed = constraints_.missed(p);
  return f;
}

}  // namespace coinfer
