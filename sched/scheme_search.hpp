#pragma once
// Helpers shared by the searching schedulers: the candidate strategies of a device and the ranking
// of schemes with an estimator.
#include <optional>
#include <vector>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

// local, offload, pp(1..n-1), data_parallel.
std::vector<Strategy> all_options(int num_stages);
// Each of those with each of the device's variant choices (DeviceState::variant_choices; none: the
// splits alone), and on a device with several processors, local and pp(k) whole on each other
// processor whose own table the LUTs hold ("local[cpu]"): the strategies a search may give the device.
// With `state` and a cloud behind the device's server (ServerState::cloud), also pp(k,m) for every
// 0 <= k < m < n (a cloud tier: the edge runs [k,m), the cloud [m,n)), with each variant choice.
std::vector<Strategy> device_options(const AnalyticEstimator& est, const DeviceState& d, const SystemState* state = nullptr);
// PP_comm (fewest bytes, from the spec) and PP_comp (least device [0,k) + server [k,n) time at batch 1,
// from the LUTs) for a device of the state.
int pp_comm_of(const AnalyticEstimator& est, const DeviceState& d);
int pp_comp_of(const AnalyticEstimator& est, const SystemState& state, const DeviceState& d);
// Over three tiers (a cloud behind the device's server, ServerState::cloud): the pp(k,m), 0 <= k < m < n,
// with the least time of one request alone at batch 1: device [0,k) + edge [k,m) + cloud [m,n) from the
// LUTs, plus the tensor at k over the device's route, at m over the WAN (the slower of the edge's and
// the cloud's links) and the result over the cloud's route (bytes / bandwidth, latencies left out: the
// same for every (k,m)). nullopt when the device's server has no cloud.
std::optional<Strategy> pp_cloud_of(const AnalyticEstimator& est, const SystemState& state, const DeviceState& d);
// A scheme giving every connected device its current strategy.
Scheme current_scheme(const SystemState& state);
// The devices a search decides for: connected and with inputs of their own, in state order.
std::vector<const DeviceState*> searched_devices(const SystemState& state);
// The number of stages of the device's model (what its pp(k) may split).
int stages_of(const AnalyticEstimator& est, const DeviceState& d);
// Connected devices with no inputs of their own, in state order.
std::vector<std::string> idle_helpers(const SystemState& state);
// true when `a` is predicted strictly better than `b`.
bool better(const Estimator& est, const SystemState& state, const Scheme& a, const Scheme& b);

}  // namespace coinfer
