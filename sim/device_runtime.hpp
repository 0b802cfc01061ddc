#pragma once
// One edge device in the simulation: its executor (device stages, one request at a time on its
// single-core host), its uplink (one transfer at a time: its radio), its downlink (results in order),
// and, for open-loop workloads, a generator. Strategies (DESIGN.md):
//   local: all stages here; offload: raw input to the server; pp(k): [0,k) here, [k,n) on the server,
//   pipelined (the executor starts input i+1 while input i is on the link or the server);
//   data_parallel: each input goes whole to the device or whole to the server, whichever is free first
//   (when both are free, the one with the lower estimated latency at the current bandwidth).
// Closed loop: a new input is created as soon as the first stage it needs is idle and the device has
// fewer than in_flight unfinished requests (data_parallel: as soon as one of the two paths is free).
#include <simgrid/s4u.hpp>

#include <deque>
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace coinfer {

struct SimRequest;
struct SimRun;
class EdgeServer;

class DeviceRuntime {
 public:
  DeviceRuntime(SimRun& run, int index);
  void start();  // spawns this device's actors (daemons)
  // Called by the server when a batch containing r ended: queues r's result on the downlink.
  void deliver_result(SimRequest* r);

  // Accounting read by the controller (energy, bytes).
  double radio_bytes_in_window() const { return radio_bytes_window_; }
  double bytes_sent() const { return bytes_sent_; }
  double bytes_received() const { return bytes_received_; }

 private:
  void executor_loop();
  void uplink_loop();
  void downlink_loop();
  void generator_loop();
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
  simgrid::s4u::Host* server_host_;
  int num_stages_;
  int in_flight_limit_;
  EdgeServer* server_;
  // Per split k (0..n), computed once: bytes crossing k, the result bytes, the batch group id.
  std::vector<double> bytes_at_split_;
  double result_bytes_ = 0;
  std::vector<int> batch_group_;
  std::string strategy_text_;
  int unfinished_ = 0;

  std::deque<SimRequest*> exec_queue_, up_queue_, down_queue_, dp_pending_;
  simgrid::s4u::SemaphorePtr exec_sem_, up_sem_, down_sem_;
  bool exec_busy_ = false, up_busy_ = false;
  bool dp_server_busy_ = false;  // a data_parallel input is on the server path
  bool dp_device_busy_ = false;  // a data_parallel input is on the device path
  double radio_bytes_window_ = 0, bytes_sent_ = 0, bytes_received_ = 0;
};

}  // namespace coinfer
