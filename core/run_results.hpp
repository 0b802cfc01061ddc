#pragma once
// Everything a run produces; written to results.h5 and summary.json by io/. Produced by the simulator
// and by the real runtime (collected from its journals) with the same meaning. Times in seconds since the start, energy in J.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/metrics.hpp"
#include "core/radio_energy.hpp"
#include "core/request_record.hpp"
#include "core/scenario.hpp"

namespace coinfer {

struct DeviceResult {
  std::string id, type, model, dataset;
  std::string server;    // at the end of the run: the last decision moving the device, else the scenario's (server_at_end)
  std::string strategy;  // at the end of the run: the last decision naming the device, else the scenario's (strategy_at_end)
  // Its energy over the measurement window (warm-up .. duration), split (core/device_energy.hpp,
  // core/radio_energy.hpp): computing above idle power, idle power all along, the radio. On the real
  // testbed a power meter measures the whole board: energy_compute_j holds it, idle NaN, radio 0.
  double energy_compute_j = 0;
  double energy_idle_j = 0;
  double energy_radio_j = 0;
  // The radio's by state, where its power states radio states (radio_states false: the flat rate).
  bool radio_states = false;
  RadioEnergy radio;
  double energy_j() const { return energy_compute_j + (std::isnan(energy_idle_j) ? 0 : energy_idle_j) + energy_radio_j; }
  double bytes_sent = 0, bytes_received = 0;  // whole run
  // Its rates over the measurement window and whether its queues grew (core/metrics.hpp; the same as
  // its summary's): results delivered in the window, the window's requests completed with the drain,
  // the window's arrivals (requests/s).
  double throughput_rps = 0, throughput_incl_drain_rps = 0, offered_rps = 0;
  bool saturated = false;
  // Its processors and memory, for a device whose type has a hardware profile (empty
  // otherwise): per processor its computing seconds in the window and its memory peak (its weights
  // and running working sets, bytes); per memory pool its capacity (0 = none stated) and peak need.
  struct Processor {
    std::string name;
    double busy_s = 0, peak_bytes = 0;
    double energy_j = std::nan("");  // its own (core/device_energy.hpp), NaN without per-processor power
  };
  struct Pool {
    std::string name;
    double capacity_bytes = 0, peak_bytes = 0;
  };
  std::vector<Processor> processors;
  std::vector<Pool> memory;
};

// The identity fields of a device's result (id, type, model, dataset, server, configured strategy);
// energies and byte counts are left for the engine that ran it.
inline DeviceResult device_result_of(const DeviceSpec& d) {
  DeviceResult r;
  r.id = d.id;
  r.type = d.type;
  r.model = d.model;
  r.dataset = d.dataset;
  r.server = d.server;
  r.strategy = d.strategy.to_string();
  return r;
}

struct EventRecord {
  double t_s = 0;
  std::string kind;                             // "bandwidth", "join", "leave", "load", "fail", "recover" (a server's), "handover", "arrivals_end"
  std::string device;                           // "" when not about one device
  double value = 0;                             // bandwidth_mbps for "bandwidth", the share for "load"
  std::string server;                           // fail, recover: the server's id; "" otherwise
  std::string access_point, from_access_point;  // handover: the access point it joins, the one it leaves; "" otherwise
};

struct BandwidthSample {
  double t_s = 0;
  int device = 0;
  double mbps = 0;  // the device link's bandwidth from t_s on
};

// One scheduling decision (the scheme it chose and why).
struct DecisionRecord {
  double t_s = 0;
  std::string trigger;  // "start", "join:ID", "leave:ID", "bandwidth:ID", "load:ID", "fail:SERVER", "recover:SERVER", "period", joined by '+'
  std::string scheme;   // Scheme::to_string()
  double predicted_throughput_rps = 0;  // the analytic estimator's prediction for the chosen scheme
  double predicted_latency_ms = 0;
  int switched = 0;    // devices sent a new strategy or moved to another server
  double wall_s = 0;   // wall-clock time of decide(); not deterministic, kept out of results.h5
  std::string detail;  // Scheduler::decision_detail() (JSON object text; "" none); decisions.jsonl only
};

// A file a run read its numbers from, and why that file (io/data_root.hpp: which project it was
// found in, or that the scenario named it).
struct DataFileOrigin {
  std::string role;    // "scenario", "models", "device profiles", "lut", "bandwidth trace", "arrival trace"
  std::string path;    // as opened
  std::string origin;  // "the working directory's project (/x)", "named by the scenario (luts)", ...
};

// How far a real run's board clock was from the server's (hw/clock_sync.hpp), as its journal says.
struct ClockRecord {
  std::string device;
  double offset_s = 0;       // server clock minus the board's; its journal was moved by it
  double uncertainty_s = 0;  // the estimate's error bound (half the best probe's round trip)
  int samples = 0;           // probes answered
};

// How a result was made, so that it can be made again.
struct RunProvenance {
  std::string program;       // "coinfer 0.x.y"
  std::string commit;        // the build's git commit ("-dirty" when the tree had changes)
  std::string command_line;  // argv, shell-quoted
  std::string working_directory;
  std::vector<std::string> overrides;    // the --set values, in order
  std::string scenario_yaml;             // the scenario as run: after the overrides, paths absolute
  std::vector<std::string> environment;  // environment settings that changed how it ran (COINFER_TRANSFERS=simgrid)
};

// One edge server over the measurement window (warm-up .. duration), from the request records
// (core/run_assembly.hpp server_results): the same rule for both engines.
struct ServerResult {
  std::string id, type;
  double busy_s = 0;       // the union of its batches' [start, end) in the window: computing while any worker is
  long long batches = 0;   // batches that ran on it (started in the window)
  long long requests = 0;  // requests it computed a part of (created in the window, completed)
  // Failures (core/server_failures.hpp): fail events in the window, and the seconds of the window it was down.
  int failures = 0;
  double down_s = 0;
  // idle_w x (window - down_s) + (busy_w - idle_w) x busy_s (a failed server draws nothing); NaN when
  // its power is not stated
  double energy_j = std::nan("");
};

struct RunResults {
  std::string scenario, scenario_file;
  RunProvenance made_by;
  unsigned long long seed = 0;
  double duration_s = 0, warmup_s = 0, end_s = 0;  // end_s: simulated time when the run stopped
  std::vector<DeviceResult> devices;
  std::vector<std::string> servers;
  std::vector<ServerResult> server_results;  // per server, in scenario order
  std::vector<RequestRecord> requests;       // ordered by id; empty when they were written out as they finished
  // What the summaries took from the requests (core/run_assembly.hpp RequestDigest), whether or not
  // `requests` still holds them: how many there were (results.h5 /requests rows), the requests created
  // in the window that did not complete by failure text (at most kMaxFailureReasons texts, the rest
  // counted under kOtherFailureReasons), and over the whole run the transfers resent after a handover
  // and the requests a handover failed.
  long long request_count = 0;
  std::map<std::string, long long> failure_reasons;
  long long resends = 0, handover_failures = 0;
  std::vector<EventRecord> events;
  std::vector<BandwidthSample> bandwidth;
  std::vector<MetricsSummary> summary;  // per device, then "total"
  std::string scheduler;
  std::string estimator;  // what its decisions ranked schemes with (Scheduler::estimator()), "" for none
  std::vector<DecisionRecord> decisions;
  // How executions were timed: "sampled" or "mean" (the scenario's service_time; "measured" on the
  // testbed), and the LUTs (device/model/dataset) whose distributions the draws came from.
  std::string service_time;
  std::vector<std::string> sampled_luts;
  // Where transfer sizes came from: LUTs with measured wire bytes, and those without (whose requests
  // sent the model spec's tensor bytes instead).
  std::vector<std::string> wire_bytes_luts, tensor_bytes_luts;
  // LUT entries the run may have consulted that were estimated (coinfer lut fill), not measured: one
  // line each, "device/model/dataset [i,j) batch b: method, error x %". Empty for a fully measured run.
  std::vector<std::string> estimated_lut_entries;
  std::vector<DataFileOrigin> data_files;  // every file the run's numbers came from
  std::vector<ClockRecord> clocks;         // real runs: each board's clock against the server's
  double engine_wall_s = 0;                // wall-clock seconds inside the engine; never written to files (not deterministic)
};

// The records' field tables (core/record_field.hpp): results.h5's /devices, /servers (beside
// /servers/id), /events, /decisions and /bandwidth columns, in this order; decisions.jsonl's keys.
const std::vector<RecordField<DeviceResult>>& device_result_fields();
const std::vector<RecordField<ServerResult>>& server_result_fields();
const std::vector<RecordField<EventRecord>>& event_fields();
const std::vector<RecordField<DecisionRecord>>& decision_fields();
const std::vector<RecordField<BandwidthSample>>& bandwidth_fields();

// A RunResults with the scenario's description filled in (name, file, seed, duration, warm-up,
// scheduler, server ids); the engine adds what it ran.
inline RunResults run_results_of(const Scenario& s) {
  RunResults r;
  r.scenario = s.name;
  r.scenario_file = s.file;
  r.made_by.overrides = s.overrides;
  r.made_by.scenario_yaml = s.resolved_yaml;
  r.seed = s.seed;
  r.duration_s = s.duration_s;
  r.warmup_s = s.warmup_s;
  r.scheduler = s.scheduler.name;
  for (const auto& sv : s.servers) r.servers.push_back(sv.id);
  return r;
}

}  // namespace coinfer
