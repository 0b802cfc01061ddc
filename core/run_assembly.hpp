#pragma once
// Result assembly shared by the engines ("one runtime, two clocks"): the simulator
// (sim/simulation.cpp) and the merge of a real run's journals (hw/journal_merge.cpp) finish their
// RunResults with these functions, so that a results.h5 means the same whichever engine made it.
// Pure functions of their arguments: no engine, no clock, no I/O.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/request_record.hpp"
#include "core/run_results.hpp"
#include "core/scenario.hpp"

namespace coinfer {

// The scenario's events (bandwidth, join, leave) as records, plus "arrivals_end" at duration_s, in
// time order (stable: equal times keep the scenario's order, arrivals_end after them).
std::vector<EventRecord> scenario_event_records(const Scenario& s);

// Each device's bandwidth schedule (link bandwidth, trace, bandwidth events: BandwidthSchedule) as one
// sample per change point at or before end_s (s, the run's end), devices in scenario order.
std::vector<BandwidthSample> bandwidth_samples(const Scenario& s, double end_s);

// The strategy text a device runs at the end of the run (DeviceResult::strategy): the last decision
// whose scheme names it (DecisionRecord::scheme, "id=strategy ... helpers=[...]"), else the strategy
// the scenario gives it.
std::string strategy_at_end(const Scenario& s, const std::vector<DecisionRecord>& decisions, int device);
// The server a device sends to at the end of the run (DeviceResult::server): the last decision whose
// scheme moves it (" servers=[id:server,...]", Scheme::servers), else the one the scenario binds it to.
std::string server_at_end(const Scenario& s, const std::vector<DecisionRecord>& decisions, int device);
// Each device's strategy and server at the end of the run (the two above), for both engines' results.
void record_final_choices(const Scenario& s, RunResults& r);

// Why a request still unfinished at the run's hard end (Scenario::hard_end_s) failed, one text for
// both engines: "not finished D s after arrivals ended (drain_s): WHERE", WHERE read from the
// record's timestamps (what its engine knew of it: the real device sees the server's times only
// with the result).
std::string drain_failure_text(const RequestRecord& r, double drain_s);
// Whether a request's failure text is drain_failure_text's (it never ended: core/metrics.hpp counts it
// in the backlog at the window's end).
bool is_drain_failure(const std::string& failure);

// Each server's busy time, batches and requests (server_results below) over records taken one at a
// time: 16 bytes kept per request a server computed (its batch's span), the rest counted as it comes.
class ServerTally {
 public:
  explicit ServerTally(const Scenario& s);
  void add(const RequestRecord& r);
  std::vector<ServerResult> finish(const Scenario& s);  // leaves the tally empty

 private:
  double warmup_s_, t0_, t1_;
  std::vector<std::vector<std::pair<double, double>>> spans_;
  std::vector<ServerResult> out_;
};

// How many failure texts RunResults::failure_reasons tallies one by one; the rest are counted together
// under kOtherFailureReasons (a text may name the request's age: drops past a deadline).
constexpr size_t kMaxFailureReasons = 1000;
constexpr const char* kOtherFailureReasons = "(other reasons, not tallied one by one)";

// Everything the run's summaries take from its requests, fed one request at a time in id order (both
// engines' last step: the simulator as its requests finish, the merge of a real run's journals from its
// list); then finish() fills the RunResults (summarise_run's work) without needing r.requests.
class RequestDigest {
 public:
  explicit RequestDigest(const Scenario& s);
  void add(const RequestRecord& r);
  long long count() const { return count_; }
  // The summary (core/metrics.hpp) with each device's `window_energy_j` (NaN: not measured) and its
  // workload's deadline; each device's result gets its delivered and offered rates and saturation
  // (results.h5 /devices); every server's result (server_results); request_count, failure_reasons,
  // resends and handover_failures.
  void finish(const Scenario& s, RunResults& r, const std::vector<double>& window_energy_j);

 private:
  MetricsTally metrics_;
  ServerTally servers_;
  double warmup_s_;
  long long count_ = 0, resends_ = 0, handover_failures_ = 0;
  std::map<std::string, long long> reasons_;
};

// RequestDigest over r.requests (the runs that hold their requests: a real run's merge, tests).
void summarise_run(const Scenario& s, RunResults& r, const std::vector<double>& window_energy_j);

// Per server (scenario order), over the window [warmup_s, duration_s): its busy seconds (the union of
// the [t_batch_start, t_batch_end) of the requests it computed, clipped to the window: the host draws
// busy_w while any worker computes), its batches and requests, and its energy by SimGrid's host
// energy rule, idle_w x window + (busy_w - idle_w) x busy (NaN when both powers are 0: not stated).
// Requests a helper device computed (RequestRecord::helper >= 0) are not the server's. (ServerTally.)
std::vector<ServerResult> server_results(const Scenario& s, const std::vector<RequestRecord>& records);

}  // namespace coinfer
