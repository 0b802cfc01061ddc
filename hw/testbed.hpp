#pragma once
// `coinfer testbed SCENARIO`: the scenario run by real processes — `coinfer-rt serve` and one
// `coinfer-rt device` per scenario device — and their journals merged into the simulator's results.h5
// schema and summary.json. One run, in named phases (hw/testbed.cpp): checks, the hosts' set-up, the
// server, the devices, the run's clock (bandwidth changes, progress, the deadline), collection, results.
// Where the processes run is a back-end (hw/testbed_hosts.hpp):
//   - emulated on this machine (hw/README.md "An emulated testbed on one machine"): one network
//     namespace for the edge server, one for the access point and one per device, tc shaping each link
//     to the scenario's bandwidth and one-way latency over time; without permission to create
//     namespaces, loopback with shaping inside the middleware;
//   - real hosts over SSH, named by an inventory (hw/README.md "A real testbed over SSH").
// What a back-end created is removed on exit, on errors and on Ctrl-C.
// Torch-free: it only starts processes.
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/background_load.hpp"
#include "core/bandwidth_schedule.hpp"
#include "core/run_results.hpp"
#include "core/scenario.hpp"

namespace coinfer::hw {

struct TestbedOptions {
  std::string scenario;           // file
  std::vector<std::string> sets;  // --set overrides, passed on to every process
  std::string out;                // output folder (results.h5, summary.json, testbed.json, logs/)
  std::string rt_exe;             // the coinfer-rt program
  // The devices' own program, when it is not rt_exe: e.g. an arm64 build (scripts/board.sh build ->
  // build-arm64/coinfer-rt) run by `device_launcher`, the words put before it (e.g. "bash
  // scripts/board.sh run": inside the arm64 root, under emulation). Checked before anything starts
  // (`LAUNCHER PROGRAM version --json`: the same coinfer and wire protocol). Namespace/loopback only.
  std::string device_rt_exe;
  std::vector<std::string> device_launcher;
  // --processor-device NAME=DEVICE, passed to every device (hw/device_runtime.hpp processor_devices).
  std::vector<std::string> processor_devices;
  bool loopback = false;        // force the loopback fallback
  double device_cpu_cores = 0;  // > 0: cap every device at this many cores (cgroup)
  // What the cap covers: "work" (the compute and upload threads, as coinfer profile --cpu-quota
  // measured the LUT; needs cgroup v1), "process" (every thread), "auto" (work where possible).
  std::string device_cpu_scope = "auto";
  // The devices' memory as the kernel enforces it (a cgroup per device process, hw/memory_cap.hpp),
  // for devices whose memory is stated (memory_gb or their profile): "auto" (the board's memory plus
  // the process's footprint before its first request; where cgroups allow, else a warning), "exact"
  // (the board's memory for the whole process; an error without cgroups) or "off".
  std::string device_memory = "auto";
  int threads = 1;  // LibTorch threads per device and per server worker
  bool quiet = false;
  double startup_s = 4;  // time given to processes to load models before time zero
  // Testing: device id -> seconds its clock is set off by (coinfer device --clock-skew).
  std::map<std::string, double> device_clock_skew_s;
  // Testing: device id -> its power meter command (coinfer device --power-command).
  std::map<std::string, std::string> device_power_command;
  double clock_tolerance_s = 0.005;  // warn when a board's clock offset is known less well than this
  std::string inventory;             // real hosts over SSH (hw/ssh_hosts.cpp); "" = emulated here
  bool keep_remote = false;          // with an inventory: keep each host's run folder
};

// Largest number of devices the testbed creates (address plan 10.201.<i>.0/24, i < 250).
constexpr int kMaxTestbedDevices = 200;
constexpr int kMaxTestbedServers = 16;  // edge servers on one namespace or loopback testbed

// Runs the scenario, on the hosts of `o.inventory` or emulated here; returns 0 on success, 1 when the
// run finished with faults (a device ended badly or was lost, something could not be collected or
// undone). Throws InputError (exit 2) before creating anything when the scenario cannot run on the
// testbed (a bad inventory, a host that fails its check: before any process starts). `interrupted`
// (set by SIGINT/SIGTERM handlers) stops the run early and cleans up (returns 130).
int run_testbed(const TestbedOptions& o, const std::atomic<bool>& interrupted);

class TestbedHosts;
// The run's phases on the given hosts (what run_testbed does once it has made the back-end): the same
// exit statuses. `sc` is the scenario of `o.scenario` with `o.sets` applied. Writes o.out (results,
// logs/) and uses o.out + ".work" while it runs.
int run_testbed_on(TestbedHosts& hosts, const Scenario& sc, const TestbedOptions& o, const std::atomic<bool>& interrupted);

// What the run does with its journals: read each device journal
// (`journal_paths[i]` for scenario device i, "" = none) onto the server's clock, merge them with the
// server's decisions journal ("" or a missing file = none) into the simulator's schema, and write
// OUT/results.h5, summary.json, decisions.jsonl and testbed.json (`info`).
RunResults write_testbed_results(const Scenario& sc, const std::vector<std::string>& journal_paths, const std::string& decisions_path, double end_s,
                                 double clock_tolerance_s, const std::string& out, const nlohmann::json& info);
// The run's clock: the bandwidth changes of the shaped devices in time
// order, a progress line every 5 s, and the deadline (arrivals, drain and 30 s) after which devices
// still running are stopped.
class TestbedTimeline {
 public:
  // schedules[i] and shaped[i]: device i's bandwidth over time and whether the testbed applies it.
  TestbedTimeline(const Scenario& sc, const std::vector<BandwidthSchedule>& schedules, const std::vector<bool>& shaped);
  // The changes due by run time t, each once: (device, Mbit/s from then on).
  std::vector<std::pair<int, double>> due(double t);
  // The background-load changes due by run time t, each once: (device, the share of its processor
  // taken from then on; core/background_load.hpp, the share on the processor the Rescheduler reads).
  std::vector<std::pair<int, double>> due_loads(double t);
  // The server failures due by run time t, each once, in time order: (server index, true = the server
  // fails (the testbed kills it), false = it recovers (the testbed starts it again)).
  std::vector<std::pair<int, bool>> due_server_changes(double t);
  // Logs "t = 5 / 60 s" (or the drain) at most every 5 s, from time zero on.
  void progress(double t);
  double deadline_s() const { return deadline_s_; }

 private:
  std::vector<std::pair<double, int>> changes_;
  std::vector<BandwidthSchedule> schedules_;
  size_t next_ = 0;
  std::vector<std::pair<double, int>> load_changes_;
  std::vector<LoadSchedule> loads_;
  std::vector<std::string> processors_;  // per device: the processor whose share applies
  size_t next_load_ = 0;
  std::vector<std::pair<double, std::pair<int, bool>>> server_changes_;  // (run time, (server, fails))
  size_t next_server_ = 0;
  double duration_s_, drain_s_, deadline_s_;
  double last_progress_ = -1e9;
};

// The whole text of a log or another small file of the run ("" when it is absent or unreadable).
std::string read_run_file(const std::string& path);
// The log of server j in a run's logs/ folder: server.log for the first (the coordinator), else
// server-ID.log.
std::string server_log_name(const Scenario& sc, int server);

// The one-line summary at the end.
void print_testbed_summary(const RunResults& r, const std::string& mode, const std::string& out);

// Removes namespaces left by a testbed that was killed (names cf<digits>s / cf<digits>d<digits>).
int cleanup_stray_namespaces();

}  // namespace coinfer::hw
