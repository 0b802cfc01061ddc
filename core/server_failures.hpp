#pragma once
// Servers that fail and recover, engine-free. A scenario states them as events
// (`events[]: {at_s, server: ID, fail: true}` and `{..., recover: true}`) or as a model per server
// (`servers[].failures: {mtbf_s, mttr_s}`: up times and repair times drawn from exponential laws of
// those means, stream (seed, server_failure, server index), expanded into the same events when the
// scenario is loaded, so every engine and the results see one list).
//
// What a failure means (the rule both the simulator and the estimator follow; sim/README.md "Server
// failure"): at the fail's time the server loses everything it holds (uploads it is receiving, queued
// and running batches, batches forwarded to helpers, results on their way back): each such request
// fails at its device, then, with the reason `server ID failed at T s`. Until the recover, a device
// bound to it sends nothing there: a request that reaches its upload fails (`server ID is down (failed
// at T s)`), a closed loop whose strategy needs the server creates nothing, data_parallel routes every
// input to the device. Schedulers are triggered (`fail:ID`, `recover:ID`) and see the server down
// (ServerState::up); the analytic estimator predicts that paths through it serve nothing.
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace coinfer {

class ServerAvailability {
 public:
  ServerAvailability() = default;
  // The scenario's server events (in time order; check_server_failures must have passed).
  explicit ServerAvailability(const Scenario& s);
  // Whether server `server` (scenario index) is up at t_s: events at exactly t_s have taken effect.
  bool up_at(int server, double t_s) const;
  // When it failed last at or before t_s (the reason's time); -1 when it never did.
  double failed_at(int server, double t_s) const;
  bool any() const { return any_; }

 private:
  struct Change {
    double t_s;
    bool up;
  };
  std::vector<std::vector<Change>> changes_;  // per server, in time order
  bool any_ = false;
};

// Why a request lost with its server failed: "server ID failed at T s" (T rounded to the microsecond).
std::string server_failed_reason(const std::string& server, double failed_at_s);
// Why a request could not be sent to a server that is down: "server ID is down (failed at T s)".
std::string server_down_reason(const std::string& server, double failed_at_s);
// Whether `failure` is one of the two above (a real device takes such a reason from its server as is,
// e.g. its request lost with the edge's cloud: hw/README.md "Cloud tier").
bool is_server_failure(const std::string& failure);

// The model of servers[].failures: appends to s.events each server's fail and recover events before
// s.hard_end_s(), drawn from its stream (header), then sorts the events by time (stable).
void add_modelled_failures(Scenario& s);

// Refuses server events that do not alternate per server in time order (a fail of a server already
// down, a recover of one that is up), naming the event's file and line (InputError).
void check_server_failures(const Scenario& s);

}  // namespace coinfer
