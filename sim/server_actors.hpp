#pragma once
// The simulated edge server: an upload dispatcher, a batch timer, a forwarder to idle helpers and a
// pool of worker actors on a multi-core host. What happens to uploads (batching, forwarding, which
// worker runs what) is the engine-free server loop the real server runs too (core/server_loop.hpp);
// this adapter supplies simulated time, SimGrid executions and transfers, and execution times
// (core/execution_time.hpp). A batch's execution takes its ExecutionTimeModel time on
// one core; results go back to each device (DeviceInbox, a host-to-host transfer). Queue state is application-level
// (BatchQueue + semaphores): SimGrid sees at most `workers` concurrent executions on the host.
#include <simgrid/s4u.hpp>

#include <deque>
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/execution_time.hpp"
#include "core/helper_forwarding.hpp"
#include "core/server_loop.hpp"
#include "core/server_request_rules.hpp"
#include "core/server_timing.hpp"
#include "core/random_stream.hpp"
#include "core/scenario.hpp"
#include "sim/messages.hpp"
#include "sim/observation.hpp"

namespace coinfer::sim {

// What one server's actors see of the run; built by the simulation, valid for the whole run.
struct ServerSlice {
  const Scenario* scenario = nullptr;
  int index = 0;
  const ServerSpec* spec = nullptr;
  simgrid::s4u::Host* host = nullptr;
  ArrivedUploads* uploads = nullptr;  // what devices' finished transfers brought (owned by the simulation)
  // Per scenario device, shared by all servers (owned by the simulation): where its results (and, for
  // a helper, forwarded batches) go.
  const std::vector<DeviceInbox*>* devices = nullptr;
  // This server's LUTs for its devices' bindings (DeviceSlice::bindings) and its helpers' LUTs, and the
  // execution time model: what a batch is expected to take (core/server_timing.hpp, the real server's too).
  const ServerTiming* timing = nullptr;
  const std::vector<BandwidthSchedule>* bandwidth = nullptr;  // per scenario device
  std::uint64_t seed = 0;                                     // the scenario's: service-time draws (core/random_stream.hpp)
  // Its cloud (servers[].cloud; -1 none): the server it passes pp(k,m) requests on to, its host, where
  // they arrive there, and every server's status (a request passed on while the cloud is down fails).
  int cloud = -1;
  simgrid::s4u::Host* cloud_host = nullptr;
  ArrivedUploads* cloud_uploads = nullptr;
  const std::vector<ServerStatus>* server_status = nullptr;
};

class ServerActors final : public ObservedServer, private ServerActions<SimRequest*> {
 public:
  explicit ServerActors(ServerSlice slice);
  void start();  // spawns the dispatcher, the batch timer, the forwarder and the workers (daemons)
  int queued() const override { return loop_.queued(); }
  int busy_workers() const override { return loop_.busy_workers(); }
  int to_cloud() const override { return to_cloud_; }
  void set_helpers(const std::vector<int>& devices) override;
  void set_batching(const BatchSpec& spec) override;
  // The server fails (up = false: its queued work and running batches are dropped, its workers
  // killed; the devices fail what it held) or recovers (new workers). core/server_failures.hpp.
  void set_up(bool up) override;

 private:
  // The server loop's actions (core/server_loop.hpp), carried out in simulated time.
  double expected_seconds(const std::vector<SimRequest*>& batch) const override;
  double helper_seconds(int helper, const std::vector<SimRequest*>& batch) const override;
  void start_batch(std::uint64_t token, std::vector<SimRequest*> batch) override;
  void forward(int helper, std::vector<SimRequest*> batch) override;
  int batch_limit(SimRequest* const& r) const override { return rules_.batch_limit(facts(*r)); }
  double drop_after_s(SimRequest* const& r) const override { return rules_.drop_after_s(facts(*r)); }
  void drop(SimRequest* r, double now_s) override;
  double seconds_alone(SimRequest* const& r) const override { return rules_.seconds_alone(facts(*r)); }
  int priority(SimRequest* const& r) const override { return rules_.priority(facts(*r)); }
  // A simulated request as the server's rules see it (core/server_request_rules.hpp).
  static ServerRequestFacts facts(const SimRequest& r);
  // How a conformance trace names it (core/server_loop.hpp ServerLoopTrace): "r<id> d<device>
  // s<device split> c<cloud split> a<at cloud 0/1> t<creation> b<upload bytes>", numbers as %.17g.
  std::string describe(SimRequest* const& r) const override;

  void wake_actors();  // the worker and forwarder actors the loop's last call gave work to
  void dispatcher_loop();
  // One batch timer at a time: a new batching starts a new one (its own semaphore) and the one before
  // ends when it next wakes, so each sleeps to exact window ends of one window length.
  void start_timer();
  void timer_loop(std::uint64_t generation, simgrid::s4u::SemaphorePtr wake);
  void start_workers();
  void worker_loop();
  void forwarder_loop();
  // Passes a pp(k,m) request whose edge part ended on to the cloud (an actor of its own per request).
  void pass_to_cloud(SimRequest* r);
  // One execution's seconds (drawn from this server's service-time stream).
  double sample_server_seconds(const std::vector<SimRequest*>& batch);

  ServerSlice s_;
  ServerRequestRules rules_;
  ServerLoop<SimRequest*> loop_;
  simgrid::s4u::SemaphorePtr timers_sem_;                                  // one permit per batch opened (the current timer's)
  std::uint64_t timer_generation_ = 0;                                     // the current timer's; 0: none started
  simgrid::s4u::SemaphorePtr run_sem_;                                     // one permit per batch started (a worker actor runs it)
  simgrid::s4u::SemaphorePtr forward_sem_;                                 // one permit per batch to forward
  std::deque<std::pair<std::uint64_t, std::vector<SimRequest*>>> to_run_;  // started, for the worker actors
  int runs_to_wake_ = 0, forwards_to_wake_ = 0;
  RandomStream service_rng_;                              // purpose service_time, index kServerStreamBase + server index
  std::deque<std::pair<int, HelpTask>> to_forward_;       // (helper, task) waiting for the forwarder
  std::deque<HelpTask> in_help_;                          // tasks sent to helpers (stable addresses for the mailbox)
  std::vector<simgrid::s4u::ActorPtr> workers_;           // the worker actors now (killed when the server fails)
  std::vector<const std::vector<SimRequest*>*> running_;  // the batches the workers execute now (a worker's own)
  int to_cloud_ = 0;                                      // transfers to the cloud under way
  bool down_ = false;
  std::uint64_t failures_ = 0;  // failures so far: an upload taken before one is dropped after it
};

}  // namespace coinfer::sim
