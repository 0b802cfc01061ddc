#pragma once
// The simulated edge server: an upload dispatcher, a batch timer, a forwarder to idle helpers and a
// pool of worker actors on a multi-core host. The policies are the engine-free ones the real server
// uses: batching is core/batch_queue.hpp (ACE-GNN Fig. 8), forwarding core/helper_forwarding.hpp,
// execution times core/execution_time.hpp. A batch's execution takes its ExecutionTimeModel time on
// one core; results go back to each device (DeviceInbox, a host-to-host transfer). Queue state is application-level
// (BatchQueue + semaphores): SimGrid sees at most `workers` concurrent executions on the host.
#include <simgrid/s4u.hpp>

#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/batch_queue.hpp"
#include "core/execution_time.hpp"
#include "core/helper_forwarding.hpp"
#include "core/random_stream.hpp"
#include "core/scenario.hpp"
#include "sim/messages.hpp"
#include "sim/observation.hpp"

namespace coinfer::sim {

// What one server's actors see of the run; built by the simulation, valid for the whole run.
struct ServerSlice {
  int index = 0;
  const ServerSpec* spec = nullptr;
  simgrid::s4u::Host* host = nullptr;
  ArrivedUploads* uploads = nullptr;                        // what devices' finished transfers brought (owned by the simulation)
  // Per scenario device, shared by all servers (owned by the simulation): where its results (and, for
  // a helper, forwarded batches) go.
  const std::vector<DeviceInbox*>* devices = nullptr;
  // Per scenario device and its binding (DeviceSlice::bindings; shared by all servers): its own
  // server's type's LUT for that model.
  const std::vector<std::vector<const LutTable*>>* server_luts = nullptr;
  // (helper, origin device, its binding) -> the helper's LUT for that model; absent: cannot help.
  std::map<std::tuple<int, int, int>, const LutTable*> helper_luts;
  const std::vector<BandwidthSchedule>* bandwidth = nullptr;   // per scenario device
  bool may_have_helpers = false;                            // some device of this server has arrival: none
  const ExecutionTimeModel* time = &lut_mean_time();
  std::uint64_t seed = 0;                                   // the scenario's: service-time draws (core/random_stream.hpp)
};

class ServerActors final : public ObservedServer {
 public:
  explicit ServerActors(ServerSlice slice);
  void start();  // spawns the dispatcher, the batch timer, the forwarder and the workers (daemons)
  int queued() const override { return queue_.queued(); }
  int busy_workers() const override { return busy_workers_; }
  void set_helpers(const std::vector<int>& devices) override;

 private:
  void dispatcher_loop();
  void enqueue(SimRequest* r);
  void timer_loop();
  void worker_loop();
  void forwarder_loop();
  void helper_done(int device);
  void sealed(int count);
  void maybe_forward();
  // Expected seconds of a batch on this server (forwarding decisions), and one execution's seconds
  // (drawn from this server's service-time stream).
  double server_seconds(const std::vector<SimRequest*>& batch) const;
  double sample_server_seconds(const std::vector<SimRequest*>& batch);
  double helper_seconds(int helper, const std::vector<SimRequest*>& batch) const;

  ServerSlice s_;
  BatchQueue<SimRequest*> queue_;
  HelperForwardPolicy helpers_;
  simgrid::s4u::SemaphorePtr timers_sem_;   // one permit per batch opened
  simgrid::s4u::SemaphorePtr ready_sem_;    // one permit per batch sealed
  simgrid::s4u::SemaphorePtr forward_sem_;  // one permit per batch to forward
  int busy_workers_ = 0;
  std::vector<double> running_until_s_;     // expected end times of the batches running now (one per busy worker)
  RandomStream service_rng_;                // purpose service_time, index kServerStreamBase + server index
  std::deque<std::pair<int, HelpTask>> to_forward_;  // (helper, task) waiting for the forwarder
  std::deque<HelpTask> in_help_;            // tasks sent to helpers (stable addresses for the mailbox)
};

}  // namespace coinfer::sim
