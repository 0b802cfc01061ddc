#pragma once
// The real edge server (`coinfer serve`, ACE-GNN Sec. III-E and Fig. 9): accepts device connections,
// checks each registration (shared-secret challenge, device known to the scenario, model served),
// keeps one handler per device, and runs the same engine-free policies as the simulator's server:
// rescheduling (sched/rescheduler.hpp: start, join, leave, bandwidth beyond the threshold, period;
// only changed devices are told), batching (core/batch_queue.hpp: a batch seals at its window's end
// or when full, then waits for a worker), and forwarding of whole sealed batches to idle helpers
// (core/helper_forwarding.hpp). Batches run on a pool of worker threads with real LibTorch models
// (hw/batch_runner.hpp). At start it checks the scenario against the LUTs (every entry its scheduler
// may need). A malformed, oversized or unauthenticated message closes that connection only (logged).
// Torch stays behind the pimpl.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "core/lut.hpp"
#include "core/scenario.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::hw {

struct ServeOptions {
  std::string server_id;  // the scenario's server this process is ("" = the first)
  std::string bind = "0.0.0.0";
  int port = 7070;             // 0 = ephemeral
  std::string port_file;       // written (atomically) with the port once listening
  std::string secret;          // shared secret for the registration challenge
  double epoch_unix_s = 0;     // the run's time zero (Unix s); 0 = when the server starts
  std::string decisions_out;   // JSON lines, one per decision ("" = not written)
  double heartbeat_s = 1.0;    // a device silent for 5 heartbeats is considered gone
  bool shape = false;          // loopback fallback: pace each device's downlink as its scenario link
  bool shape_latency = false;  // add each device's one-way link latency to its downlink (no tc netem)
  int threads_per_worker = 1;  // LibTorch threads of each worker
  // Started again after a fail event (coinfer testbed): the decisions journal is
  // appended to, and the first decision, once the devices present now have registered again (or 10 s
  // have passed), is triggered "recover:SERVER" instead of "start".
  bool recovering = false;
  // Several edge servers (hw/README.md "Several edge servers"): the scenario's first server is the
  // coordinator (it holds the scheduler); every other server is its peer, reports to it and applies
  // its scheme. `coordinator`: where a peer reaches the coordinator ("host:port"; required for a peer,
  // ignored by the coordinator). `advertise`: where devices reach this server ("host:port"; default
  // the bind address and port, which must then not be 0.0.0.0 when the scenario has several servers).
  std::string coordinator, advertise;
  // Several servers: this process only coordinates (the scheduler, for every server, the first one
  // included, which then runs as a peer with --coordinator): it serves no device and no server failure
  // stops it, as the simulator's monitor outlives its host's server. `server_id` stays the first's.
  bool coordinate_only = false;
  std::function<void(const std::string&)> log;  // one line per event (stderr by default)
};

class EdgeServer {
 public:
  // Throws InputError when the scenario has no such server or a device's model cannot be served.
  EdgeServer(Scenario scenario, ModelCatalog catalog, LutSet luts, ServeOptions options);
  ~EdgeServer();
  int port() const;
  // Serves until `stop` becomes true, then closes every connection and joins every thread.
  void run(const std::atomic<bool>& stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coinfer::hw
