#include "hw/device_runtime.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <fstream>

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <iostream>
#include <map>
#include <mutex>
#include <limits>
#include <set>
#include <thread>

#include "core/run_assembly.hpp"
#include "core/server_failures.hpp"
#include "core/bandwidth_schedule.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/mobility.hpp"
#include "core/text_util.hpp"
#include "hw/auth.hpp"
#include "hw/batch_runner.hpp"
#include "hw/compute_threads.hpp"
#include "hw/connection.hpp"
#include "hw/registration.hpp"
#include "hw/cpu_cap.hpp"
#include "hw/protocol.hpp"
#include "hw/device_requests.hpp"
#include "hw/record_journal.hpp"
#include "hw/tracking_allocator.hpp"
#include "plumbing/child_process.hpp"
#include "models/model_runner.hpp"

namespace coinfer::hw {

namespace {
using Seconds = std::chrono::duration<double>;

using Refused = RegistrationRefused;

}  // namespace

struct DeviceRuntime::Impl {
  Scenario sc;
  ModelCatalog catalog;
  LutSet luts;
  DeviceOptions opt;
  int index = 0;
  ModelSpec spec;
  int num_stages = 0;                                // of its model
  std::unique_ptr<models::DeviceModelRunner> model;  // its model and inputs (LibTorch behind it)
  std::vector<std::string> torch_devices;            // per processor slot: the LibTorch device computing it, "" none
  BandwidthSchedule schedule;
  std::shared_ptr<const BandwidthSchedule> shared_schedule;  // the same, for the connection's pacing (opt.shape)
  ServerAvailability availability;                           // the scenario's server failures (the testbed carries them out)
  // Its handovers where a transfer caught by one does not wait through it (mobility.mid_transfer
  // resend or fail; empty under wait): the server decides for uploads, this device for results.
  std::vector<DeviceHandover> handovers;
  double last_result_arrival = -1e300;  // run s: a result starts crossing the link once the previous has arrived (reader thread only)
  // Results a handover caught under resend, kept until their copy arrives (reader thread only); at most
  // kMaxHeldResults, then such a result fails, saying so.
  static constexpr size_t kMaxHeldResults = 4096;
  std::map<std::uint64_t, std::pair<Frame, std::size_t>> held_results;
  // Uploads the server asked for again (a handover caught them): sent before any new upload, each not
  // before its handover ends, as the simulator holds the uplink for a resend (under mutex).
  std::deque<std::pair<std::uint64_t, ResendRequest>> copies_to_send;
  std::unique_ptr<JournalWriter> journal;
  std::unique_ptr<DeviceRequests> rq;  // requests and stage queues (hw/device_requests.hpp), under mutex

  std::mutex mutex;            // guards the members and calls marked "under mutex" / "mutex held"
  std::condition_variable cv;  // any state change
  bool helper = false;
  std::shared_ptr<Connection> conn;  // to its server now (under mutex)
  // Several servers (hw/README.md "Several edge servers"). Where its server now listens (under mutex).
  std::string server_host;
  int server_port = 0;
  // The scheme moved it (a scheduling message naming another server): where to, until it has
  // registered there (under mutex).
  std::optional<std::pair<int, std::string>> move_to;  // server index, "host:port"
  // The connections to servers it moved away from, kept until the requests that went there are over
  // ("in-flight requests finish where they started"); each with its own reader (under mutex).
  struct Draining {
    int server = -1;
    std::shared_ptr<Connection> conn;
    std::thread reader;
  };
  std::vector<Draining> draining;
  // The readers' own state (last_result_arrival, held_results, the clock estimate) when a draining
  // connection's reader runs beside the current one.
  std::mutex reader_mutex;
  bool arrivals_over = false;
  bool ever_connected = false;
  bool finished = false;
  const std::atomic<bool>* stop = nullptr;
  Child meter;                // the power meter command (opt.power_command), if any
  ClockEstimate clock;        // offset to the server's clock (reader thread only)
  bool epochs_noted = false;  // the journal has both time zeros
  int beats = 0;
  std::int64_t next_help_batch = 0;                // under mutex
  std::map<std::int64_t, ModelSpec> helper_specs;  // helper batch -> its origin's model (under mutex)

  double device_unix() const { return unix_now() + opt.clock_skew_s; }  // this device's clock
  double now() const { return device_unix() - opt.epoch_unix_s; }
  void log(const std::string& s) const {
    if (opt.log)
      opt.log(s);
    else
      log::info("device", opt.device_id + ": " + s);
  }
  bool stopping() const { return *stop || finished; }

  // --- the device loop (core/device_loop.hpp through hw/device_requests.hpp), mutex held --------------
  // After every event: the loop creates what is due and starts idle stages; the threads wake.
  void wake() {
    const double t = now();
    rq->loop().set_admission_paused(!conn && strategy().kind != Strategy::Kind::local);
    rq->loop().wake(t);
    cv.notify_all();
  }
  const Strategy& strategy() const { return rq->loop().strategy(); }

  // --- threads -----------------------------------------------------------------------------------
  // The loop's clock: joins at the first registration (arrivals due before it are skipped), then wakes
  // the loop at each open-loop arrival (and every 50 ms for the closed loop's admission). While
  // reconnecting, a closed loop pauses (unless local) and open-loop arrivals still come: they are
  // recorded failed ("not connected to the server"), not lost.
  void arrivals_loop() {
    const WorkloadSpec& w = sc.devices[index].workload;
    const double end = std::min(sc.duration_s, sc.devices[index].leave_at_s);
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping() && w.arrival != WorkloadSpec::Arrival::none) {
      if (!ever_connected) {
        cv.wait_for(lock, Seconds(0.02));
        continue;
      }
      const double t = now();
      if (t >= end) break;
      wake();
      const double next = rq->loop().next_arrival_s();
      if (w.arrival != WorkloadSpec::Arrival::closed_loop && next == std::numeric_limits<double>::infinity()) break;
      cv.wait_for(lock, Seconds(std::max(0.0, std::min(0.05, next - t))));
    }
    arrivals_over = true;
    cv.notify_all();
  }

  // The device's work threads join the work cap (DeviceOptions::work_cpu_cores).
  std::unique_ptr<CpuCap> work_cap;
  std::mutex work_threads_m;
  void join_work_cap(const char* what) {
    if (!opt.work_threads_file.empty()) {
      std::lock_guard<std::mutex> lock(work_threads_m);
      std::ofstream(opt.work_threads_file, std::ios::app) << static_cast<long>(::syscall(SYS_gettid)) << "\n" << std::flush;
    }
    if (!work_cap) return;
    try {
      work_cap->add_calling_thread();
    } catch (const std::exception& e) {
      if (opt.log) opt.log(std::string("the ") + what + " thread runs uncapped: " + e.what());
    }
  }

  // Processor `proc`'s compute thread: the segments the loop starts there (and, on processor 0, the
  // batches forwarded to this device as a helper). Processors compute at once.
  void compute_loop(int proc) {
    join_work_cap("compute");
    set_compute_threads(opt.threads);
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping()) {
      std::optional<ComputeJob> job = rq->take_compute(proc);
      if (!job) {
        cv.wait_for(lock, Seconds(0.5));
        continue;
      }
      if (const HelperBatch* help = std::get_if<HelperBatch>(&*job)) {
        const ModelSpec origin_model = helper_specs.at(help->batch);
        helper_specs.erase(help->batch);
        lock.unlock();
        run_helper_batch(*help, origin_model);
        lock.lock();
        rq->loop().on_help_done();
        wake();
        continue;
      }
      const RequestStages own = std::get<RequestStages>(*job);
      lock.unlock();
      std::string bytes, error;
      try {
        if (own.with >= 0) throw std::invalid_argument("a stage split between two processors runs in the simulator only");
        bytes = model->run_segment(own.request, own.proc, own.begin, own.end, own.split);
      } catch (const TensorMemoryExhausted& e) {  // the board's memory limit (memory_gb): as the simulator says it
        error = out_of_memory_text(e);
      } catch (const std::exception& e) {
        error = "device stages failed: " + std::string(e.what());
      }
      lock.lock();
      if (own.end == own.split && own.split < num_stages) rq->keep_state(own.request, std::move(bytes));
      rq->loop().on_computed(own.request, now(), error.empty(), error);
      wake();
    }
  }

  // A forwarded batch, run as one batch (as the simulator runs it and as the server would have) with
  // the origin's model; one result per task, each saying the batch's size.
  // The reason a request fails when the board's memory limit (TrackingAllocator) refused a tensor.
  std::string memory_processor;  // the processor this machine's CPU stands for
  std::string out_of_memory_text(const TensorMemoryExhausted& e) const {
    return out_of_memory_reason(opt.device_id, memory_processor, static_cast<double>(e.need), static_cast<double>(e.have));
  }

  BatchRunner helper_runner;  // compute thread only
  void run_helper_batch(const HelperBatch& job, const ModelSpec& origin_model) {
    ResultHeader r;
    r.batch_size = static_cast<int>(job.parts.size());
    r.t_batch_start = device_unix();
    std::vector<std::string> outputs(job.parts.size());
    try {
      std::vector<const std::string*> states;
      for (const HelperPart& p : job.parts) states.push_back(&p.state_bytes);
      outputs = helper_runner.run(origin_model, states);
    } catch (const std::exception& e) {
      r.ok = false;
      r.error = std::string("helper failed: ") + e.what();
    }
    r.t_batch_end = device_unix();
    std::shared_ptr<Connection> c;
    {
      std::lock_guard<std::mutex> lock(mutex);
      c = conn;
    }
    if (!c) return;  // the server reports it failed to the origin when we disconnected
    for (size_t i = 0; i < job.parts.size(); ++i) {
      try {
        c->send({MsgType::result, static_cast<std::uint64_t>(job.parts[i].task), pack_result(r, r.ok ? outputs[i] : std::string())});
      } catch (const std::exception& e) {
        log(std::string("helper result not delivered: ") + e.what());
        return;
      }
    }
  }

  void upload_loop() {
    join_work_cap("upload");
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping()) {
      if (!copies_to_send.empty()) {
        send_copy(lock);
        continue;
      }
      std::optional<UploadJob> job = rq->take_upload();
      if (!job) {
        cv.wait_for(lock, Seconds(0.5));
        continue;
      }
      std::shared_ptr<Connection> c = connection_for(job->id);
      if (!c) {
        rq->loop().on_uploaded(job->id, now(), false, "not connected to the server");
        wake();
        continue;
      }
      lock.unlock();
      std::string error;
      try {
        std::string bytes = std::move(job->state_bytes);
        if (job->split == 0) bytes = model->input_state(job->id);
        TaskHeader th{job->split, opt.device_id, device_unix()};
        th.cloud_split = job->cloud_split;
        {
          std::lock_guard<std::mutex> relock(mutex);
          if (const RequestRecord* r = rq->find(job->id)) th.t_created = opt.epoch_unix_s + r->t_created;
        }
        const std::string payload = pack_task(th, bytes);
        {
          // What goes on the wire, recorded before the result can overtake this thread.
          std::lock_guard<std::mutex> relock(mutex);
          if (RequestRecord* r = rq->find(job->id)) r->bytes_up = static_cast<double>(kHeaderBytes + payload.size());
        }
        c->send({MsgType::task, static_cast<std::uint64_t>(job->id), payload}, Seconds(60));
      } catch (const std::exception& e) {
        error = e.what();
      }
      lock.lock();
      // Sent on a connection that has been lost meanwhile: no result will come on it.
      if (error.empty() && connection_for(job->id) != c) error = "connection to the server lost";
      // An upload cut by the scenario's failure of its server fails as in the simulator (nobody received it).
      const RequestRecord* sent = rq->find(job->id);
      const std::string failed = error.empty() ? "" : scheduled_failure_reason(now(), sent ? sent->server : -1);
      rq->loop().on_uploaded(job->id, now(), error.empty(), failed.empty() ? "upload failed: " + error : failed);
      wake();
    }
  }

  // The first of copies_to_send: once its handover has ended, a task frame marked `copy` as long as
  // the upload the server kept (lock held on entry and on return; released while sending).
  void send_copy(std::unique_lock<std::mutex>& lock) {
    const double wait_s = copies_to_send.front().second.not_before_unix_s - device_unix();
    if (wait_s > 0) {
      cv.wait_for(lock, Seconds(std::min(wait_s, 0.2)));
      return;
    }
    const auto [task, req] = copies_to_send.front();
    copies_to_send.pop_front();
    std::shared_ptr<Connection> c = connection_for(static_cast<std::int64_t>(task));
    if (!c) return;  // lost: lose_connection() failed its request
    lock.unlock();
    try {
      TaskHeader th{0, opt.device_id, device_unix()};  // split: ignored (the server computes the copy it kept)
      th.copy = true;
      const size_t head = pack_task(th, "").size();
      const size_t filler = static_cast<size_t>(req.bytes) > head ? static_cast<size_t>(req.bytes) - head : 0;
      c->send({MsgType::task, task, pack_task(th, incompressible_filler(filler, task))}, Seconds(60));
    } catch (const std::exception& e) {
      log(std::string("copy of an upload not sent: ") + e.what());
    }
    lock.lock();
  }

  // The server asks for an upload's bytes again (a handover caught them; mobility.mid_transfer: resend).
  void on_resend_request(const Frame& f) {
    ResendRequest q = decode_resend(f.payload);
    // Not before the handover ends; at most one handover from now (the server's clock may be ahead).
    q.not_before_unix_s = std::min(q.not_before_unix_s, device_unix() + sc.mobility.handover_ms * 1e-3);
    std::lock_guard<std::mutex> lock(mutex);
    RequestRecord* r = rq->find(static_cast<std::int64_t>(f.task_id));
    if (!r) return;  // already over (e.g. failed with a lost connection)
    ++r->resends;
    copies_to_send.emplace_back(f.task_id, q);
    wake();
  }

  // A result frame: a handover on this device's link while it crossed it (core/mobility.hpp
  // "mid_transfer": from the server handing it over, or the previous result's arrival, to now) fails
  // it or keeps it until a copy has crossed the link too; otherwise it completes its request.
  void on_result(Connection& c, Frame f, std::size_t frame_bytes) {
    std::lock_guard<std::mutex> readers(reader_mutex);
    const std::uint64_t task = f.task_id;
    std::string out;
    ResultHeader h = unpack_result(f.payload, out);
    const double arrived = now();
    const double started = std::max(h.t_sent - opt.epoch_unix_s, last_result_arrival);
    last_result_arrival = arrived;
    const bool on_link = h.copy || (h.ok && !h.dropped);  // a payload the device needs (failures carry none)
    const DeviceHandover* caught = on_link ? handover_catching(handovers, started, arrived) : nullptr;
    if (h.copy) {
      auto held = held_results.find(f.task_id);
      if (held == held_results.end()) return;  // its request is over meanwhile
      if (!caught) {                           // the copy crossed: the first copy completes the request
        std::pair<Frame, std::size_t> first = std::move(held->second);
        held_results.erase(held);
        out.clear();
        h = unpack_result(first.first.payload, out);
        complete_result(first.first, first.second, h);
        return;
      }
    }
    if (caught) {
      if (sc.mobility.mid_transfer == MobilitySpec::MidTransfer::fail || (!h.copy && held_results.size() >= kMaxHeldResults)) {
        // Failed with what the server's stamps say of it, as the simulator's record of a result caught so.
        complete_result(
            f, frame_bytes, h,
            sc.mobility.mid_transfer == MobilitySpec::MidTransfer::fail
                ? handover_failure(*caught, false)
                : "a handover caught its result and " + std::to_string(kMaxHeldResults) + " caught results already wait for their copies");
        return;
      }
      std::lock_guard<std::mutex> lock(mutex);
      RequestRecord* r = rq->find(static_cast<std::int64_t>(f.task_id));
      if (!r) return;
      ++r->resends;
      log("a handover (" + caught->from_access_point + " to " + caught->access_point + " at " + format_double(caught->at_s) +
          " s) caught the result of task " + std::to_string(task) + ": asking for it again");
      if (!h.copy) held_results.emplace(task, std::make_pair(std::move(f), frame_bytes));
      try {
        c.send(
            {MsgType::resend, task, encode(ResendRequest{static_cast<std::int64_t>(frame_bytes - kHeaderBytes), opt.epoch_unix_s + caught->ends_s})},
            Seconds(2));
      } catch (const std::exception& e) {
        log(std::string("resend request not delivered: ") + e.what());
      }
      return;
    }
    complete_result(f, frame_bytes, h);
  }

  // Its request ends with this result: failed when `handover_failed` says why (the result itself came).
  void complete_result(const Frame& f, std::size_t frame_bytes, const ResultHeader& h, const std::string& handover_failed = "") {
    std::lock_guard<std::mutex> lock(mutex);
    RequestRecord* found = rq->find(static_cast<std::int64_t>(f.task_id));
    if (!found) return;  // already failed (e.g. after a reconnection)
    RequestRecord& r = *found;
    r.bytes_down = static_cast<double>(frame_bytes);
    // The server's stamps, those it set (0: not reached; e.g. an upload failed at a handover never ran).
    if (h.t_received > 0) r.t_uplink_end = h.t_received - opt.epoch_unix_s;
    // The server failed its upload at a handover (mobility.mid_transfer: fail): not uploaded, as in
    // the simulator's record, though this device's send had returned.
    if (!h.ok && is_handover_failure(h.error)) r.t_uplink_end = std::numeric_limits<double>::quiet_NaN();
    if (h.t_queued > 0) r.t_queued = h.t_queued - opt.epoch_unix_s;
    if (!h.dropped && h.t_batch_end > 0) {  // a dropped one never ran
      r.t_batch_start = h.t_batch_start - opt.epoch_unix_s;
      r.t_batch_end = h.t_batch_end - opt.epoch_unix_s;
      r.batch_size = h.batch_size;
      r.helper = h.helper.empty() ? -1 : sc.device_index(h.helper);
    }
    if (!h.cloud.empty()) {  // pp(k,m): its edge passed it on to this cloud (hw/README.md "Cloud tier")
      r.cloud = sc.server_index(h.cloud);
      r.bytes_to_cloud = h.cloud_bytes;
      if (h.t_cloud_queued > 0) r.t_cloud_queued = h.t_cloud_queued - opt.epoch_unix_s;
      if (h.t_cloud_batch_end > 0) {
        r.t_cloud_batch_start = h.t_cloud_batch_start - opt.epoch_unix_s;
        r.t_cloud_batch_end = h.t_cloud_batch_end - opt.epoch_unix_s;
        r.cloud_batch_size = h.cloud_batch_size;
      }
    }
    if (!handover_failed.empty())
      rq->loop().on_result(r.id, now(), false, handover_failed);
    else
      rq->loop().on_result(r.id, now(), h.ok,
                           h.dropped || is_handover_failure(h.error) || is_server_failure(h.error) ? h.error : "server: " + h.error, h.dropped);
    wake();
  }

  void apply(const Assignment& a) {
    Strategy s;
    try {
      s = parse_strategy(a.strategy);
      if (s.kind == Strategy::Kind::pp) spec.check_split(s.split);
      if (!s.variant.empty() && model_under(spec.name, s) != spec.name)
        throw std::invalid_argument("strategy " + s.to_string() + " names another model variant than " + spec.name +
                                    ": the testbed runs each device's model as the scenario names it");
    } catch (const std::exception& e) {
      throw ProtocolError(std::string("scheduling message: ") + e.what());
    }
    const int to = a.server.empty() ? -1 : sc.server_index(a.server);
    if (!a.server.empty() && to < 0) throw ProtocolError("scheduling message: unknown server '" + a.server + "'");
    std::lock_guard<std::mutex> lock(mutex);
    if (s != strategy()) {
      log("strategy " + strategy().to_string() + " -> " + s.to_string());
      rq->loop().on_strategy(s);
    }
    helper = a.helper;
    if (to >= 0 && to != rq->loop().server()) {
      log("moved to server " + a.server + " at " + a.address + ": registering there; requests on their way finish where they are");
      move_to = std::make_pair(to, a.address);
    }
    wake();
  }

  // Connects and registers; returns the connection, throws Refused or ConnectionClosed.
  std::shared_ptr<Connection> connect_and_register(const std::string& host, int port, bool moved) {
    std::shared_ptr<Connection> c = Connection::connect(host, port, Seconds(3));
    auto hello = c->receive(Seconds(5));
    if (!hello || hello->type != MsgType::hello) throw ConnectionClosed("no hello from the server");
    const Hello h = decode_hello(hello->payload);
    Registration r;
    r.device_id = opt.device_id;
    r.type = sc.devices[index].type;
    r.model = sc.devices[index].model;
    r.dataset = sc.devices[index].dataset;
    r.generates = sc.devices[index].workload.arrival != WorkloadSpec::Arrival::none;
    r.hmac = hmac_sha256_hex(opt.secret, h.nonce + opt.device_id);
    r.moved = moved;
    c->send({MsgType::register_, 0, encode(r)}, Seconds(5));
    auto reply = c->receive(Seconds(10));
    if (!reply) throw ConnectionClosed("no answer to the registration");
    if (reply->type == MsgType::error) throw Refused("the server refused the registration: " + decode_error(reply->payload));
    if (reply->type == MsgType::redirect) {
      const Redirect to = decode_redirect(reply->payload);
      if (sc.server_index(to.server) < 0) throw ProtocolError("redirect to unknown server '" + to.server + "'");
      throw RegistrationRedirected(to.server, to.address);
    }
    if (reply->type != MsgType::registered) throw ConnectionClosed("unexpected answer to the registration");
    const Assignment a = decode_assignment(reply->payload);
    if (a.epoch_unix_s > 0 && !epochs_noted) {
      journal->epochs(opt.epoch_unix_s, a.epoch_unix_s);
      epochs_noted = true;
    }
    apply(a);
    return c;
  }

  // A forwarded batch whose tasks are still arriving (read_loop's own, per connection).
  struct Collecting {
    int size = 1, split = 0, origin = -1;
    std::vector<HelperPart> parts;
  };

  void read_loop(std::shared_ptr<Connection> c, bool fresh = true) {
    std::map<std::uint64_t, Collecting> collecting;
    if (fresh) {  // their copies were to come on the previous connection (its reader has been joined)
      std::lock_guard<std::mutex> readers(reader_mutex);
      held_results.clear();
    }
    try {
      while (!stopping()) {
        auto f = c->receive(Seconds(0.2));
        if (!f) continue;
        switch (f->type) {
          case MsgType::result:
            on_result(*c, std::move(*f), kHeaderBytes + f->payload.size());
            break;
          case MsgType::resend:
            on_resend_request(*f);
            break;
          case MsgType::scheduling:
            apply(decode_assignment(f->payload));
            break;
          case MsgType::task: {
            // Work forwarded to this helper: collected until its batch is complete (hw/README.md).
            std::string bytes;
            const TaskHeader th = unpack_task(f->payload, bytes);
            const int origin = sc.device_index(th.origin);
            if (origin < 0) throw ProtocolError("forwarded task of unknown device '" + th.origin + "'");
            Collecting& b = collecting[th.batch == 0 ? ~f->task_id : th.batch];
            if (b.parts.empty()) {
              if (collecting.size() > 16) throw ProtocolError("more than 16 forwarded batches incomplete at once");
              b.size = th.batch_size;
              b.split = th.split;
              b.origin = origin;
            } else if (b.size != th.batch_size || b.split != th.split || b.origin != origin) {
              throw ProtocolError("forwarded batch " + std::to_string(th.batch) + ": its tasks disagree on size, split or origin");
            }
            b.parts.push_back({static_cast<std::int64_t>(f->task_id), std::move(bytes)});
            if (static_cast<int>(b.parts.size()) < b.size) break;
            Collecting done = std::move(b);
            collecting.erase(th.batch == 0 ? ~f->task_id : th.batch);
            std::lock_guard<std::mutex> lock(mutex);
            const std::int64_t id = next_help_batch++;
            helper_specs[id] =
                catalog.instantiate(sc.devices[static_cast<size_t>(done.origin)].model, sc.devices[static_cast<size_t>(done.origin)].dataset);
            rq->add_helper_batch(id, done.split, std::move(done.parts));
            wake();
            break;
          }
          case MsgType::heartbeat: {
            const double t4 = device_unix();
            const ClockEcho e = decode_clock_echo(f->payload);
            std::lock_guard<std::mutex> readers(reader_mutex);
            if (e.t1 > 0 && clock.add(clock_sample(e.t1, e.t2, e.t3, t4))) journal->clock(clock.offset_s(), clock.uncertainty_s(), clock.samples());
            break;
          }
          case MsgType::error:
            log("server said: " + decode_error(f->payload));
            break;
          default:
            throw ProtocolError(std::string("unexpected ") + to_string(f->type) + " from the server");
        }
      }
    } catch (const std::exception& e) {
      if (!stopping() && !c->closed()) log(std::string("connection lost: ") + e.what());
    }
    c->close();
  }

  // The connection is gone: what the server held is lost. When the scenario's failure of its server
  // explains it (a fail event at or before now, no recover since: `coinfer testbed` killed the server),
  // the requests fail with the simulator's reasons (core/server_failures.hpp) and the
  // loop treats the server as down until it registers again, as the simulator's devices do; any other
  // loss is "connection to the server lost" and only pauses the closed loop.
  // "server ID failed at T s" when the scenario has its server down at run time t (a fail event at
  // or before t, no recover since: `coinfer testbed` killed it), else "". A quarter second of grace:
  // the device may see the drop a little before its own clock reaches the event.
  // Of its server now, or of `server` (mutex held).
  std::string scheduled_failure_reason(double t, int server = -1) const {
    if (server < 0) server = rq->loop().server();
    if (!availability.any() || server < 0 || availability.up_at(server, t + 0.25)) return "";
    return server_failed_reason(sc.servers[static_cast<size_t>(server)].id, availability.failed_at(server, t + 0.25));
  }

  // The connection request `id`'s upload (or its copy) goes on: to the server its record names, its
  // server now or one it moved away from (null: none; mutex held).
  std::shared_ptr<Connection> connection_for(std::int64_t id) {
    const RequestRecord* r = rq->find(id);
    const int server = r ? r->server : rq->loop().server();
    if (server == rq->loop().server()) return conn;
    for (const Draining& d : draining)
      if (d.server == server) return d.conn;
    return nullptr;
  }

  // Its server is `server` now, listening at `address` (a move or a redirect; mutex held).
  void set_server_now(int server, const std::string& address) {
    const auto [host, port] = split_address(address, "scheduling");
    server_host = host;
    server_port = port;
    move_to.reset();
    if (server == rq->loop().server()) return;
    const double t = now();
    const bool up = !availability.any() || availability.up_at(server, t + 0.25);
    rq->loop().set_server(server, up,
                          up ? "" : server_down_reason(sc.servers[static_cast<size_t>(server)].id, availability.failed_at(server, t + 0.25)));
    wake();
  }

  // The connection to `server` is gone: what that server held is lost (the requests whose records
  // name it). When the scenario's failure of that server explains it (a fail event at or before now,
  // no recover since: `coinfer testbed` killed it), they fail with the simulator's
  // reasons (core/server_failures.hpp) and, for its server now, the loop treats the server as down
  // until it registers again, as the simulator's devices do; any other loss is "connection to the
  // server lost" and only pauses the closed loop.
  void lose_connection(int server) {
    std::lock_guard<std::mutex> lock(mutex);
    const bool current = server == rq->loop().server();
    if (current) {
      conn.reset();
      copies_to_send.clear();  // their requests fail below
    }
    const double t = now();
    std::string why = scheduled_failure_reason(t, server);
    if (!why.empty()) {
      if (current)
        rq->loop().set_server_available(false,
                                        server_down_reason(sc.servers[static_cast<size_t>(server)].id, availability.failed_at(server, t + 0.25)));
    } else {
      why = "connection to the server lost";
    }
    for (const DeviceRequest* r : rq->loop().unfinished_requests(true))
      if (r->rec.server == server) rq->loop().fail(r->rec.id, t, why);
    wake();
  }

  // Closes the connections to servers it moved away from once nothing it sent there is unfinished,
  // or once lost (their requests then fail).
  void close_drained() {
    std::vector<Draining> done;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto it = draining.begin(); it != draining.end();) {
        bool waiting = false;
        for (const DeviceRequest* r : rq->loop().unfinished_requests(false)) waiting = waiting || r->rec.server == it->server;
        if (!waiting || it->conn->closed()) {
          done.push_back(std::move(*it));
          it = draining.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (Draining& d : done) {
      const bool lost = d.conn->closed();
      d.conn->close();
      if (d.reader.joinable()) d.reader.join();
      lose_connection(d.server);  // what it still held, if it was lost
      log((lost ? "lost the connection to server " : "closed the connection to server ") + sc.servers[static_cast<size_t>(d.server)].id +
          (lost ? "" : ": its requests there are over"));
    }
  }

  // The scheme moved this device (move_to): registers at its new server (or takes back the
  // connection it still drains there); `c` and `reader` become the new ones, the old pair drains.
  // Returns false when the new server cannot be reached yet (tried again later). Throws Refused.
  RedirectGuard move_redirects;  // redirects met while carrying out a move (its own thread: the registration loop's)
  bool carry_out_move(std::shared_ptr<Connection>& c, std::thread& reader) {
    std::pair<int, std::string> to;
    Draining again;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!move_to) return true;
      to = *move_to;
      for (auto it = draining.begin(); it != draining.end(); ++it)
        if (it->server == to.first) {
          again = std::move(*it);
          draining.erase(it);
          break;
        }
    }
    std::shared_ptr<Connection> next = again.conn;
    std::thread next_reader = std::move(again.reader);
    if (!next) {
      try {
        const auto [host, port] = split_address(to.second, "scheduling");
        next = connect_and_register(host, port, true);
        move_redirects.on_registered();
      } catch (const RegistrationRedirected& e) {
        // Bounded as the registration loop's (hw/registration.hpp RedirectGuard); the caller waits 0.2 s
        // between attempts and stops at the run's end.
        try {
          move_redirects.on_redirect(e.address);
        } catch (const RedirectLoop& loop) {
          throw Refused(loop.what());
        }
        std::lock_guard<std::mutex> lock(mutex);
        move_to = std::make_pair(sc.server_index(e.server), e.address);
        return false;
      } catch (const Refused&) {
        throw;
      } catch (const std::exception& e) {
        log("cannot register with server " + sc.servers[static_cast<size_t>(to.first)].id + " at " + to.second + " yet (" + e.what() + ")");
        move_redirects.on_unreachable();
        return false;
      }
      next_reader = std::thread([this, next] { read_loop(next, false); });
    }
    std::lock_guard<std::mutex> lock(mutex);
    const int old = rq->loop().server();
    draining.push_back(Draining{old, c, std::move(reader)});
    c = next;
    reader = std::move(next_reader);
    conn = next;
    set_server_now(to.first, to.second);
    log("registered with " + next->peer() + " (server " + sc.servers[static_cast<size_t>(to.first)].id + ") as " + opt.device_id +
        "; the connection to " + sc.servers[static_cast<size_t>(old)].id + " stays until its requests there are over");
    return true;
  }

  long long run(const std::atomic<bool>& stop_flag) {
    stop = &stop_flag;
    const double join = sc.devices[index].join_at_s;
    if (opt.work_cpu_cores > 0) {
      work_cap = CpuCap::for_threads(opt.work_cpu_cores, opt.device_id);  // throws, saying why, before any work starts
      if (opt.log) opt.log("compute and upload threads capped: " + work_cap->description());
    }
    // The work threads start (idle) before time zero, so that a testbed can cap them before the run.
    std::thread power;
    if (meter.pid() > 0) power = std::thread([this] { meter_loop(); });
    std::vector<std::thread> compute;  // one per processor of the board
    for (int p = 0; p < rq->processors(); ++p) compute.emplace_back([this, p] { compute_loop(p); });
    std::thread upload([this] { upload_loop(); });
    while (!*stop && now() < join) std::this_thread::sleep_for(Seconds(std::min(0.05, join - now())));
    std::thread arrivals([this] { arrivals_loop(); });
    // The run's hard end (Scenario::hard_end_s, the simulator's too): a device that left early and
    // still waits for results keeps the run's drain, not leave_at_s + drain_s.
    const double hard_end = sc.hard_end_s();
    double backoff = 0.2;
    RedirectGuard redirects;  // redirects since the last registration
    std::string fatal;
    bool moved = false;            // the next registration follows a move or a redirect (not a join)
    bool ask_coordinator = false;  // several servers: every other attempt asks the first server where to go
    {
      std::lock_guard<std::mutex> lock(mutex);
      server_host = opt.host;
      server_port = opt.port;
    }
    while (!stopping()) {
      std::shared_ptr<Connection> c;
      std::string host;
      int port = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (move_to) {  // moved while the connection was lost: register there
          set_server_now(move_to->first, move_to->second);
          moved = true;
        }
        host = server_host;
        port = server_port;
      }
      const bool via_coordinator = ask_coordinator && !opt.coordinator.empty();
      try {
        if (via_coordinator) {  // it takes the registration only where the scheme moved the device to it: not a join
          const auto [ch, cp] = split_address(opt.coordinator, "--coordinator");
          c = connect_and_register(ch, cp, true);
          std::lock_guard<std::mutex> lock(mutex);
          set_server_now(0, opt.coordinator);  // it took the registration: the first server is its server now
        } else {
          c = connect_and_register(host, port, moved);
        }
        backoff = 0.2;
        moved = false;
        ask_coordinator = false;
        redirects.on_registered();
      } catch (const RegistrationRedirected& e) {
        // Bounded (hw/registration.hpp RedirectGuard): back-off, a loop asks the coordinator, the
        // fifth loop is an error, and the run's end holds here too.
        double wait = 0;
        try {
          wait = redirects.on_redirect(e.address);
        } catch (const RedirectLoop& loop) {
          fatal = loop.what();
          break;
        }
        log(std::string("registration ") + e.what() + (redirects.looped() ? " (a loop: asking the coordinator next)" : "") +
            (wait > 0 ? ", following in " + std::to_string(wait).substr(0, 4) + " s" : ""));
        {
          std::lock_guard<std::mutex> lock(mutex);
          set_server_now(sc.server_index(e.server), e.address);
        }
        moved = true;
        ask_coordinator = redirects.looped() && !opt.coordinator.empty();
        for (double waited = 0; waited < wait && !check_done(hard_end); waited += 0.05) std::this_thread::sleep_for(Seconds(0.05));
        if (check_done(hard_end)) break;
        continue;
      } catch (const Refused& e) {
        fatal = e.what();
        break;
      } catch (const std::exception& e) {
        log(std::string("cannot reach the server (") + e.what() + "), retrying in " + std::to_string(backoff).substr(0, 4) + " s");
        redirects.on_unreachable();
        if (check_done(hard_end)) break;
        std::this_thread::sleep_for(Seconds(backoff));
        backoff = std::min(2.0, backoff * 2);
        // Several servers: every other attempt asks the first server where the device belongs now (its
        // own may be down, and the scheme may have moved it meanwhile).
        if (!opt.coordinator.empty() && opt.coordinator != host + ":" + std::to_string(port)) ask_coordinator = !ask_coordinator;
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        conn = c;
        ever_connected = true;
        if (!rq->loop().server_up()) rq->loop().set_server_available(true);  // its server is back (a recover)
        if (!rq->loop().joined()) rq->loop().on_join(now());                 // inputs start with the first registration
        wake();
        log("registered with " + c->peer() + " as " + opt.device_id + " (" + strategy().to_string() + ")");
      }
      std::thread reader([this, c] { read_loop(c); });
      double next_beat = 0;
      while (!c->closed() && !check_done(hard_end)) {
        try {
          if (!carry_out_move(c, reader)) std::this_thread::sleep_for(Seconds(0.2));
        } catch (const Refused& e) {
          fatal = e.what();
          break;
        }
        close_drained();
        const double latency = one_way_latency_s(sc, index);
        if (opt.shape)
          c->set_shaping({0, latency, shared_schedule, opt.epoch_unix_s - opt.clock_skew_s});  // paced on the run's time
        else if (opt.shape_latency)
          c->set_shaping({0, latency, nullptr, 0});
        if (now() >= next_beat) {
          DeviceStatus s;
          {
            std::lock_guard<std::mutex> lock(mutex);
            s.bandwidth_mbps = schedule.mbps_at(now());
            s.queue_length = rq->loop().queued();
            s.unfinished = rq->loop().unfinished();
            s.busy = rq->loop().unfinished() > 0;
            s.completed = rq->loop().completed();
            s.latency_sum_s = rq->loop().latency_sum_s();
          }
          s.probe_t1 = device_unix();
          try {
            c->send({MsgType::heartbeat, 0, encode(s)}, Seconds(2));
          } catch (const std::exception&) {
          }
          // The first probes come quickly, for a clock estimate before much is recorded.
          next_beat = now() + (++beats < 5 ? std::min(0.1, opt.heartbeat_s) : opt.heartbeat_s);
        }
        std::this_thread::sleep_for(Seconds(0.1));
      }
      c->close();
      reader.join();
      int server_now = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        server_now = rq->loop().server();
      }
      lose_connection(server_now);
      if (!fatal.empty() || check_done(hard_end)) break;
      // Its server failed (the scenario says so): the scheduler may move it elsewhere at this very
      // failure. Ask the coordinator first, once it has had time to decide (it gathers triggers for
      // 20 ms), instead of trying the dead server first.
      bool failed_now = false;
      {
        std::lock_guard<std::mutex> lock(mutex);
        failed_now = !scheduled_failure_reason(now(), server_now).empty();
      }
      if (failed_now && !opt.coordinator.empty()) {
        ask_coordinator = true;
        std::this_thread::sleep_for(Seconds(0.05));
      }
    }
    // The connections it still drained: whatever they held is over with the run.
    std::vector<Draining> left;
    {
      std::lock_guard<std::mutex> lock(mutex);
      left.swap(draining);
    }
    for (Draining& d : left) {
      d.conn->close();
      if (d.reader.joinable()) d.reader.join();
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      finished = true;
      rq->loop().abandon([&](const DeviceRequest& r) { return !fatal.empty() ? fatal : drain_failure_text(r.rec, sc.drain_s); });
      cv.notify_all();
    }
    arrivals.join();
    for (std::thread& t : compute) t.join();
    upload.join();
    if (power.joinable()) power.join();
    meter.close_channel();
    if (meter.pid() > 0) meter.stop(1);
    if (!fatal.empty()) throw Refused(fatal);
    return rq->loop().failed();
  }

  // Reads the power meter's lines until the run stops: each reading journaled at its time.
  void meter_loop() {
    std::string buffer;
    char buf[4096];
    while (!stopping() && meter.channel() >= 0) {
      pollfd p{meter.channel(), POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      const ssize_t n = ::read(meter.channel(), buf, sizeof buf);
      if (n <= 0) {
        log("the power meter stopped (" + describe_exit_status(meter.wait()) + "); energy after this is not measured");
        return;
      }
      buffer.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
        const std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        const size_t at = line.find_first_of("0123456789.");
        if (at == std::string::npos) continue;
        char* end = nullptr;
        const double w = std::strtod(line.c_str() + at, &end);
        if (end != line.c_str() + at && std::isfinite(w) && w >= 0) journal->power(now(), w);
      }
      if (buffer.size() > 65536) buffer.clear();  // no line ending: not a meter's output
    }
  }

  // True when the device's run is over: arrivals ended and nothing is unfinished, or the drain ran out.
  bool check_done(double hard_end) {
    std::lock_guard<std::mutex> lock(mutex);
    if (*stop) return true;
    if (arrivals_over && rq->loop().unfinished() == 0) {
      // A device that creates inputs stays until the end of the arrivals (or its leave), as present as
      // in the simulator, even when it has nothing more to send (no Poisson arrival left before the
      // end): leaving earlier would be a leave trigger the simulator does not have.
      if (sc.devices[index].workload.arrival != WorkloadSpec::Arrival::none)
        return now() >= std::min(sc.duration_s, sc.devices[index].leave_at_s) || now() >= hard_end;
      // An idle helper serves forwarded work until the others stop creating inputs.
      // A helper stays through the drain until the server releases it (hw/edge_server.cpp), unless
      // the scenario says it leaves.
      const bool idle = !rq->loop().helping() && !rq->loop().helper_work_waiting();
      if (idle && now() >= sc.devices[index].leave_at_s) return true;
      if (idle && now() >= sc.duration_s && !helper) return true;
    }
    return now() >= hard_end;
  }
};

DeviceRuntime::DeviceRuntime(Scenario scenario, ModelCatalog catalog, LutSet luts, DeviceOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.sc = std::move(scenario);
  impl.catalog = std::move(catalog);
  impl.luts = std::move(luts);
  impl.opt = std::move(options);
  impl.index = impl.sc.device_index(impl.opt.device_id);
  if (impl.index < 0) {
    std::string known;
    for (const auto& d : impl.sc.devices) known += (known.empty() ? "" : ", ") + d.id;
    throw InputError(SourceLocation{impl.sc.file, 0, 0}, "--id", "unknown device '" + impl.opt.device_id + "' (scenario devices: " + known + ")");
  }
  const DeviceSpec& d = impl.sc.devices[impl.index];
  // The board's processors (its profile's; one where its type has none), each computed here by a
  // LibTorch device (DeviceOptions::processor_devices): by default this machine's CPU stands for the
  // device's default processor (slot 0) and a GPU for a processor of kind gpu where LibTorch sees one.
  const std::string stands_for = d.default_processor();
  const std::shared_ptr<const DeviceHardware> board = d.hardware;  // the profile's
  DeviceHardware here = board ? *board : single_processor_hardware(stands_for, 0);
  const SourceLocation option_where{"--processor-device", 0, 0};
  std::vector<std::string> torch_devices(static_cast<size_t>(here.size()));
  for (const auto& [name, device] : impl.opt.processor_devices) {
    const int slot = here.slot(name);
    if (slot < 0)
      throw InputError(option_where, "--processor-device",
                       "device " + d.id + " (" + d.type + ") has no processor '" + name + "' (its processors: " + here.describe() + ")");
    if (device == "none") continue;
    if (const std::string problem = models::torch_device_problem(device); !problem.empty())
      throw InputError(option_where, "--processor-device", "processor '" + name + "' of device " + d.id + ": " + problem);
    torch_devices[static_cast<size_t>(slot)] = device;
  }
  for (int p = 0; p < here.size(); ++p) {
    const std::string& name = here.processors[static_cast<size_t>(p)];
    if (impl.opt.processor_devices.count(name)) continue;
    if (p == 0)
      torch_devices[0] = "cpu";
    else if (here.kinds[static_cast<size_t>(p)] == "gpu" && models::cuda_available())
      torch_devices[static_cast<size_t>(p)] = "cuda:0";
  }
  if (torch_devices[0].empty())
    throw InputError(option_where, "--processor-device",
                     "processor '" + here.processors[0] + "' of device " + d.id +
                         " is its default processor (forwarded batches run there): it needs a device here");
  // A device placed on another processor than its default one by `processor:` keeps the old rule
  // unless that processor is mapped: this machine's CPU stands for the default.
  if (!d.processor.empty() && d.processor != "cpu" && !impl.opt.processor_devices.count(d.processor))
    throw InputError(d.where, "devices (id " + d.id + ").processor",
                     "the real device runtime computes on this machine's CPU; processor '" + d.processor +
                         "' is simulated only (coinfer run): remove the key, name processor: cpu, or map it (--processor-device " + d.processor +
                         "=cuda)");
  // Its memory (memory_gb, or its profile's): LibTorch's tensors may not pass it, so that a request
  // that needs more fails "out of memory" as in the simulator (the process's own code, libraries and
  // stacks are not counted, as the simulator counts tensors and weights only). The CPU's tensors are
  // counted against the main memory (pool 0); a GPU's own memory is its own (CUDA's allocator).
  impl.memory_processor = stands_for;
  if (d.hardware && d.hardware->pool_capacity_bytes.at(0) > 0) {
    TrackingAllocator::install();
    TrackingAllocator::instance().set_limit(static_cast<size_t>(d.hardware->pool_capacity_bytes[0]));
    log::info("device", "tensor memory limited to " + format_double(d.hardware->pool_capacity_bytes[0] / 1e6) + " MB (" + d.type + ")");
  }
  // The loop keeps the board's processors (the plans the simulator makes) but accounts no memory: the
  // real tensors are the limit.
  for (double& c : here.pool_capacity_bytes) c = 0;
  impl.sc.devices[static_cast<size_t>(impl.index)].hardware = std::make_shared<const DeviceHardware>(here);
  impl.torch_devices = torch_devices;
  if (!d.strategy.placement.empty())
    for (const std::string& p : d.strategy.placement.processors()) {
      const int slot = here.slot(p);
      if (slot >= 0 && !torch_devices[static_cast<size_t>(slot)].empty()) continue;
      const bool gpu = slot >= 0 && here.kinds[static_cast<size_t>(slot)] == "gpu";
      throw InputError(d.where, "devices (id " + d.id + ").strategy",
                       "the real device runtime has no LibTorch device for processor '" + p + "' here: a placement on '" + p +
                           "' is simulated only (coinfer run)" +
                           (gpu ? std::string("; running stages on a GPU needs a CUDA LibTorch with a visible GPU (") +
                                      (models::cuda_available() ? "this one has one: --processor-device " + p + "=cuda"
                                                                : "torch::cuda::is_available() is false here") +
                                      ")"
                                : std::string()) +
                           "; or let another device of this machine stand for it: --processor-device " + p + "=cpu");
    }
  impl.spec = impl.catalog.instantiate(d.model, d.dataset);
  impl.num_stages = impl.spec.num_stages();
  for (const DeviceSegment& seg : make_device_plan(d.strategy, impl.num_stages, here, d.id).segments)
    if (seg.with >= 0)
      throw InputError(d.where, "devices (id " + d.id + ").strategy",
                       "a stage split between two processors (" + d.strategy.placement.to_string() +
                           ") runs in the simulator only: the real runtime runs whole stages on one processor each");
  try {
    impl.model = std::make_unique<models::DeviceModelRunner>(impl.spec, impl.sc.seed, impl.opt.input_file, torch_devices, here.processors);
  } catch (const InputError&) {
    throw;
  } catch (const TensorMemoryExhausted& e) {  // the weights and inputs alone do not fit the board's memory
    throw InputError(d.where, "devices (id " + d.id + ").memory_gb",
                     "the model's weights and inputs alone need more than the device's memory: " + impl.out_of_memory_text(e));
  } catch (const std::exception& e) {
    // models::DeviceModelRunner: "processor 'P' on DEVICE: why" when a processor's device cannot be used
    if (std::string(e.what()).rfind("processor ", 0) == 0) throw InputError(option_where, "--processor-device", e.what());
    if (impl.opt.input_file.empty()) throw;
    throw InputError(SourceLocation{impl.opt.input_file, 0, 0}, "--input", e.what());
  }
  {
    std::string mapped;
    for (int p = 0; p < here.size(); ++p)
      mapped += (mapped.empty() ? "" : ", ") +
                (here.processors[static_cast<size_t>(p)].empty() ? std::string("processor") : here.processors[static_cast<size_t>(p)]) + " on " +
                (torch_devices[static_cast<size_t>(p)].empty() ? std::string("none") : torch_devices[static_cast<size_t>(p)]);
    if (here.size() > 1) log::info("device", d.id + ": " + mapped);
  }
  impl.schedule = BandwidthSchedule(d, impl.sc.events);
  impl.shared_schedule = std::make_shared<const BandwidthSchedule>(impl.schedule);
  impl.availability = ServerAvailability(impl.sc);
  if (impl.sc.mobility.mid_transfer != MobilitySpec::MidTransfer::wait) impl.handovers = handovers_of(impl.sc, impl.opt.device_id);
  const std::string server_type = impl.sc.servers[impl.sc.server_index(d.server)].type;
  const LutKey dev_key = d.lut_key(d.model), srv_key{server_type, d.model, d.dataset};
  const DataParallelCosts router_costs =
      data_parallel_costs(d, impl.sc.access_point, impl.spec, impl.luts.contains(dev_key) ? &impl.luts.table(dev_key) : nullptr,
                          impl.luts.contains(srv_key) ? &impl.luts.table(srv_key) : nullptr);
  if (impl.opt.epoch_unix_s <= 0) impl.opt.epoch_unix_s = unix_now() + impl.opt.clock_skew_s;
  impl.journal = std::make_unique<JournalWriter>(impl.opt.records_out);
  if (impl.opt.records_stdout) impl.journal->also_to_stdout();
  impl.journal->note("device", impl.opt.device_id);
  if (!impl.opt.power_command.empty()) {
    ChildSpec meter;
    meter.argv = split_command_line(impl.opt.power_command, SourceLocation{"--power-command", 0, 0}, "--power-command");
    meter.connect_stdio = true;
    try {
      impl.meter = Child::start(meter);
    } catch (const std::exception& e) {
      throw InputError(SourceLocation{"--power-command", 0, 0}, "--power-command", e.what());
    }
  }
  // Open-loop times come from the simulator's own generator for (seed, device): a testbed run replays
  // the simulated arrivals exactly.
  impl.rq = std::make_unique<DeviceRequests>(impl.sc.devices[static_cast<size_t>(impl.index)], impl.index, impl.sc.server_index(d.server),
                                             impl.sc.seed, impl.num_stages, impl.sc.duration_s, router_costs, impl.schedule, *impl.journal);
  // What a request kept between its segments goes when it finishes, whichever way.
  impl.rq->on_release([runner = impl.model.get()](std::int64_t id) { runner->forget(id); });
}

DeviceRuntime::~DeviceRuntime() = default;

long long DeviceRuntime::run(const std::atomic<bool>& stop) { return impl_->run(stop); }

}  // namespace coinfer::hw
