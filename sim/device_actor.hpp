#pragma once
// One edge device in the simulation. A single actor runs an event loop over the device's own
// activities: its computation (one request at a time on its single-core host), its upload (one
// transfer at a time: its radio), the next result coming back (results arrive one at a time, in the
// order they were sent), the next scheduling message, a forwarded batch when it is an idle helper
// and, for open-loop workloads, the next arrival time. Waking only on activity completions keeps the
// simulator close to bare SimGrid speed (bench/RESULTS.md).
// The rules are the engine-free ones the real device runtime uses: arrivals and the closed-loop
// admission rule are core/arrival_process.hpp, data_parallel routing core/data_parallel_router.hpp,
// execution times core/execution_time.hpp. Strategies (DESIGN.md):
//   local: all stages here; offload: raw input to the server; pp(k): [0,k) here, [k,n) on the server,
//   pipelined (the device computes input i+1 while input i is on the link or the server);
//   data_parallel: each input goes whole to the device or whole to the server.
#include <simgrid/s4u.hpp>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "core/arrival_process.hpp"
#include "core/bandwidth_schedule.hpp"
#include "core/data_parallel_router.hpp"
#include "core/execution_time.hpp"
#include "core/model_spec.hpp"
#include "core/random_stream.hpp"
#include "core/scenario.hpp"
#include "sim/messages.hpp"
#include "sim/observation.hpp"

namespace coinfer::sim {

// One model the device may run (its model as named, or an execution variant a scheduler may choose).
struct ModelBinding {
  std::string run_model;                // "gcn" or "gcn@int8": what model_under() gives for a strategy
  const ModelSpec* model = nullptr;
  const LutTable* lut = nullptr;        // this device's type
  const LutTable* server_lut = nullptr;  // its server's type
  std::vector<int> batch_group;         // per split k = 0..n: the batch group id at the server
};

// What one device's actor sees of the run; built by the simulation, valid for the whole run.
struct DeviceSlice {
  int index = 0;
  const DeviceSpec* spec = nullptr;
  std::uint64_t seed = 0;                            // the scenario's: arrivals and service-time draws
  AccessPointSpec access_point;
  double warmup_s = 0, duration_s = 0;              // the measurement window (radio energy)
  simgrid::s4u::Host* host = nullptr;
  // [0]: the device's model as the scenario names it; then each variant its scheduler may choose
  // (DeviceSpec::variant_choices). A strategy names its binding through model_under().
  std::vector<ModelBinding> bindings;
  // Helpers: (origin device, its binding) -> this type's LUT for that model; absent: cannot help it.
  std::map<std::pair<int, int>, const LutTable*> helper_luts;
  const BandwidthSchedule* bandwidth = nullptr;      // its link
  RequestLedger* ledger = nullptr;
  simgrid::s4u::Host* server_host = nullptr;         // where its uploads go
  ArrivedUploads* uploads = nullptr;                 // its server's (owned by the simulation)
  simgrid::s4u::Mailbox* results = nullptr;          // its own
  simgrid::s4u::Mailbox* control = nullptr;          // its own
  simgrid::s4u::Mailbox* help = nullptr;             // its own when it may help (arrival: none), else null
  // Per scenario device: helpers answer there. Shared by all devices (owned by the simulation): a
  // copy per device would cost devices^2 pointers.
  const std::vector<simgrid::s4u::Mailbox*>* peer_results = nullptr;
  const ExecutionTimeModel* time = &lut_mean_time();
};

class DeviceActor final : public ObservedDevice {
 public:
  explicit DeviceActor(DeviceSlice slice);
  void start();  // spawns this device's actor (a daemon)
  // The device's actor; it returns by itself at the drain's end (RequestLedger::hard_end_s).
  simgrid::s4u::ActorPtr actor() const { return actor_; }

  const Strategy& strategy() const override { return strategy_; }
  int unfinished() const override { return unfinished_; }
  int queued() const override { return static_cast<int>(exec_queue_.size() + up_queue_.size() + dp_pending_.size()); }
  bool busy() const override { return unfinished_ > 0; }
  long long completed() const override { return completed_; }
  double latency_sum_s() const override { return latency_sum_s_; }

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
  void create_request();  // one request now (strategy as of now), routed
  void route(SimRequest* r);
  void route_data_parallel();
  void try_create_closed_loop();
  bool accepting() const;  // joined, not left, before the end of arrivals
  void count_radio(double bytes);
  void on_finished(SimRequest* r);

  void use_binding(int b);  // the model new requests run from now on
  const ModelBinding& binding_of(const SimRequest* r) const { return s_.bindings[static_cast<size_t>(r->binding)]; }

  DeviceSlice s_;
  simgrid::s4u::ActorPtr actor_;
  Strategy strategy_;
  int binding_ = 0;  // index into s_.bindings
  int num_stages_;   // equal for every binding (variants keep the stages)
  int in_flight_limit_;
  int unfinished_ = 0;
  long long completed_ = 0;
  double latency_sum_s_ = 0;
  std::vector<std::vector<double>> bytes_at_split_;  // per binding: the spec's tensor bytes per split k (0..n), computed once
  std::string strategy_text_;

  std::deque<SimRequest*> exec_queue_, up_queue_, dp_pending_;
  SimRequest* computing_ = nullptr;  // request whose device stages run now
  SimRequest* uploading_ = nullptr;  // request on the uplink now
  SimRequest* arriving_ = nullptr;   // filled by the posted result receive
  simgrid::s4u::ExecPtr exec_;
  simgrid::s4u::CommPtr upload_, result_get_, control_get_;
  Strategy* incoming_strategy_ = nullptr;  // filled by the posted control receive
  bool helper_ = false;                    // may serve forwarded batches (arrival: none)
  HelpTask* incoming_help_ = nullptr;      // filled by the posted help receive
  HelpTask* helping_ = nullptr;            // the batch computing now (one at a time)
  simgrid::s4u::CommPtr help_get_;
  simgrid::s4u::ExecPtr help_exec_;
  DataParallelRouter dp_router_;
  ArrivalProcess arrivals_;
  RandomStream service_rng_;  // purpose service_time, index = device index: its own and helped executions
  RandomStream wire_rng_;     // purpose wire_bytes, index = device index: its requests' upload and result bytes
  double next_arrival_s_ = 0;
  double radio_bytes_window_ = 0, bytes_sent_ = 0, bytes_received_ = 0;
};

}  // namespace coinfer::sim
