#pragma once
// A scenario: what to simulate (or replay). Filled by io/scenario_loader from YAML (scenarios/README.md
// documents every key, default and unit). Units are in the names; times are seconds from the start.
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/batch_spec.hpp"
#include "core/radio_energy.hpp"
#include "core/device_hardware.hpp"
#include "core/dynamic_batching.hpp"
#include "core/input_error.hpp"
#include "core/lut.hpp"
#include "core/mobility.hpp"
#include "core/one_of_kinds.hpp"
#include "core/strategy.hpp"

namespace coinfer {

// Piecewise-constant bandwidth: from t_s on, the link runs at mbps (until the next point).
struct BandwidthPoint {
  double t_s = 0;
  double mbps = 0;
};

struct LinkSpec {
  double bandwidth_mbps = 0;          // 1 Mbps = 1e6 bit/s
  double latency_ms = 0;              // one way
  std::string trace_file;             // optional CSV (traces/README.md); empty = constant bandwidth
  std::vector<BandwidthPoint> trace;  // loaded trace (absolute times), empty if none
};

struct WorkloadSpec {
  enum class Arrival { closed_loop, poisson, trace, none };  // none: an idle device (a possible helper)
  Arrival arrival = Arrival::closed_loop;
  double rate_per_s = 0;                // poisson
  std::string file;                     // trace: one arrival time (s) per line
  std::vector<double> arrival_times_s;  // trace, loaded
  int in_flight = 0;                    // closed loop: max unfinished requests; 0 = strategy default
  // A request's deadline (ms from its creation; 0 = none): it met it when it completed within it
  // (summary.json slo_attainment). drop_late: a request the device finds past its deadline before it
  // starts a device segment or its upload is dropped there (RequestRecord::Status::dropped).
  double deadline_ms = 0;
  bool drop_late = false;
  // How long after its creation a request may be dropped (drop_late with a deadline), s; +infinity
  // otherwise. The servers' rule (core/server_loop.hpp) in both engines.
  double drop_after_s() const { return drop_late && deadline_ms > 0 ? deadline_ms * 1e-3 : std::numeric_limits<double>::infinity(); }
  // Its requests' priority at its server's batch queue (core/batch_queue.hpp): a free worker takes the
  // sealed batch whose requests' highest priority is highest, the oldest among equals. 0 by default.
  int priority = 0;
};

struct PowerSpec {
  // Without `processors`: the device's power when idle and while any of its processors computes.
  // With them: idle_w is the rest of the board (memory, radio idle, ...) and busy_w is unused.
  double idle_w = 0;
  double busy_w = 0;
  double radio_j_per_mb = 0;  // joules per 1e6 bytes sent or received (the flat radio model)
  // The radio with power states (core/radio_energy.hpp), instead of the flat rate: devices[].power.radio,
  // a traces/devices.yaml `radios:` entry or stated inline. Not stated: the flat rate.
  RadioStates radio;
  // Where idle_w and busy_w come from: "scenario" (devices[].power) or the type profile's board_power
  // source; "" when not stated.
  std::string source;
  // Per processor, in the device's hardware order (every processor it has): its power when
  // idle and when computing (core/device_energy.hpp). From devices[].power.processors, else the type's
  // profile where it states them (traces/devices.yaml processors.P.power).
  struct Processor {
    std::string processor;
    double idle_w = 0, busy_w = 0;
  };
  std::vector<Processor> processors;
};

struct DeviceSpec {
  std::string id;
  std::string type, model, dataset, server;
  // Which of its type's processors it computes on (traces/devices.yaml; its LUTs are that processor's,
  // traces/README.md "Processors"); "" = the one its type's LUT describes.
  std::string processor;
  // Its hardware (core/device_hardware.hpp): the type's profile from the scenario's `hardware` file
  // with devices[].memory_gb applied; null when the type has no profile (one processor, no memory
  // limit). Shared by the devices of one scenario entry.
  std::shared_ptr<const DeviceHardware> hardware;
  // The processor it computes on by default: `processor`, else its profile's default ("" without one).
  const std::string& default_processor() const { return processor.empty() && hardware ? hardware->processors.at(0) : processor; }
  // The key of its LUT for `run_model` (its model, or a variant of it) on `on` ("" = its default
  // processor).
  LutKey lut_key(const std::string& run_model, const std::string& on = "") const {
    return {type, run_model, dataset, on.empty() ? default_processor() : on};
  }
  LinkSpec link;
  // How it moves among the scenario's access points (mobility.access_points; core/mobility.hpp): its
  // link rate then follows its positions (link.bandwidth_mbps the radio's cap). none: it does not move.
  MovementSpec movement;
  WorkloadSpec workload;
  Strategy strategy;
  PowerSpec power;
  double join_at_s = 0;
  double leave_at_s = std::numeric_limits<double>::infinity();
  // Execution variants the scheduler may choose (filled by resolve_variant_choices, core/scenario_binding.hpp,
  // when the scheduler has a max_output_error): "fp32" or variant names; empty: no choice.
  std::vector<std::string> variant_choices;
  SourceLocation where;  // the YAML entry it came from, for later errors
  int entry = 0;         // that entry's index in the scenario's devices list (a count: group shares one)
};

struct ServerSpec {
  std::string id, type;
  int workers = 1;  // concurrent batches
  int cores = 0;    // host cores; 0 = workers
  BatchSpec batch;
  // batch.policy sparoa: SparOA's dynamic batching (Alg. 2) sets each batch group's largest batch
  // (at most batch.max_size) from this server's LUT; none: batch.max_size for every group.
  std::optional<DynamicBatchingParams> dynamic_batching;
  LinkSpec link{1000, 0.1, {}, {}};  // wired link between the access point and the server
  double idle_w = 0, busy_w = 0;
  std::string power_source;  // "scenario" (servers[].power), the type profile's board_power source, or "" (not stated)
  // servers[].failures: a mean time between failures and a mean time to repair (s, exponential laws;
  // core/server_failures.hpp expands them into fail and recover events when the scenario is loaded).
  struct FailureModel {
    double mtbf_s = 0, mttr_s = 0;
  };
  std::optional<FailureModel> failures;
  // servers[].cloud: the id of the server behind a WAN this edge server passes the
  // cloud part of pp(k,m) requests to (that server's link is the WAN: latency, bandwidth, trace); ""
  // none. A cloud server has no cloud of its own (three tiers: device, edge, cloud).
  std::string cloud;
  SourceLocation where;
};

struct AccessPointSpec {
  double bandwidth_mbps = 1000;  // shared medium every device link crosses
  double latency_ms = 0;
};

// What a scenario event does, one struct per kind (EventSpec::what). Devices and servers by id.
namespace event {
struct Bandwidth {  // the device's link rate from at_s on
  std::string device;
  double mbps = 0;
};
struct Leave {
  std::string device;
};
struct Join {
  std::string device;
};
// The share (0..0.99) of the device's processor taken by other work from at_s on
// (core/background_load.hpp); `processor`: which one ("": every processor of the device).
struct Load {
  std::string device;
  double share = 0;
  std::string processor;
};
// The server stops at at_s (everything it holds is lost: its devices fail those requests and hold back
// new work that needs it) and comes back at the recover's at_s (sim/README.md "Server failure").
struct ServerFail {
  std::string server;
};
struct ServerRecover {
  std::string server;
};
// The device moves from access point `from_access_point` to `access_point` (core/mobility.hpp; made
// by expand_mobility, never written by hand).
struct Handover {
  std::string device;
  std::string access_point, from_access_point;
};
}  // namespace event

struct EventSpec : OneOfKinds<event::Bandwidth, event::Leave, event::Join, event::Load, event::ServerFail, event::ServerRecover, event::Handover> {
  double at_s = 0;
  SourceLocation where;

  // The event of `Kind` about device `id` (null: another kind, or another device).
  template <class Kind>
  const Kind* of_device(const std::string& id) const {
    const Kind* k = as<Kind>();
    return k && k->device == id ? k : nullptr;
  }
  bool about_server() const { return is<event::ServerFail>() || is<event::ServerRecover>(); }
  // The device it is about ("" for a server's event); the server ("" for a device's).
  const std::string& device() const;
  const std::string& server() const;
  // As results.h5's /events names it: "bandwidth", "leave", "join", "load", "fail", "recover", "handover".
  const char* kind_name() const;
};

struct SchedulerSpec {
  std::string name = "static";
  std::map<std::string, std::string> params;  // scheduler-specific (sched/README.md)
  // Triggers of rescheduling (besides the first decision at t = 0, joins and leaves):
  double period_s = 0;                  // also every period_s seconds; 0 = never
  double bandwidth_threshold_pct = 20;  // a device's bandwidth changed by more than this since the last decision
  double load_threshold = 0.1;          // a device's background load (share) changed by more than this since the last decision
  bool charge_decision_time = false;    // the decision's wall-clock time delays the scheme on the server
  double control_bytes = 256;           // size of one scheduling message to a device
  // Execution variants as a scheduling dimension: the largest output error (relative mean absolute
  // error against the base model, from the LUTs' provenance; 0 for exact variants) a chosen variant
  // may have. < 0: variants are not chosen (each device runs its model as named).
  double max_output_error = -1;
  // Batching as a decision (sched/batching_choice.hpp): candidate batch windows (ms) and maximum sizes
  // the scheduler chooses among per server at each decision; both empty: the scenario's batching
  // stays. A size is at most every server's batch.max_size (its LUTs are checked up to it).
  std::vector<double> batch_windows_ms;
  std::vector<int> batch_sizes;
  // Server choice as a decision (sched/server_choice.hpp): after the scheduler chose
  // its strategies, each device's server is chosen among the live servers that can run its model;
  // false: every device keeps its devices[].server binding (the external scheduler may still set
  // servers in its answers).
  bool choose_servers = false;
  SourceLocation where;
  SourceLocation batch_sizes_where;  // the batch_sizes key, for core/scenario_checks.hpp
};

struct Scenario {
  std::string name;
  std::string file;  // where it was loaded from
  // How it was made, for the results' provenance: the --set overrides applied (in order), and the
  // YAML document after them with every file path it names resolved to an absolute path (what ran).
  std::vector<std::string> overrides;
  std::string resolved_yaml;
  unsigned long long seed = 1;
  double duration_s = 60;              // arrivals stop here
  double warmup_s = 0;                 // requests created before this are not counted
  double drain_s = 30;                 // after duration, in-flight requests may finish; the rest are failed
  std::string network_model = "cm02";  // cm02 | lv08
  // How the simulator times each execution: `sampled` draws it from the LUT entry's measured
  // distribution where the LUT has one (else its mean); `mean` uses every entry's mean.
  enum class ServiceTime { mean, sampled } service_time = ServiceTime::sampled;
  // Whether LUT entries estimated by `coinfer lut fill` (fitted regressors, not measurements) may be
  // used: refuse (default) makes a run that would consult one stop with an error naming it.
  enum class LutsFill { refuse, allow } luts_fill = LutsFill::refuse;
  std::vector<std::string> luts;  // files or folders
  SourceLocation luts_where;      // the `luts` key, for errors found while reading them
  std::string hardware_file;      // the device profiles the devices' hardware came from ("" = none found)
  std::vector<ServerSpec> servers;
  AccessPointSpec access_point;
  MobilitySpec mobility;            // access points with positions (core/mobility.hpp); none: devices do not move
  std::vector<DeviceSpec> devices;  // expanded (count: N gives N entries)
  SchedulerSpec scheduler;
  std::vector<EventSpec> events;

  // Position of the server / device with this id, -1 if absent. Ids are unique in a loaded scenario (the
  // loader refuses duplicates); a list holding duplicates gets the position of one of them.
  int server_index(const std::string& id) const;
  int device_index(const std::string& id) const;
  // The run's hard end, one rule for both engines: requests unfinished at duration_s +
  // drain_s are failed, whatever device made them (a device that left earlier included: it stops
  // creating requests at leave_at_s, its requests in flight keep the run's drain). The simulator's
  // ledger and the real device runtime both end there.
  double hard_end_s() const { return duration_s + drain_s; }
};

// Whether the seed can change a run of this scenario: true when some device draws Poisson arrivals,
// or when service times are sampled and some LUT the run uses has distributions
// (`luts_have_distributions`, which the caller knows once the LUTs are loaded). Closed-loop, trace
// and idle workloads on mean service times are deterministic.
bool scenario_uses_seed(const Scenario& s, bool luts_have_distributions);

// Closed-loop default for in_flight: 1 for local and offload, 2 for pp and data_parallel (the device
// works on input i+1 while input i is on the server) and for local placed on several processors (one
// works on input i+1 while another finishes input i).
int default_in_flight(const Strategy& s);

// One-way latency (s) between device `device` and its server as the simulator's routes have it: the
// device's link, the access point and the server's link (sim/platform_builder.cpp). The testbed
// emulates it with tc netem, or in the middleware's sender where the kernel has no netem.
double one_way_latency_s(const Scenario& s, size_t device);

}  // namespace coinfer
