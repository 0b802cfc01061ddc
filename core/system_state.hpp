#pragma once
// Read-only snapshot of the system that schedulers see. Built by the simulator's monitor (or the real
// runtime); plain data, copyable, serialisable (sched/state_json.hpp). Units: seconds, Mbit/s, ms.
#include <memory>
#include <string>
#include <vector>

#include "core/device_hardware.hpp"
#include "core/lut.hpp"
#include "core/radio_energy.hpp"
#include "core/strategy.hpp"

namespace coinfer {

struct DeviceState {
  std::string id, type, model, dataset, server;
  std::string processor;                           // which of its type's processors it computes on by default ("" = its LUT's one)
  std::shared_ptr<const DeviceHardware> hardware;  // its processors and memory (null: one processor, no limit)
  // The key of its LUT for `run_model` (its model or a variant) on its processor.
  // `on`: another of its processors ("" = its default one).
  LutKey lut_key(const std::string& run_model, const std::string& on = "") const { return {type, run_model, dataset, on.empty() ? processor : on}; }
  Strategy strategy;  // current
  bool connected = true;
  bool busy = false;               // computing or holding unfinished requests
  int queue_length = 0;            // requests waiting on the device
  int unfinished = 0;              // requests created and not finished
  double link_bandwidth_mbps = 0;  // latest measured/known estimate
  double link_latency_ms = 0;      // one way
  double load = 0;    // the share of its default processor other work takes now (events[].load; its computations take 1 / (1 - load) as long)
  int in_flight = 0;  // closed loop: max unfinished requests; 0 = strategy default
  double arrival_rate_per_s = 0;  // open loop rate; 0 = closed loop
  bool generates = true;          // false: an idle device with no inputs of its own (a possible helper)
  // Execution variants a scheduler may give this device (Strategy::variant values: "fp32" or a
  // variant name), those its LUTs hold within the scenario's max_output_error; empty: no choice.
  std::vector<std::string> variant_choices;
  // Since the start, of the device's own requests: how many completed, and the sum of their latencies
  // (s). Differences between two states give a window's throughput and mean latency (online SAC).
  long long completed = 0;
  double latency_sum_s = 0;
  // Its power (devices[].power; all 0: not stated): W when idle and while computing, radio J per 1e6
  // bytes sent or received; stated per processor (hardware order), idle_w is the rest of the board.
  double idle_w = 0, busy_w = 0, radio_j_per_mb = 0;
  std::vector<double> processor_idle_w, processor_busy_w;
  RadioStates radio;  // its radio's power states (core/radio_energy.hpp); not stated: the flat rate
};

struct ServerState {
  std::string id, type;
  int queue_length = 0;  // requests waiting to be batched or for a worker
  int busy_workers = 0;
  int workers = 1;
  double batch_window_ms = 0;  // its batching now (the scenario's until a scheme set another)
  int batch_max_size = 1;
  int batch_size_limit = 1;  // the largest max_size a scheme may set: the scenario's servers[].batch.max_size (its LUTs cover it)
  double link_bandwidth_mbps = 1000;
  double link_latency_ms = 0;
  // false between a server_fail event and its server_recover: work sent to it is lost, its
  // devices hold back work that needs it (the analytic estimator predicts such paths serve nothing).
  bool up = true;
  // Its cloud (servers[].cloud): the id of the server it passes pp(k,m)'s [m,n) to; "" none.
  std::string cloud;
  // Requests on their way from it to its cloud now (the WAN's backlog; 0 without a cloud).
  int to_cloud = 0;
};

struct Scenario;
struct Scheme;

struct SystemState {
  double time_s = 0;
  // Seconds of arrivals still to come (the scenario's duration_s minus time_s; 0 = unknown, taken as
  // 60 s): how long a queue that builds in front of a saturated open-loop device grows, and over how
  // long an unsaturated one that starts empty fills (sched/README.md, "A run's length"; 0: its steady state).
  double horizon_s = 0;
  // Seconds until the run counts requests (the scenario's warmup_s minus time_s, at least 0): the
  // estimator's waits are those of the requests created in [warmup_left_s, horizon_s] from now, in
  // queues that started empty at time 0.
  double warmup_left_s = 0;
  double access_point_mbps = 1000;
  double access_point_latency_ms = 0;
  std::vector<DeviceState> devices;
  std::vector<ServerState> servers;

  const DeviceState* device(const std::string& id) const;
  const ServerState* server(const std::string& id) const;
};

// `state` with `device` as its only device (the servers and the access point as they are): what a
// scheduler predicts one device on, alone. Copies the servers, not the other devices.
SystemState alone_in(const SystemState& state, const DeviceState& device);

// Field by field (estimators cache predictions by state).
bool operator==(const DeviceState& a, const DeviceState& b);
bool operator==(const ServerState& a, const ServerState& b);
bool operator==(const SystemState& a, const SystemState& b);
inline bool operator!=(const SystemState& a, const SystemState& b) { return !(a == b); }

// Whether `scheme` sets a server's batching other than `state` has (Scheme::batching) or moves a
// device to another server than `state` has it on (Scheme::servers).
bool scheme_alters_state(const SystemState& state, const Scheme& scheme);
// `state` with the batching `scheme` sets applied to its servers and the devices it moves on their new
// servers (what the scheme is predicted on).
SystemState state_under(const SystemState& state, const Scheme& scheme);
// `s` as it can run at server `to`: its cloud part dropped where `to` has no cloud (pp(k,m) -> pp(k),
// pp(0,m) -> offload); unchanged otherwise. state_under applies it to the devices a scheme moves.
Strategy strategy_at(Strategy s, const ServerState& to);

// The state a scenario describes at time `now` before anything has run: devices connected between
// their join and leave times, configured strategies, nominal link bandwidths, empty queues.
SystemState scenario_state(const Scenario& s, double now);

}  // namespace coinfer
