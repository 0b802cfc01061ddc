#pragma once
// One edge device in the simulation. A single actor runs an event loop over the device's own
// activities: its computation (one request at a time on its single-core host), its upload (one
// transfer at a time: its radio), the next result coming back (results arrive one at a time, in the
// order the server sent them) and, for open-loop workloads, the next arrival time. Waking only on
// activity completions keeps the simulator close to bare SimGrid speed (bench/RESULTS.md).
// Strategies (DESIGN.md):
//   local: all stages here; offload: raw input to the server; pp(k): [0,k) here, [k,n) on the server,
//   pipelined (the device computes input i+1 while input i is on the link or the server);
//   data_parallel: each input goes whole to the device or whole to the server, whichever is free first
//   (when both are free, the one with the lower estimated latency at the current bandwidth).
// Closed loop: a new input is created as soon as the first stage it needs is idle and the device has
// fewer than in_flight unfinished requests (data_parallel: as soon as one of the two paths is free).
#include <simgrid/s4u.hpp>

#include <deque>
#include <string>
#include <vector>

#include "core/open_loop_arrivals.hpp"
#include "core/scenario.hpp"

namespace coinfer {

struct SimRequest;
struct SimRun;
class EdgeServer;

class DeviceRuntime {
 public:
  DeviceRuntime(SimRun& run, int index);
  void start();  // spawns this device's actor (a daemon)
  // The device's actor; it returns by itself at the drain's end (SimRun::hard_end_s).
  simgrid::s4u::ActorPtr actor() const { return actor_; }
  // Called by a server worker (in its own actor) when r's batch ended: sends r's result to this
  // device. Does not block the worker; the transfer starts when the device is ready to receive it.
  void send_result(SimRequest* r);

  // Called by the scheduler monitor (in its own actor, on the server host): sends a scheduling message
  // of `bytes` carrying the device's new strategy; the device applies it when the message arrives.
  // Requests already created keep the strategy they started with.
  void send_strategy(const Strategy* s, double bytes);
  // Called by the server's forwarder (on the server host): sends a batch for this idle device to run
  // (its server part) as a helper; the transfer carries the batch's input bytes.
  void send_help(std::vector<SimRequest*> batch, int server);
  const Strategy& strategy() const { return strategy_; }
  int unfinished() const { return unfinished_; }
  int queued() const { return static_cast<int>(exec_queue_.size() + up_queue_.size() + dp_pending_.size()); }
  bool busy() const { return unfinished_ > 0; }

  // Accounting read after the run (energy, bytes).
  double radio_bytes_in_window() const { return radio_bytes_window_; }
  double bytes_sent() const { return bytes_sent_; }
  double bytes_received() const { return bytes_received_; }

 private:
  void event_loop();
  void cancel_activities();
  void start_idle_stages();
  void on_computed();
  void on_uploaded();
  void on_result();
  void on_control();
  void on_help_arrived();
  void on_help_done();
  void apply_strategy(const Strategy& s);
  // Creates one request now (strategy as of now) and routes it.
  void create_request();
  void route(SimRequest* r);
  void route_data_parallel();
  void try_create_closed_loop();
  bool accepting() const;  // joined, not left, before the end of arrivals
  void count_radio(double bytes);
  void on_finished(SimRequest* r);

  SimRun& run_;
  int index_;
  const DeviceSpec& spec_;
  simgrid::s4u::Host* host_;
  simgrid::s4u::ActorPtr actor_;
  simgrid::s4u::Host* server_host_;
  EdgeServer* server_;
  simgrid::s4u::Mailbox* results_;
  simgrid::s4u::Mailbox* control_;
  Strategy strategy_;
  int num_stages_;
  int in_flight_limit_;
  int unfinished_ = 0;
  // Per split k (0..n), computed once: bytes crossing k, the result bytes, the batch group id.
  std::vector<double> bytes_at_split_;
  double result_bytes_ = 0;
  std::vector<int> batch_group_;
  std::string strategy_text_;

  std::deque<SimRequest*> exec_queue_, up_queue_, dp_pending_;
  SimRequest* computing_ = nullptr;  // request whose device stages run now
  SimRequest* uploading_ = nullptr;  // request on the uplink now
  SimRequest* arriving_ = nullptr;   // filled by the posted result receive
  simgrid::s4u::ExecPtr exec_;
  simgrid::s4u::CommPtr upload_, result_get_, control_get_;
  Strategy* incoming_strategy_ = nullptr;  // filled by the posted control receive
  // Helper role (devices with arrival: none): one forwarded batch at a time.
  struct HelpTask {
    std::vector<SimRequest*> batch;
    int server = 0;
  };
  bool helper_ = false;
  simgrid::s4u::Mailbox* help_ = nullptr;
  std::deque<HelpTask> help_tasks_;       // payloads in flight (stable addresses)
  HelpTask* incoming_help_ = nullptr;     // filled by the posted help receive
  HelpTask* helping_ = nullptr;           // the batch computing now
  simgrid::s4u::CommPtr help_get_;
  simgrid::s4u::ExecPtr help_exec_;
  bool dp_server_busy_ = false;  // a data_parallel input is on the server path
  bool dp_device_busy_ = false;  // a data_parallel input is on the device path
  // Open loop: the arrival times (shared with the real runtime: core/open_loop_arrivals.hpp).
  OpenLoopArrivals arrivals_;
  double next_arrival_s_ = 0;
  double radio_bytes_window_ = 0, bytes_sent_ = 0, bytes_received_ = 0;
};

}  // namespace coinfer
