#pragma once
// Where a testbed run's processes live: the back-end half of `coinfer testbed`. The run itself — its
// phases, its clock, what is collected and written — is written once in hw/testbed.cpp; a back-end
// only creates the network, starts, watches and stops processes, and brings files back:
//   - network namespaces (or loopback) on this machine: hw/netns_hosts.cpp;
//   - real hosts over SSH, named by an inventory: hw/ssh_hosts.cpp.
//
// The driver calls, in this order: prepare; start_server, then server_listening until it is true;
// start_devices; device_state / server_state / reshape while the run goes (stop_devices when the
// deadline passes); stop_server; collect; finish; info. Every call blocks until its work is done (a
// start returns once the process is launched, not once it is ready). Whatever a back-end created is
// undone by its destructor when the run ends early (an exception, Ctrl-C); finish undoes it on the
// normal path and says whether everything could be.
// Torch-free: back-ends only start processes.
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace coinfer::hw {

struct TestbedOptions;

// A device's or the server's process as the back-end sees it now.
struct ProcessState {
  enum class Kind {
    running,
    ended,  // it exited: `status` is its wait status
    lost,   // it cannot be reached any more (a board's ssh session broke): `why` says what was seen
  };
  Kind kind = Kind::running;
  int status = 0;
  std::string why;  // lost: what was seen; ended: why, where the hosts know (e.g. killed for memory)
  bool running() const { return kind == Kind::running; }
};

class TestbedHosts {
 public:
  virtual ~TestbedHosts() = default;

  // Phase 1: the network and the hosts, before any process of the run starts (namespaces and shaping
  // here; checks, run folders and shaping over SSH). Throws InputError (exit 2) for what the user must
  // fix, runtime_error for a failure of the machine; returns false when `interrupted` was seen.
  // `work` is the run's scratch folder (exists, with logs/ inside): logs and files go there.
  virtual bool prepare(const std::string& work, const std::atomic<bool>& interrupted) = 0;
  // Seconds the server is given to start before the devices' start-up time (--startup) begins.
  virtual double server_start_s() const = 0;
  // Phase 2: starts the servers with time zero at `epoch` (Unix seconds on this machine's clock): the
  // scenario's first (the coordinator of several, hw/README.md "Several edge servers"), then, once it
  // listens, the others (its peers).
  virtual void start_server(double epoch) = 0;
  // Whether every server listens now; throws runtime_error when one exited before listening.
  virtual bool server_listening() = 0;
  // Phase 3: starts every device; false when `interrupted` was seen.
  virtual bool start_devices(const std::atomic<bool>& interrupted) = 0;
  // Phase 4: which devices' links the back-end shapes over time (scenario order), and a change of one.
  virtual std::vector<bool> shaped_devices() const = 0;
  virtual void reshape(int device, double mbps) = 0;
  // Background load (events[].load): `share` of the device's processor is taken by other work from now
  // on. A back-end that cannot apply load refuses a scenario with load events when it is made.
  virtual void set_load(int device, double share) = 0;
  virtual ProcessState device_state(int device, double run_time_s) = 0;
  // Server `server` (scenario index).
  virtual ProcessState server_state(int server) = 0;
  virtual double poll_interval_s() const = 0;
  virtual void stop_devices(double grace_s) = 0;
  virtual void stop_server(double grace_s) = 0;  // every server: its peers first, then the coordinator
  // A server failure (events[] fail/recover, servers[].failures): kill_server kills
  // the server process at once (SIGKILL: nothing it holds survives), restart_server starts it again on
  // the same address with --recovering (its decisions journal and log appended to, the same epoch).
  // A back-end that cannot (the SSH testbed so far) says so in can_fail_server(), and the run is
  // refused before anything starts.
  virtual bool can_fail_server() const { return false; }
  virtual void kill_server(int /*server*/) {}
  virtual void restart_server(int /*server*/) {}
  // Phase 5: every device's journal on this machine (scenario order; "" = none) and the server's
  // decisions journal ("" = none). False when something could not be brought back complete (the run
  // then ends with exit 1; what came back is still used).
  virtual bool collect(std::vector<std::string>& journals, std::string& decisions) = 0;
  // Undoes what prepare and the starts created; false when something could not be undone (reported).
  virtual bool finish() = 0;
  // testbed.json's fields that describe this back-end (mode, shaping, hosts...).
  virtual nlohmann::json info() const = 0;
  // The words of the closing summary line, e.g. "network namespaces + tc".
  virtual std::string summary_mode() const = 0;
  // "the edge server and 3 device processes", "the edge server on HOST and 3 boards"...
  virtual std::string started_what() const = 0;
};

// The back-ends. Making one checks what can be checked before anything is created (InputError,
// exit 2: too many devices, a bad inventory, options that do not apply) and creates nothing. Both keep
// references to `sc` and `o`: they must outlive the back-end.
std::unique_ptr<TestbedHosts> make_netns_hosts(const Scenario& sc, const TestbedOptions& o);
std::unique_ptr<TestbedHosts> make_ssh_hosts(const Scenario& sc, const TestbedOptions& o);

}  // namespace coinfer::hw
