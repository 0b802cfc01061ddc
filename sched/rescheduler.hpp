#pragma once
// The rescheduling loop of ACE-GNN's system monitor (Sec. III-D/E), engine-free: typed events in,
// an optional decision out. The simulator's monitor actor and the real server's scheduler thread
// both feed it and carry out what it returns; triggers, the bandwidth threshold, periods and "send
// only what changed" live here once.
//
// Events (Trigger): start (the run begins), join / leave (a device connects or goes), bandwidth (a
// device's measured link rate; it becomes a trigger only when it moved by more than
// scheduler.bandwidth_threshold_pct since the rate the last decision used for that device, or since
// the last bandwidth trigger of that device), period (every scheduler.period_s when > 0), load (a
// device's background load on its default processor moved by more than scheduler.load_threshold, a
// share, since the last decision or load trigger; core/background_load.hpp), server_fail /
// server_recover (a server fails or comes back: core/server_failures.hpp; the snapshot says which
// servers are up, from the scenario's own schedule, in both engines).
// decide() runs the Scheduler on a state snapshot, predicts the chosen scheme with the estimator,
// and returns the per-device changes to send (a device whose strategy and helper role did not
// change gets no message), the helpers by device index, and the decision record.
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/background_load.hpp"
#include "core/server_failures.hpp"
#include "core/bandwidth_schedule.hpp"
#include "core/indices.hpp"
#include "core/one_of_kinds.hpp"
#include "core/run_results.hpp"
#include "core/scenario.hpp"
#include "core/scheduler.hpp"

namespace coinfer {

// What prompts a decision, one struct per kind (held in Trigger::what).
namespace trigger {
struct Start {};   // the run begins (or, for a restarted real server, ServerRecover of itself)
struct Period {};  // every scheduler.period_s
struct Join {      // a device connects
  DeviceIndex device;
};
struct Leave {  // a device goes
  DeviceIndex device;
};
struct Bandwidth {  // a device's link rate now
  DeviceIndex device;
  double mbps = 0;
};
struct Load {  // the share of a device's default processor taken by other work now
  DeviceIndex device;
  double share = 0;
};
struct Handover {  // a device changes access point
  DeviceIndex device;
};
struct ServerFail {
  ServerIndex server;
};
struct ServerRecover {
  ServerIndex server;
};
}  // namespace trigger

struct Trigger : OneOfKinds<trigger::Start, trigger::Period, trigger::Join, trigger::Leave, trigger::Bandwidth, trigger::Load, trigger::Handover,
                            trigger::ServerFail, trigger::ServerRecover> {
  // From any kind: Trigger{trigger::Join{DeviceIndex(3)}}.
  template <class Kind, class = std::enable_if_t<std::is_constructible_v<What, Kind>>>
  Trigger(Kind k) {  // NOLINT: implicit by design
    what = std::move(k);
  }
  // The device it names (join, leave, bandwidth, load, handover), else none.
  DeviceIndex device() const;
  // "start", "join:ID", "leave:ID", "bandwidth:ID", "period", "load:ID", "fail:SERVER", "recover:SERVER",
  // "handover:ID" (the decision record's trigger field).
  std::string describe(const Scenario& s) const;
};

// A decision's trigger text: the triggers' descriptions joined by '+', in order, except that a kind
// with more than `max_listed` triggers naming devices or servers ("join:d0_17", ...) is summarised
// once, where its first one was, as "join:1000 devices of d0_*" (the ids' longest common prefix, then
// '*'; "fail:3 servers of edge*" for servers). The full list stays in results.h5's /events.
std::string trigger_text(const std::vector<std::string>& descriptions, size_t max_listed = 8);

// What one device is told after a decision.
struct DeviceChange {
  DeviceIndex device;
  Strategy strategy;
  bool helper = false;  // the scheme names it a helper
  ServerIndex server;   // the server its new requests go to
  bool strategy_changed = false;
  bool helper_changed = false;
  bool server_changed = false;  // the scheme moved it to `server` (Scheme::servers)
};

struct Decision {
  Scheme scheme;
  std::vector<DeviceChange> changes;  // the devices to tell, in both engines: those whose strategy, helper role or server changed
  std::vector<int> helpers;           // the scheme's helpers as device indices
  // Servers whose batching the scheme changed, with the new rule: each engine applies it to that
  // server's loop (core/server_loop.hpp set_batching) at the decision's time.
  std::vector<std::pair<ServerIndex, BatchSpec>> batching;
  DecisionRecord record;  // t_s, trigger, scheme, prediction, switched, wall_s

  // The helpers server `server_id` may forward to: the scheme's helpers bound to it in the scenario
  // (each helper serves its own server; a scheme's server choice moves devices that create inputs,
  // helpers stay). Both engines hand this to their HelperForwardPolicy.
  std::vector<int> helpers_of(const Scenario& s, const std::string& server_id) const {
    std::vector<int> out;
    for (int i : helpers)
      if (s.devices[static_cast<size_t>(i)].server == server_id) out.push_back(i);
    return out;
  }
};

// What an engine observed of one device when a decision is taken: the simulator reads its device
// objects, the real server the device's last heartbeat.
struct DeviceObservation {
  bool connected = true;
  bool generates = true;           // creates inputs of its own (false: an idle device, a possible helper)
  double link_bandwidth_mbps = 0;  // as measured; <= 0: not measured (the scenario's figure stays)
  int queue_length = 0, unfinished = 0;
  bool busy = false;
  long long completed = 0;
  double latency_sum_s = 0;
};
struct ServerObservation {
  int queue_length = 0, busy_workers = 0;
  int to_cloud = 0;  // requests on their way to its cloud (ServerState::to_cloud)
};

class Rescheduler {
 public:
  // `scenario`, `scheduler` and `estimator` must outlive this object.
  Rescheduler(const Scenario& scenario, Scheduler& scheduler, const Estimator& estimator);

  // Offers an event at time t_s; returns true when it became a pending trigger.
  bool offer(const Trigger& t);
  bool has_pending() const { return !pending_.empty(); }
  // The next periodic trigger strictly after t_s: k * scheduler.period_s for an integer k >= 1, while
  // before the end of arrivals (duration_s); +infinity after it (no decisions during the drain: there
  // is nothing left to schedule) and when period_s is 0. The one rule for both engines: the
  // simulator's scenario_events and the real server's timer both ask it.
  double next_period_after(double t_s) const;
  static double next_period_after(const Scenario& s, double t_s);

  // The one snapshot both engines decide on: the scenario's state at now_s, each device's
  // strategy as last decided here, then what the engine observed (nullopt: nothing observed, the
  // scenario's figures stay; a device observed disconnected keeps them too). One entry per scenario
  // device and server (shorter vectors: the rest unobserved).
  SystemState snapshot(double now_s, const std::vector<std::optional<DeviceObservation>>& devices,
                       const std::vector<std::optional<ServerObservation>>& servers) const;

  // Decides on the pending triggers with `state` (taken now by the caller; its time_s is the
  // decision's time) and clears them. Remembers the scheme's strategies, helpers and servers and the
  // bandwidth each device had, against which later bandwidth events are compared. A scheme that moves
  // a device the scenario does not have, or to a server it does not have, is a SchedulerFailure.
  Decision decide(const SystemState& state);

  // The batching server j has now (the scenario's until a scheme set another).
  const BatchSpec& batching(ServerIndex server) const { return batching_[server.at()]; }
  // The strategy last decided (the scenario's until the first decision) and the helper role.
  const Strategy& strategy(DeviceIndex device) const { return strategy_[device.at()]; }
  // The server device `device`'s new requests go to: the scenario's binding until a scheme moved it
  // (Scheme::servers).
  ServerIndex server(DeviceIndex device) const { return ServerIndex(server_[device.at()]); }
  bool is_helper(DeviceIndex device) const { return helper_[device.at()]; }

  // Every event the scenario itself schedules before end_s, in time order (stable): start at 0,
  // joins after 0, leaves, each point of each device's bandwidth schedule after 0, and periods. The
  // simulator knows the scenario's future and offers these at their times; the real server offers
  // what it observes instead (registrations, disconnections, heartbeats, its own timer).
  static std::vector<std::pair<double, Trigger>> scenario_events(const Scenario& s, const std::vector<BandwidthSchedule>& bandwidth, double end_s);

 private:
  const Scenario& scenario_;
  Scheduler& scheduler_;
  const Estimator& estimator_;  // its figures_for_record() fill each decision's predictions (the analytic estimator in both engines)
  std::vector<Trigger> pending_;
  std::vector<Strategy> strategy_;
  std::vector<bool> helper_;
  std::vector<int> server_;  // per device: its server (scenario index) as last decided
  // Per device: its handovers to access points tied to a server (mobility.access_points[].server), in
  // time order: from each on, the device is that server's (the scheme cannot choose servers then).
  std::vector<std::vector<std::pair<double, int>>> access_point_server_;
  int access_point_server(size_t device, double t_s) const;  // -1: no such handover at or before t_s
  std::vector<double> bandwidth_at_decision_;                // per device, Mbit/s (the scenario's until the first decision)
  std::vector<BatchSpec> batching_;                          // per server: as last decided (the scenario's until a scheme sets one)
  std::vector<LoadSchedule> load_;                           // per device: its background load (events[].load)
  std::vector<double> load_at_decision_;                     // per device: its default processor's share the last decision saw
  ServerAvailability availability_;                          // the servers' failures (events[].fail, .recover)
};

}  // namespace coinfer
