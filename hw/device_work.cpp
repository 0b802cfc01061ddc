#include "hw/device_work.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "core/run_assembly.hpp"
#include "hw/compute_threads.hpp"
#include "hw/cpu_cap.hpp"
#include "hw/device_server_link.hpp"
#include "hw/tracking_allocator.hpp"
#include "models/model_runner.hpp"

namespace coinfer::hw {

DeviceWork::DeviceWork(DeviceContext& ctx, const DeviceRooms& rooms, const DataParallelCosts& router_costs) : ctx_(ctx), rooms_(rooms) {
  const DeviceSpec& d = ctx.device();
  rq_ = std::make_unique<DeviceRequests>(d, ctx.index, ctx.sc.server_index(d.server), ctx.sc.seed, ctx.num_stages, ctx.sc.duration_s, router_costs,
                                         ctx.schedule, *ctx.journal);
  // What a request kept between its segments goes when it finishes, whichever way.
  rq_->on_release([runner = ctx.model.get()](std::int64_t id) { runner->forget(id); });
}

DeviceWork::~DeviceWork() = default;

void DeviceWork::cap_threads() {
  if (ctx_.opt.work_cpu_cores <= 0) return;
  work_cap_ = CpuCap::for_threads(ctx_.opt.work_cpu_cores, ctx_.opt.device_id);  // throws, saying why, before any work starts
  if (ctx_.opt.log) ctx_.opt.log("compute and upload threads capped: " + work_cap_->description());
}

// The device's work threads join the work cap (DeviceOptions::work_cpu_cores).
void DeviceWork::join_work_cap(const char* what) {
  if (!ctx_.opt.work_threads_file.empty()) {
    std::lock_guard<std::mutex> lock(work_threads_m_);
    std::ofstream(ctx_.opt.work_threads_file, std::ios::app) << static_cast<long>(::syscall(SYS_gettid)) << "\n" << std::flush;
  }
  if (!work_cap_) return;
  try {
    work_cap_->add_calling_thread();
  } catch (const std::exception& e) {
    if (ctx_.opt.log) ctx_.opt.log(std::string("the ") + what + " thread runs uncapped: " + e.what());
  }
}

void DeviceWork::wake(const DeviceLock::Held& held) {
  const double t = ctx_.now();
  rq_->loop().set_admission_paused(!rooms_.link->connected(held) && strategy(held).kind != Strategy::Kind::local);
  rq_->loop().wake(t);
  cv_.notify_all();
}

// --- threads -------------------------------------------------------------------------------------------
// The loop's clock: joins at the first registration (arrivals due before it are skipped), then wakes
// the loop at each open-loop arrival (and every 50 ms for the closed loop's admission). While
// reconnecting, a closed loop pauses (unless local) and open-loop arrivals still come: they are
// recorded failed ("not connected to the server"), not lost.
void DeviceWork::arrivals_loop() {
  const WorkloadSpec& w = ctx_.device().workload;
  const double end = std::min(ctx_.sc.duration_s, ctx_.device().leave_at_s);
  auto held = ctx_.lock.hold();
  while (!ctx_.stopping() && w.arrival != WorkloadSpec::Arrival::none) {
    if (!ever_connected_) {
      held.wait_for(cv_, 0.02);
      continue;
    }
    const double t = ctx_.now();
    if (t >= end) break;
    wake(held);
    const double next = rq_->loop().next_arrival_s();
    if (w.arrival != WorkloadSpec::Arrival::closed_loop && next == std::numeric_limits<double>::infinity()) break;
    held.wait_for(cv_, std::max(0.0, std::min(0.05, next - t)));
  }
  arrivals_over_ = true;
  cv_.notify_all();
}

// Processor `proc`'s compute thread: the segments the loop starts there (and, on processor 0, the
// batches forwarded to this device as a helper). Processors compute at once.
void DeviceWork::compute_loop(int proc) {
  join_work_cap("compute");
  set_compute_threads(ctx_.opt.threads);
  auto held = ctx_.lock.hold();
  while (!ctx_.stopping()) {
    std::optional<ComputeJob> job = rq_->take_compute(proc);
    if (!job) {
      held.wait_for(cv_, 0.5);
      continue;
    }
    if (const HelperBatch* help = std::get_if<HelperBatch>(&*job)) {
      const ModelSpec origin_model = helper_specs_.at(help->batch);
      helper_specs_.erase(help->batch);
      held.without([&] { run_helper_batch(*help, origin_model); });
      rq_->loop().on_help_done();
      wake(held);
      continue;
    }
    const RequestStages own = std::get<RequestStages>(*job);
    std::string bytes, error;
    held.without([&] {
      try {
        if (own.with >= 0) throw std::invalid_argument("a stage split between two processors runs in the simulator only");
        bytes = ctx_.model->run_segment(own.request, own.proc, own.begin, own.end, own.split);
      } catch (const TensorMemoryExhausted& e) {  // the board's memory limit (memory_gb): as the simulator says it
        error = ctx_.out_of_memory_text(static_cast<double>(e.need), static_cast<double>(e.have));
      } catch (const std::exception& e) {
        error = "device stages failed: " + std::string(e.what());
      }
    });
    if (own.end == own.split && own.split < ctx_.num_stages) rq_->keep_state(own.request, std::move(bytes));
    rq_->loop().on_computed(own.request, ctx_.now(), error.empty(), error);
    wake(held);
  }
}

// A forwarded batch, run as one batch (as the simulator runs it and as the server would have) with
// the origin's model; one result per task, each saying the batch's size.
void DeviceWork::run_helper_batch(const HelperBatch& job, const ModelSpec& origin_model) {
  ResultHeader r;
  r.batch_size = static_cast<int>(job.parts.size());
  r.t_batch_start = ctx_.device_unix();
  std::vector<std::string> outputs(job.parts.size());
  try {
    std::vector<const std::string*> states;
    for (const HelperPart& p : job.parts) states.push_back(&p.state_bytes);
    outputs = helper_runner_.run(origin_model, states);
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("helper failed: ") + e.what();
  }
  r.t_batch_end = ctx_.device_unix();
  std::shared_ptr<Connection> c;
  {
    const auto held = ctx_.lock.hold();
    c = rooms_.link->current(held);
  }
  if (!c) return;  // the server reports it failed to the origin when we disconnected
  for (size_t i = 0; i < job.parts.size(); ++i) {
    try {
      c->send({MsgType::result, static_cast<std::uint64_t>(job.parts[i].task), pack_result(r, r.ok ? outputs[i] : std::string())});
    } catch (const std::exception& e) {
      ctx_.log(std::string("helper result not delivered: ") + e.what());
      return;
    }
  }
}

void DeviceWork::upload_loop() {
  join_work_cap("upload");
  auto held = ctx_.lock.hold();
  while (!ctx_.stopping()) {
    if (!copies_to_send_.empty()) {
      send_copy(held);
      continue;
    }
    std::optional<UploadJob> job = rq_->take_upload();
    if (!job) {
      held.wait_for(cv_, 0.5);
      continue;
    }
    std::shared_ptr<Connection> c = rooms_.link->connection_for(held, job->id);
    if (!c) {
      rq_->loop().on_uploaded(job->id, ctx_.now(), false, "not connected to the server");
      wake(held);
      continue;
    }
    std::string error;
    held.without([&] {
      try {
        std::string bytes = std::move(job->state_bytes);
        if (job->split == 0) bytes = ctx_.model->input_state(job->id);
        TaskHeader th{job->split, ctx_.opt.device_id, ctx_.device_unix()};
        th.cloud_split = job->cloud_split;
        {
          const auto relock = ctx_.lock.hold();
          if (const RequestRecord* r = rq_->find(job->id)) th.t_created = ctx_.opt.epoch_unix_s + r->t_created;
        }
        const std::string payload = pack_task(th, bytes);
        {
          // What goes on the wire, recorded before the result can overtake this thread.
          const auto relock = ctx_.lock.hold();
          if (RequestRecord* r = rq_->find(job->id)) r->bytes_up = static_cast<double>(kHeaderBytes + payload.size());
        }
        c->send({MsgType::task, static_cast<std::uint64_t>(job->id), payload}, Seconds(60));
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    // Sent on a connection that has been lost meanwhile: no result will come on it.
    if (error.empty() && rooms_.link->connection_for(held, job->id) != c) error = "connection to the server lost";
    // An upload cut by the scenario's failure of its server fails as in the simulator (nobody received it).
    const RequestRecord* sent = rq_->find(job->id);
    const std::string failed = error.empty() ? "" : failure_reason(ctx_.now(), sent ? sent->server : rq_->loop().server());
    rq_->loop().on_uploaded(job->id, ctx_.now(), error.empty(), failed.empty() ? "upload failed: " + error : failed);
    wake(held);
  }
}

// The first of copies_to_send_: once its handover has ended, a task frame marked `copy` as long as
// the upload the server kept (the lock released while sending).
void DeviceWork::send_copy(DeviceLock::Held& held) {
  const double wait_s = copies_to_send_.front().second.not_before_unix_s - ctx_.device_unix();
  if (wait_s > 0) {
    held.wait_for(cv_, std::min(wait_s, 0.2));
    return;
  }
  const auto [task, req] = copies_to_send_.front();
  copies_to_send_.pop_front();
  std::shared_ptr<Connection> c = rooms_.link->connection_for(held, static_cast<std::int64_t>(task));
  if (!c) return;  // lost: lose_connection() failed its request
  held.without([&, task = task, req = req] {
    try {
      TaskHeader th{0, ctx_.opt.device_id, ctx_.device_unix()};  // split: ignored (the server computes the copy it kept)
      th.copy = true;
      const size_t head = pack_task(th, "").size();
      const size_t filler = static_cast<size_t>(req.bytes) > head ? static_cast<size_t>(req.bytes) - head : 0;
      c->send({MsgType::task, task, pack_task(th, incompressible_filler(filler, task))}, Seconds(60));
    } catch (const std::exception& e) {
      ctx_.log(std::string("copy of an upload not sent: ") + e.what());
    }
  });
}

void DeviceWork::on_resend_request(const Frame& f) {
  ResendRequest q = decode_resend(f.payload);
  // Not before the handover ends; at most one handover from now (the server's clock may be ahead).
  q.not_before_unix_s = std::min(q.not_before_unix_s, ctx_.device_unix() + ctx_.sc.mobility.handover_ms * 1e-3);
  const auto held = ctx_.lock.hold();
  RequestRecord* r = rq_->find(static_cast<std::int64_t>(f.task_id));
  if (!r) return;  // already over (e.g. failed with a lost connection)
  ++r->resends;
  copies_to_send_.emplace_back(f.task_id, q);
  wake(held);
}

bool DeviceWork::done(double hard_end) {
  const auto held = ctx_.lock.hold();
  if (*ctx_.stop) return true;
  const DeviceSpec& d = ctx_.device();
  if (arrivals_over_ && rq_->loop().unfinished() == 0) {
    // A device that creates inputs stays until the end of the arrivals (or its leave), as present as
    // in the simulator, even when it has nothing more to send (no Poisson arrival left before the
    // end): leaving earlier would be a leave trigger the simulator does not have.
    if (d.workload.arrival != WorkloadSpec::Arrival::none) return ctx_.now() >= std::min(ctx_.sc.duration_s, d.leave_at_s) || ctx_.now() >= hard_end;
    // An idle helper serves forwarded work until the others stop creating inputs. A helper stays
    // through the drain until the server releases it (hw/device_sessions.cpp), unless the scenario
    // says it leaves.
    const bool idle = !rq_->loop().helping() && !rq_->loop().helper_work_waiting();
    if (idle && ctx_.now() >= d.leave_at_s) return true;
    if (idle && ctx_.now() >= ctx_.sc.duration_s && !helper_) return true;
  }
  return ctx_.now() >= hard_end;
}

// --- the lock held -------------------------------------------------------------------------------------
void DeviceWork::assign(const DeviceLock::Held& held, const Strategy& s, bool helper) {
  if (s != strategy(held)) {
    ctx_.log("strategy " + strategy(held).to_string() + " -> " + s.to_string());
    rq_->loop().on_strategy(s);
  }
  helper_ = helper;
}

void DeviceWork::add_helper_batch(const DeviceLock::Held& held, int split, int origin, std::vector<HelperPart> parts) {
  const std::int64_t id = next_help_batch_++;
  const DeviceSpec& o = ctx_.sc.devices[static_cast<size_t>(origin)];
  helper_specs_[id] = ctx_.catalog.instantiate(o.model, o.dataset);
  rq_->add_helper_batch(id, split, std::move(parts));
  wake(held);
}

bool DeviceWork::count_resend(const DeviceLock::Held&, std::int64_t id) {
  RequestRecord* r = rq_->find(id);
  if (!r) return false;
  ++r->resends;
  return true;
}

void DeviceWork::complete(const DeviceLock::Held& held, std::int64_t id, std::size_t frame_bytes, const ResultHeader& h,
                          const std::string& handover_failed) {
  RequestRecord* found = rq_->find(id);
  if (!found) return;  // already failed (e.g. after a reconnection)
  RequestRecord& r = *found;
  const double epoch = ctx_.opt.epoch_unix_s;
  r.bytes_down = static_cast<double>(frame_bytes);
  // The server's stamps, those it set (0: not reached; e.g. an upload failed at a handover never ran).
  if (h.t_received > 0) r.t_uplink_end = h.t_received - epoch;
  // The server failed its upload at a handover (mobility.mid_transfer: fail): not uploaded, as in
  // the simulator's record, though this device's send had returned.
  if (!h.ok && is_handover_failure(h.error)) r.t_uplink_end = std::numeric_limits<double>::quiet_NaN();
  if (h.t_queued > 0) r.t_queued = h.t_queued - epoch;
  if (!h.dropped && h.t_batch_end > 0) {  // a dropped one never ran
    r.t_batch_start = h.t_batch_start - epoch;
    r.t_batch_end = h.t_batch_end - epoch;
    r.batch_size = h.batch_size;
    r.helper = h.helper.empty() ? -1 : ctx_.sc.device_index(h.helper);
  }
  if (!h.cloud.empty()) {  // pp(k,m): its edge passed it on to this cloud (hw/README.md "Cloud tier")
    r.cloud = ctx_.sc.server_index(h.cloud);
    r.bytes_to_cloud = h.cloud_bytes;
    if (h.t_cloud_queued > 0) r.t_cloud_queued = h.t_cloud_queued - epoch;
    if (h.t_cloud_batch_end > 0) {
      r.t_cloud_batch_start = h.t_cloud_batch_start - epoch;
      r.t_cloud_batch_end = h.t_cloud_batch_end - epoch;
      r.cloud_batch_size = h.cloud_batch_size;
    }
  }
  if (!handover_failed.empty())
    rq_->loop().on_result(r.id, ctx_.now(), false, handover_failed);
  else
    rq_->loop().on_result(r.id, ctx_.now(), h.ok,
                          h.dropped || is_handover_failure(h.error) || is_server_failure(h.error) ? h.error : "server: " + h.error, h.dropped);
  wake(held);
}

int DeviceWork::server_of(const DeviceLock::Held&, std::int64_t id) {
  const RequestRecord* r = rq_->find(id);
  return r ? r->server : rq_->loop().server();
}

void DeviceWork::set_server(const DeviceLock::Held& held, int server) {
  if (server == rq_->loop().server()) return;
  const double t = ctx_.now();
  const ServerAvailability& a = ctx_.availability;
  const bool up = !a.any() || a.up_at(server, t + 0.25);
  rq_->loop().set_server(server, up, up ? "" : server_down_reason(ctx_.sc.servers[static_cast<size_t>(server)].id, a.failed_at(server, t + 0.25)));
  wake(held);
}

void DeviceWork::registered(const DeviceLock::Held& held) {
  ever_connected_ = true;
  if (!rq_->loop().server_up()) rq_->loop().set_server_available(true);  // its server is back (a recover)
  if (!rq_->loop().joined()) rq_->loop().on_join(ctx_.now());            // inputs start with the first registration
  wake(held);
}

void DeviceWork::lose(const DeviceLock::Held& held, int server, bool current) {
  if (current) copies_to_send_.clear();  // their requests fail below
  const double t = ctx_.now();
  std::string why = failure_reason(t, server);
  if (!why.empty()) {
    if (current)
      rq_->loop().set_server_available(
          false, server_down_reason(ctx_.sc.servers[static_cast<size_t>(server)].id, ctx_.availability.failed_at(server, t + 0.25)));
  } else {
    why = "connection to the server lost";
  }
  for (const DeviceRequest* r : rq_->loop().unfinished_requests(true))
    if (r->rec.server == server) rq_->loop().fail(r->rec.id, t, why);
  wake(held);
}

bool DeviceWork::waiting_on(const DeviceLock::Held&, int server) const {
  for (const DeviceRequest* r : rq_->loop().unfinished_requests(false))
    if (r->rec.server == server) return true;
  return false;
}

DeviceStatus DeviceWork::status(const DeviceLock::Held&) const {
  DeviceStatus s;
  const DeviceLoop& loop = rq_->loop();
  s.bandwidth_mbps = ctx_.schedule.mbps_at(ctx_.now());
  s.queue_length = loop.queued();
  s.unfinished = loop.unfinished();
  s.busy = loop.unfinished() > 0;
  s.completed = loop.completed();
  s.latency_sum_s = loop.latency_sum_s();
  return s;
}

void DeviceWork::finish(const DeviceLock::Held&, const std::string& fatal) {
  ctx_.finished = true;
  rq_->loop().abandon([&](const DeviceRequest& r) { return !fatal.empty() ? fatal : drain_failure_text(r.rec, ctx_.sc.drain_s); });
  cv_.notify_all();
}

}  // namespace coinfer::hw
