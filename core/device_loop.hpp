#pragma once
// One edge device's event loop, engine-free: the life of its requests from creation to completion,
// written once for the simulator (sim/device.cpp, simulated time) and the real device runtime
// (hw/device_runtime.cpp, wall clock). Shaped like Batsim's decision component: typed events in
// (join, wake, computed, uploaded, result, help arrived, help done, strategy), actions out through
// DeviceActions (start a computation, start an upload, start a forwarded batch, a request finished).
// The engine supplies time, transfers and compute; every rule below lives only here:
//   - arrivals: open loop from ArrivalProcess (the simulator's draws for (seed, device)); closed loop
//     by ArrivalProcess::admits on the queues as they are now; none before join, at or after leave,
//     at or after the end of arrivals, or once DeviceActions::may_create says no;
//   - routing (strategies, docs/ARCHITECTURE.md): local and pp(k) with k > 0 to the device's processor first,
//     offload (split 0) straight to the uplink, data_parallel to a side chosen by DataParallelRouter
//     (inputs wait while both sides are busy);
//   - processors: a request's device stages are a plan of segments, each on one of the
//     device's processors (DeviceHardware) or split between two that run it at once (the strategy's
//     placement; none: every device stage on processor 0, the device's default). Each processor runs
//     one segment at a time in arrival order (FIFO; a split segment starts when it heads both
//     processors' queues), the device pipelines across its processors as it does with its server;
//     a forwarded batch runs on processor 0 before the device's own queued segments; the uplink
//     sends one upload at a time, FIFO;
//   - memory (when some memory pool of the device has a capacity): at the start of a
//     segment, for each pool it touches, need = the weights its request's plan keeps in the pool +
//     the working sets of the segments running in the pool (this one's included; a split segment's
//     share on each processor) + in main memory the tensors held by the device's requests that wait
//     (inputs, tensors between segments, uploads not yet delivered); need > capacity: the segment
//     runs its time (its allocation fails somewhere in it; the whole time bounds the waste) and the
//     request then fails "out of memory on DEVICE:PROCESSOR (needs X MB, has Y MB)"; its working set
//     is not counted for the others. Forwarded batches are not counted. The figures come from
//     DeviceActions (the engine's model);
//   - completion: local and data_parallel-on-device requests finish when computed; the others when
//     their result arrives; a finished data_parallel request frees its side;
//   - deadlines (workload.deadline_ms with drop_late): a request found older than its deadline when it
//     would start its next device segment or its upload is dropped there (Status::dropped, the
//     failure saying where and how late); once uploaded it is the server's, which drops it when its
//     deadline passed before a worker or a helper takes its batch (core/server_loop.hpp), and the
//     device records it dropped when that result comes;
//   - the in-flight limit: workload.in_flight, or default_in_flight(strategy) when 0, re-read on every
//     new strategy; a request keeps the strategy (and split) it was created with.
// Calling convention: an engine delivers one event (on_*), then calls wake(now) once before it
// delivers the next event at a later instant; wake() creates what is due and starts idle stages.
// Times are seconds on the engine's clock (the run's time zero at 0); bytes/s for bandwidths. Not
// thread-safe (the real runtime calls it under its mutex); never blocks, never advances time.
#include <cstdint>
#include "core/ring_queue.hpp"
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/arrival_process.hpp"
#include "core/device_hardware.hpp"
#include "core/device_plan.hpp"
#include "core/data_parallel_router.hpp"
#include "core/request_record.hpp"
#include "core/scenario.hpp"
#include "core/strategy.hpp"

namespace coinfer {

// One request as the device loop knows it. Storage belongs to the engine (the simulator's ledger,
// the real runtime's table), which may derive from it; the address must stay valid until finished().
struct DeviceRequest {
  RequestRecord rec;
  int device_split = 0;  // the device runs [0, device_split); the server the rest
  // pp(k,m) (a cloud tier): m, where its edge passes it on to the cloud, set when routed
  // (core/cloud_handoff.hpp cloud_split_of); 0: none.
  int cloud_split = 0;
  std::int16_t segment = 0;              // the segment it is at (plan->segments[segment]; a plan has at most 64)
  bool data_parallel = false;            // created under data_parallel
  bool data_parallel_to_server = false;  // data_parallel input sent whole to the server
  // The loop's own bookkeeping (engines leave it alone): where the request is now.
  enum class Where : std::int8_t { waiting, on_stage, at_server, finished };
  Where where = Where::waiting;
  // Which tensor it holds in main memory while it waits (memory accounting only): its current
  // segment's input, or what it uploads; the bytes are asked again when it lets go (no storage).
  enum class Held : std::int8_t { none, segment_input, upload };
  Held held = Held::none;
  std::size_t live_index = 0;        // its place in the loop's list of unfinished requests
  const DevicePlan* plan = nullptr;  // its device stages (the loop's; set when routed)
};

// What the device loop asks its engine to do. Every call is made from inside a DeviceLoop call.
class DeviceActions {
 public:
  virtual ~DeviceActions() = default;
  // Storage for a new request, with rec.id, rec.device and rec.t_created = now set.
  virtual DeviceRequest& new_request(double now_s) = 0;
  // The loop created `r` (rec.strategy set; not routed yet): e.g. the real runtime journals it.
  virtual void created(DeviceRequest& r) { (void)r; }
  // False once the engine cannot hold more requests (the simulator's limits::kMaxRequests).
  virtual bool may_create() const { return true; }
  // The device's link bandwidth at now_s (bytes/s): asked only to route a data_parallel input.
  virtual double link_bytes_per_s(double now_s) = 0;
  // The request was routed (its device_split is final): the engine may attach what it needs (wire
  // bytes, the model variant, a batch group). Called once per request, before any stage starts.
  virtual void routed(DeviceRequest& r) { (void)r; }
  // Runs the request's current segment r.plan->segments[r.segment] (plus, for its last segment when it
  // goes on to the server, compressing what it sends); the engine calls on_computed when it is done.
  // With the default plan that is stages [0, device_split) on the device's default processor.
  virtual void start_compute(DeviceRequest& r) = 0;
  // Memory figures of r's model for the accounting (bytes per sample; asked only when the device has
  // a memory capacity): the tensors crossing split k, the weights of stages [b, e), and the working
  // set of running [b, e) (the largest of one stage's live inputs, output and workspace).
  virtual double tensor_bytes(const DeviceRequest& r, int k) {
    (void)r;
    (void)k;
    return 0;
  }
  virtual double weight_bytes(const DeviceRequest& r, int b, int e) {
    (void)r;
    (void)b;
    (void)e;
    return 0;
  }
  virtual double working_bytes(const DeviceRequest& r, int b, int e) {
    (void)r;
    (void)b;
    (void)e;
    return 0;
  }
  // Sends the request's state at its split to the server; the engine calls on_uploaded when the
  // server has it (or the upload failed).
  virtual void start_upload(DeviceRequest& r) = 0;
  // Runs the forwarded batch `task` (the engine's id) on the device's processor; the engine calls
  // on_help_done when it finished.
  virtual void start_help(std::int64_t task) = 0;
  // The request finished: rec.status, rec.failure and rec.t_result are final. The device loop no
  // longer refers to it; the engine may release its storage.
  virtual void finished(DeviceRequest& r) = 0;
};

// Why a request was dropped past its deadline (workload.drop_late), the one text for the device's and
// the servers' drops: "dropped WHERE: 35.388 ms old, past its deadline of 30 ms (workload.drop_late)"
// (its age rounded to the microsecond).
std::string late_drop_reason(const std::string& where, double age_s, double deadline_ms);
// A server's: "dropped at server S: 35.388 ms old, its deadline of 40 ms cannot be met (9 ms alone on
// the server)".
std::string server_drop_reason(const std::string& server, double age_s, double deadline_ms, double alone_s);

class DeviceLoop {
 public:
  // `device` and `actions` must outlive the loop. `num_stages`: the model's; `arrivals_end_s`: no
  // request is created at or after it. `seed`, `device_index`: the arrival stream (ArrivalProcess).
  // `server_index`: the server its requests go to (rec.server of a request that leaves the device;
  // -1 stays on one that runs whole here).
  DeviceLoop(const DeviceSpec& device, int device_index, int server_index, std::uint64_t seed, int num_stages, double arrivals_end_s,
             DataParallelCosts router_costs, DeviceActions& actions);

  // ---- events -----------------------------------------------------------------------------------
  // The device joins at `now_s` (its join time, or when the engine first may send): it creates
  // requests from now on; open-loop arrivals due before `now_s` are skipped.
  void on_join(double now_s);
  // Events name requests by id (rec.id): one the loop no longer knows, or not on that stage, is
  // ignored (it failed meanwhile), so an engine may deliver them late.
  // The current segment of request `id` ended (ok = false: it failed, `why` says how).
  void on_computed(std::int64_t id, double now_s, bool ok = true, const std::string& why = "");
  // Request `id` on the uplink reached the server (ok = false: the upload failed).
  void on_uploaded(std::int64_t id, double now_s, bool ok = true, const std::string& why = "");
  // The result of request `id` arrived (ok = false: the server failed it). A result may overtake its
  // own upload's event (the real server answers before the sending thread returns): the uplink is
  // then free, and the late on_uploaded is ignored.
  // `dropped`: the server gave the request up past its deadline (workload.drop_late; Status::dropped).
  void on_result(std::int64_t id, double now_s, bool ok = true, const std::string& why = "", bool dropped = false);
  // The same for an engine that holds the request itself (its storage lives past finished()).
  void on_result(DeviceRequest& r, double now_s, bool ok = true, const std::string& why = "", bool dropped = false);
  // A request not on a stage (queued, waiting for a side, or at the server) failed: e.g. the
  // connection to the server was lost. A request on a stage fails through its stage's event.
  void fail(std::int64_t id, double now_s, const std::string& why);
  // The end of the run for the engine (the drain's end, a refused registration): every unfinished
  // request fails, `why(request)` saying why, and the loop stops (stop()).
  void abandon(const std::function<std::string(const DeviceRequest&)>& why);
  // Forwarded work for this device as a helper: it runs before the device's own queued requests.
  void on_help_arrived(std::int64_t task);
  void on_help_done();
  // A new strategy from the scheduler: requests created from now on use it.
  void on_strategy(const Strategy& s);
  // Closed loop: whether new inputs may be created now (the real runtime pauses them while it
  // reconnects to its server); open-loop arrivals keep coming.
  void set_admission_paused(bool paused);
  // Its server failed (up = false; `why` the reason its requests then fail with) or came back
  // (core/server_failures.hpp). While it is down: a request that reaches its upload fails there with
  // `why`, a closed loop whose strategy needs the server creates nothing (local ones go on), and
  // data_parallel sends every input to the device. The requests the server held are failed by the
  // engine (on_result with ok = false), which knows which ones it lost.
  void set_server_available(bool up, const std::string& why = "");
  bool server_up() const { return server_down_why_.empty(); }
  // The scheduler moved the device to server `server_index` (Scheme::servers), which is up or down as
  // `up` and `why` say (set_server_available). Requests that have not started their upload go there
  // (their rec.server changes); one uploading or at a server finishes where it is.
  void set_server(int server_index, bool up, const std::string& why = "");
  int server() const { return server_; }
  // New data_parallel costs (the engine switched to another model variant); busy sides are kept.
  void set_data_parallel_costs(DataParallelCosts c) { router_.set_costs(c); }
  // The loop is over (the drain's end, or the run stopped): nothing more is created or started, and
  // later events are ignored. Unfinished requests stay as they are (unfinished()).
  void stop();

  // After every event (and at next_arrival_s()): creates the arrivals due by `now_s`, routes waiting
  // data_parallel inputs, admits closed-loop inputs, and starts idle stages.
  void wake(double now_s);

  // ---- what it looks like now ------------------------------------------------------------------
  // The next open-loop arrival (+infinity: none); the engine wakes the loop then.
  double next_arrival_s() const { return next_arrival_s_; }
  bool joined() const { return joined_; }
  bool stopped() const { return stopped_; }
  const Strategy& strategy() const { return strategy_; }
  int in_flight_limit() const { return in_flight_limit_; }
  int unfinished() const { return static_cast<int>(live_.size()); }
  // Requests waiting for a stage or a side (not on a stage, not at the server).
  int queued() const;
  bool helping() const { return helping_; }
  // Some processor computes (a segment or a forwarded batch).
  bool processor_busy() const;
  // Memory (bytes): the highest need seen at a segment's start, per pool of the device's hardware
  // (DeviceHardware::pool_names), and per processor (its resident weights and running working sets).
  const std::vector<double>& pool_peak_bytes() const { return pool_peak_; }
  const std::vector<double>& processor_peak_bytes() const { return proc_peak_; }
  const DeviceHardware& hardware() const { return *hw_; }
  bool helper_work_waiting() const { return !help_queue_.empty(); }
  long long completed() const { return completed_; }  // finished ok since the start
  long long failed() const { return failed_; }
  double latency_sum_s() const { return latency_sum_s_; }  // of the completed ones (s)
  // The unfinished requests, in creation order; at_server: only those sent and awaiting a result.
  std::vector<DeviceRequest*> unfinished_requests(bool at_server_only = false) const;
  // Whether the closed-loop rule admits a new input now (ignores pauses and the arrival window).
  bool closed_loop_admits() const;

  // Conformance tracing (tests/conformance): while a sink is set, every loop of the process writes
  // each event it receives and each action it takes as one line, "event args" or "> action args",
  // with its device index; times as %.17g (they read back exactly). Not for production use: one sink
  // per process, no locking.
  using TraceSink = std::function<void(int device, const std::string& line)>;
  static void set_trace_sink(TraceSink sink);

 private:
  bool accepting(double now_s) const;
  void create(double now_s);
  void route(DeviceRequest& r);
  void route_data_parallel(double now_s);
  void start_idle_stages(double now_s);
  const DevicePlan* plan_for(const Strategy& s);
  void enqueue_segment(DeviceRequest& r);
  void start_segment(DeviceRequest& r, double now_s);
  std::string memory_shortfall(DeviceRequest& r);         // "" or the out-of-memory reason
  void hold(DeviceRequest& r, DeviceRequest::Held what);  // Held::none lets go
  std::vector<double> need_, proc_need_;                  // memory_shortfall's scratch
  bool running(const DeviceRequest* r) const;
  void drop_from_processors(const DeviceRequest* r);
  void finish(DeviceRequest& r, bool ok, const std::string& why, bool holds_side, bool dropped = false);
  // workload.drop_late: whether `r` is past its deadline now, and giving it up (Status::dropped).
  bool past_deadline(const DeviceRequest& r, double now_s) const;
  void drop(DeviceRequest& r, double now_s, const std::string& where);
  void trace(const std::string& line) const;  // holds_side: a data_parallel side is its

  const DeviceSpec& device_;
  DeviceActions& act_;
  int device_index_;
  int server_;
  int num_stages_;
  double arrivals_end_s_;
  ArrivalProcess arrivals_;
  DataParallelRouter router_;  // where a data_parallel input goes (core/data_parallel_router.hpp)
  Strategy strategy_;
  std::string strategy_text_;
  int in_flight_limit_;
  bool joined_ = false, stopped_ = false, admission_paused_ = false;
  std::string server_down_why_;  // "" while its server is up
  long long given_up_ = 0;       // requests dropped past their deadline or failed at a down server (wake's re-admission)
  double next_arrival_s_;
  struct Processor {
    RingQueue<DeviceRequest*> queue;  // segments waiting for it, FIFO
    DeviceRequest* running = nullptr;
    double working_bytes = 0;  // of the running segment's share (memory accounting)
  };
  std::shared_ptr<const DeviceHardware> hw_;  // the device's, or one unnamed processor
  std::vector<Processor> procs_;
  std::map<std::string, DevicePlan> plans_;   // by placement text + "/" + device split; nodes stay put
  const DevicePlan* plan_ = nullptr;          // the current strategy's (not data_parallel)
  const DevicePlan* local_plan_ = nullptr;    // a data_parallel input run whole here (processor 0)
  const DevicePlan* offload_plan_ = nullptr;  // ... or sent whole to the server
  bool memory_limited_ = false;
  double held_total_ = 0;
  std::vector<std::pair<DeviceRequest*, std::string>> out_of_memory_;  // running segments that do not fit, and why
  std::vector<double> pool_peak_, proc_peak_;
  RingQueue<DeviceRequest*> up_queue_, data_parallel_waiting_;
  RingQueue<std::int64_t> help_queue_;
  DeviceRequest* uploading_ = nullptr;
  bool helping_ = false;
  using Where = DeviceRequest::Where;
  // The unfinished requests (each knows its index: O(1) removal; a lookup by id scans them, which only
  // the real runtime's events need, at its modest rate).
  std::vector<DeviceRequest*> live_;
  DeviceRequest* find_live(std::int64_t id) const;
  long long completed_ = 0, failed_ = 0;
  double latency_sum_s_ = 0;
};

}  // namespace coinfer
