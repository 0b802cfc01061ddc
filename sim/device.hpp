#pragma once
// One edge device in the simulation: an event handler over the device's own activities, run by
// SimGrid's kernel (sim/kernel_events.hpp: no actor, no stack, no context switch per event). Its
// activities: its computation (one request at a time on its single-core host; see below), its upload (one
// transfer at a time: its radio), the next result coming back (results arrive one at a time, in the
// order they were sent), the next scheduling message, a forwarded batch when it is an idle helper
// and, for open-loop workloads, the next arrival time (a kernel timer). After each completion it does
// what the device's event loop did after each wake-up (bench/RESULTS.md "Scale").
// The device's processor never runs two things at once: a device that creates requests computes them
// one at a time, and an idle helper (arrival: none) creates none and runs one forwarded batch at a
// time. So a computation of t seconds takes exactly t: it is a kernel timer, and the processor's energy
// is integrated here by the formula of SimGrid's host energy plugin for one core (idle power, plus
// busy - idle while it computes). (A SimGrid execution started by the kernel costs a scan of every
// other running one when it ends: SimGrid 3.32 keeps them in one list; see bench/RESULTS.md "Scale".)
// The request's life (arrivals, admission, routing, stage queues, data_parallel sides, completion) is
// the engine-free device loop the real device runtime runs too (core/device_loop.hpp); this adapter
// supplies simulated time, SimGrid transfers and LUT execution times (core/execution_time.hpp). Strategies (docs/ARCHITECTURE.md):
//   local: all stages here; offload: raw input to the server; pp(k): [0,k) here, [k,n) on the server,
//   pipelined (the device computes input i+1 while input i is on the link or the server);
//   data_parallel: each input goes whole to the device or whole to the server.
#include <simgrid/s4u.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/background_load.hpp"
#include "core/bandwidth_schedule.hpp"
#include "core/data_parallel_router.hpp"
#include "core/device_loop.hpp"
#include "core/ring_queue.hpp"
#include "core/server_lut_index.hpp"
#include "core/execution_time.hpp"
#include "core/model_key.hpp"
#include "core/model_spec.hpp"
#include "core/radio_energy.hpp"
#include "core/random_stream.hpp"
#include "core/scenario.hpp"
#include "sim/device_transfers.hpp"
#include "sim/kernel_events.hpp"
#include "sim/messages.hpp"
#include "sim/observation.hpp"

namespace coinfer::sim {

// One model the device may run (its model as named, or an execution variant a scheduler may choose).
// Shared by every device with the same type, hardware, model, dataset, variant choices and server type
// (the simulation binds each such group once: a million devices need not hold a million copies).
struct ModelBinding {
  std::string run_model;  // "gcn" or "gcn@int8": what model_under() gives for a strategy
  const ModelSpec* model = nullptr;
  const LutTable* lut = nullptr;  // this device's type, on its default processor
  // Per processor of the device (DeviceHardware order; [0] = lut): its table, null where it has none.
  std::vector<const LutTable*> processor_luts;
  std::vector<int> batch_group;  // per split k = 0..n: the batch group id at the server
  // From the model spec, computed once (bytes): the tensor crossing at split k = 0..n; the weights of
  // stages [0, k), k = 0..n; each stage's working set.
  std::vector<double> bytes_at_split, weight_prefix, stage_working;
};

// What one device sees of the run; built by the simulation, valid for the whole run.
struct DeviceSlice {
  int index = 0;
  const DeviceSpec* spec = nullptr;
  std::uint64_t seed = 0;  // the scenario's: arrivals and service-time draws
  AccessPointSpec access_point;
  double warmup_s = 0, duration_s = 0;  // the measurement window (energy)
  // [0]: the device's model as the scenario names it; then each variant its scheduler may choose
  // (DeviceSpec::variant_choices). A strategy names its binding through model_under(). Shared (owned
  // by the simulation).
  const std::vector<ModelBinding>* bindings = nullptr;
  // Every server's table for each binding (shared, owned by the simulation): a scheme may move the
  // device to any server whose table exists (Scheme::servers).
  const ServerLutIndex* server_tables = nullptr;
  // Helpers: (origin device, its binding) -> this type's LUT for that model; absent: cannot help it.
  std::map<std::pair<int, int>, const LutTable*> helper_luts;
  const BandwidthSchedule* bandwidth = nullptr;  // its link
  LoadSchedule load;                             // the share of its processors other work takes (events[].load)
  RequestLedger* ledger = nullptr;
  int server_index = -1;  // its server at the start (the scenario's index)
  // The platform (owned by the simulation): its hosts when SimGrid carries the transfers.
  const Platform* platform = nullptr;
  // Per server (scenario index), shared by all devices (owned by the simulation): where its arrived
  // uploads go, and whether it is up with the reasons requests then fail with (the simulation updates
  // it before telling the devices: set_server_available).
  std::vector<ArrivedUploads>* uploads = nullptr;
  const std::vector<ServerStatus>* server_status = nullptr;
  // Per scenario device: a helper sends results straight there. Shared by all devices (owned by the
  // simulation): a copy per device would cost devices^2 pointers.
  const std::vector<DeviceInbox*>* peers = nullptr;
  ActivityRetirement* retirement = nullptr;  // shared (owned by the simulation)
  TransferNetwork* transfers = nullptr;      // shared (owned by the simulation); null: SimGrid carries its transfers
  // Its handovers between access points (core/mobility.hpp), in time order, and what happens to a
  // transfer on its link when one starts (mobility.mid_transfer; wait: nothing to do).
  std::vector<DeviceHandover> handovers;
  MobilitySpec::MidTransfer mid_transfer = MobilitySpec::MidTransfer::wait;
  const ExecutionTimeModel* time = &lut_mean_time();
  // The run's batch group ids (owned by the simulation): the groups of pp(k,m)'s edge and cloud parts
  // are looked up when such a request is routed.
  BatchGroupIds* groups = nullptr;
};

class SimDevice final : public ObservedDevice, public DeviceInbox, private CompletionListener, private DeviceActions {
 public:
  explicit SimDevice(DeviceSlice slice);
  SimDevice(const SimDevice&) = delete;
  SimDevice& operator=(const SimDevice&) = delete;
  // The device's join (kernel context, at its join time; install_completion_dispatch() first): it
  // starts creating requests and takes what reached it before. Devices joining at the same time join
  // in scenario order (the simulation schedules them), so request ids follow that order.
  void join();
  // Cancels everything it has running or scheduled; it then takes nothing more (kernel context: the
  // drain's end, RequestLedger::hard_end_s, or a run stopped early). Unfinished requests stay so.
  void stop();

  // Server `server` failed or recovered (core/server_failures.hpp; its new status is in the slice's
  // server_status): the requests it held from this device (sent and awaiting a result) fail now with its
  // why_failed; an upload to it on the link then fails when it ends; while it is the device's server and
  // down, requests that reach their upload fail with its why_down. From an actor.
  void server_status_changed(int server);

  void send_result(SimRequest* r, Endpoint from) override;
  void send_dropped(SimRequest* r, Endpoint from, std::string why) override;
  void send_control(const ControlMessage* m, Endpoint from, double bytes) override;
  void send_help(HelpTask* t, Endpoint from, double bytes) override;
  void fail_request(SimRequest* r, const std::string& why) override;

  const Strategy& strategy() const override { return loop_.strategy(); }
  int unfinished() const override { return loop_.unfinished(); }
  int queued() const override { return loop_.queued(); }
  bool busy() const override { return loop_.unfinished() > 0; }
  long long completed() const override { return loop_.completed(); }
  double latency_sum_s() const override { return loop_.latency_sum_s(); }

  // Accounting read after the run (energy, bytes).
  // Some processor computing, within [warmup_s, duration_s] (s): the union over its processors.
  double busy_seconds_in_window() const { return busy_window_s_; }
  // Per processor (DeviceHardware order): its computing seconds within the window.
  const std::vector<double>& processor_busy_seconds_in_window() const { return proc_busy_window_s_; }
  // Memory peaks the device loop saw (bytes; core/device_loop.hpp).
  const std::vector<double>& pool_peak_bytes() const { return loop_.pool_peak_bytes(); }
  const std::vector<double>& processor_peak_bytes() const { return loop_.processor_peak_bytes(); }
  const DeviceHardware& hardware() const { return loop_.hardware(); }
  double radio_bytes_in_window() const { return radio_bytes_window_; }
  // Its radio's energy by power states (core/radio_energy.hpp) over the window; zero when its power
  // states no radio states (the flat rate: radio_bytes_in_window).
  RadioEnergy radio_energy() const { return radio_ ? radio_->energy() : RadioEnergy{}; }
  double bytes_sent() const { return bytes_sent_; }
  double bytes_received() const { return bytes_received_; }

 private:
  // Its activities, each told to on_activity_done by its hook.
  enum Slot { kUpload, kResultIn, kControlIn, kHelpIn, kSlots };
  // One kind of transfer to this device (DeviceInbox), carrying a `Payload`: those sent and not
  // started yet, the one on its way, and the one arrived and not yet taken (only one at a time: the
  // next starts once it is taken).
  template <class Payload>
  struct Inbound {
    struct Item {
      Endpoint from;
      std::uint64_t bytes;
      Payload payload;
    };
    explicit Inbound(int s) : slot(s) {}
    const int slot;  // its completion hook
    RingQueue<Item> waiting;
    DeviceTransfer transfer;
    Endpoint from;            // of the one on its way or arrived
    Payload payload{};        // of the one on its way or arrived
    bool held = false;        // on its way, its transfer to start again when a handover ends (mid_transfer: resend)
    std::uint64_t bytes = 0;  // of the one on its way or arrived
    double started_s = 0;     // when its transfer started
    bool arrived = false;
  };

  // The device loop's actions (core/device_loop.hpp), carried out in simulated time.
  DeviceRequest& new_request(double now_s) override;
  bool may_create() const override { return s_.ledger->may_create(); }
  double link_bytes_per_s(double now_s) override { return s_.bandwidth->bytes_per_s_at(now_s); }
  void routed(DeviceRequest& r) override;
  void start_compute(DeviceRequest& r) override;
  void start_upload(DeviceRequest& r) override;
  void start_help(std::int64_t task) override;
  void finished(DeviceRequest& r) override;
  double tensor_bytes(const DeviceRequest& r, int k) override;
  double weight_bytes(const DeviceRequest& r, int b, int e) override;
  double working_bytes(const DeviceRequest& r, int b, int e) override;
  double segment_seconds(const SimRequest& r, std::string& why);  // "" why: ran; else it cannot run

  void on_activity_done(int slot) override;
  void step();          // after every event: the loop's wake, then the timer for its next arrival
  void take_arrived();  // hands arrived results, scheduling messages and help to their handlers
  template <class Payload>
  void send(Inbound<Payload>& in, Endpoint from, double bytes, Payload payload);
  template <class Payload>
  void start_inbound(Inbound<Payload>& in);
  template <class Payload>
  void transfer_inbound(Inbound<Payload>& in);  // starts the transfer of the one on its way
  template <class Payload>
  void arrived(Inbound<Payload>& in);  // its transfer completed
  // Handovers (core/mobility.hpp "mid_transfer"): the timer for the next one from now, and what a
  // handover does to the upload and the result on the link (false: nothing was on it).
  void arm_handover();
  void on_handover();
  bool upload_caught(const DeviceHandover& h);
  bool result_caught(const DeviceHandover& h);
  void transfer_upload();  // starts the transfer of uploading_ to upload_server_
  // Processor `proc` (and `with`, a split segment's second) computes for `seconds` from now.
  void start_processor(int proc, int with, double seconds);
  void on_processor_done(int proc);
  void count_busy(double from_s, double to_s, double& into);
  void on_uploaded();
  void on_result(SimRequest* r);
  void on_help_arrived(HelpTask* t);
  void on_help_done();
  void apply_control(const ControlMessage& m);
  // The table of binding b on the device's current server (null: that server has none).
  const LutTable* server_lut(int b) const { return s_.server_tables->table(loop_.server(), s_.index, b); }
  void count_radio(double bytes);

  void use_binding(int b);  // the model new requests run from now on
  const std::vector<ModelBinding>& bindings() const { return *s_.bindings; }
  const ModelBinding& binding_of(const SimRequest* r) const { return bindings()[static_cast<size_t>(r->binding)]; }

  DeviceSlice s_;
  CompletionHook hooks_[kSlots];
  Inbound<SimRequest*> results_{kResultIn};
  Inbound<const ControlMessage*> control_{kControlIn};
  Inbound<HelpTask*> help_{kHelpIn};
  bool live_ = false, stopped_ = false;
  KernelTimer arrival_timer_;
  double arrival_timer_at_s_ = -1;
  std::vector<simgrid::s4u::ActivityPtr> cancelled_;  // kept until the device is destroyed (after the engine's run)
  // Why the server dropped each request whose notice is on its way (send_dropped), by request id: a
  // few at a time, kept here rather than a string in every request (32 bytes a request).
  std::vector<std::pair<std::int64_t, std::string>> drop_reasons_;
  int binding_ = 0;  // index into bindings()
  int num_stages_;   // equal for every binding (variants keep the stages)

  SimRequest* uploading_ = nullptr;  // request on the uplink now
  // Per processor: what it computes (a segment of request `id`, or a forwarded batch on processor 0).
  struct ProcessorRun {
    KernelTimer done;
    std::int64_t id = -1;
    bool help = false;
    bool busy = false;  // computing (as a split segment's second processor too)
    int with = -1;      // a split segment's second processor (busy until the same moment)
    std::string why;    // "" or why the segment could not run (it fails when `done` fires)
    double since_s = 0;
  };
  std::vector<ProcessorRun> proc_;
  int busy_processors_ = 0;
  double busy_since_s_ = 0;
  double busy_window_s_ = 0;
  std::vector<double> proc_busy_window_s_;
  DeviceTransfer upload_;
  KernelTimer handover_timer_;                 // the next handover (only where mid_transfer is not wait)
  std::size_t next_handover_ = 0;              // index into s_.handovers
  KernelTimer upload_resend_, result_resend_;  // a caught transfer starting again when its handover ends
  HelpTask* help_arrived_ = nullptr;           // taken from its transfer, not started yet
  HelpTask* helping_ = nullptr;                // the batch computing now (one at a time)
  std::int64_t help_tasks_ = 0;                // forwarded batches received so far (their ids for the loop)
  RandomStream service_rng_;                   // purpose service_time, index = device index: its own and helped executions
  RandomStream wire_rng_;                      // purpose wire_bytes, index = device index: its requests' upload and result bytes
  double radio_bytes_window_ = 0, bytes_sent_ = 0, bytes_received_ = 0;
  std::unique_ptr<RadioEnergyMeter> radio_;  // its uploads and results, when its power states radio states (most devices: none)
  double upload_started_s_ = 0;
  int upload_server_ = -1;             // where the upload on the link goes (scenario index)
  std::uint64_t upload_failures_ = 0;  // that server's failures when the upload started
  DeviceLoop loop_;                    // the request life (core/device_loop.hpp); last: it is built from the members above
};

}  // namespace coinfer::sim
