#pragma once
// Edge server model: a request queue with batching (ACE-GNN Fig. 8: a batch closes when its time window
// since the first request expires or when it reaches max_size; only requests with the same model,
// dataset and split batch together), and a pool of worker actors on a multi-core host. A batch's
// execution time is the server LUT's mean for its stage range at its size; results go back through
// each device's downlink. Queue state is application-level (std::deque + semaphores): SimGrid sees at
// most `workers` concurrent executions on the host.
#include <simgrid/s4u.hpp>

#include <deque>
#include <map>
#include <vector>

#include "core/scenario.hpp"

namespace coinfer {

struct SimRequest;
struct SimRun;

class EdgeServer {
 public:
  EdgeServer(SimRun& run, int index);
  void start();  // spawns the batch timer and the workers (daemons)
  // A request fully received (called from the device's uplink actor at arrival time). Does not block.
  void enqueue(SimRequest* r);
  int index() const { return index_; }
  int queued() const;        // requests waiting in open or sealed batches
  int busy_workers() const { return busy_workers_; }
  // Idle devices (indices) the scheme names as helpers; replaces the previous set.
  void set_helpers(const std::vector<int>& devices);
  // A helper finished the batch it was given (called from the helper's actor).
  void helper_done(int device);

 private:
  struct Group {
    int id;
    double deadline_s;
    std::vector<SimRequest*> members;
  };
  void seal(int batch_group);
  void timer_loop();
  void worker_loop();
  void forwarder_loop();
  // Batches that no worker will take now go to free helpers (ACE-GNN Sec. III-D), when the helper is
  // expected to return the result sooner than the server would (its input transfer plus its own LUT
  // time, against the time until a worker frees plus the batches ahead plus the server's LUT time).
  void maybe_forward();
  double server_seconds(const std::vector<SimRequest*>& batch) const;
  double helper_seconds(int helper, const std::vector<SimRequest*>& batch) const;

  SimRun& run_;
  int index_;
  const ServerSpec& spec_;
  simgrid::s4u::Host* host_;
  std::map<int, Group> open_;                    // batch_group -> open batch
  int next_group_id_ = 0;
  std::deque<std::pair<int, int>> timers_;       // (batch_group, group id) in deadline order
  simgrid::s4u::SemaphorePtr timers_sem_;
  std::deque<std::vector<SimRequest*>> ready_;   // sealed batches waiting for a worker
  simgrid::s4u::SemaphorePtr ready_sem_;
  int busy_workers_ = 0;
  std::vector<double> running_until_s_;  // end times of the batches running now (one per busy worker)
  std::map<int, bool> helper_busy_;  // helper device index -> helping now
  std::deque<std::pair<int, std::vector<SimRequest*>>> to_forward_;
  simgrid::s4u::SemaphorePtr forward_sem_;
};

}  // namespace coinfer
