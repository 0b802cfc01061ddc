#include "hw/server_work.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/cloud_handoff.hpp"
#include "core/execution_time.hpp"
#include "hw/batch_runner.hpp"
#include "hw/cloud_tier.hpp"
#include "hw/compute_threads.hpp"
#include "hw/device_sessions.hpp"

namespace coinfer::hw {

ServerWork::ServerWork(ServerContext& ctx, const ServerRooms& rooms) : ctx_(ctx), rooms_(rooms) {
  const ServerSpec& me = ctx.sc.servers[static_cast<size_t>(ctx.server_index)];
  timing_ = std::make_unique<ServerTiming>(ctx.sc, ctx.server_index, ctx.luts, ServerTiming::named_models(ctx.sc));
  rules_ = std::make_unique<ServerRequestRules>(ctx.sc, ctx.server_index, *timing_);
  loop_ = std::make_unique<ServerLoop<Pending>>(me.batch, me.workers, *this);
  batching_now_ = me.batch;
}

ServerWork::~ServerWork() = default;

// --- what the server loop asks and does (core/server_loop.hpp): the server's rules
// (core/server_request_rules.hpp, the simulator's too) on each request's facts ---------------------
double ServerWork::expected_seconds(const std::vector<Pending>& batch) const {
  return rules_->expected_seconds(facts(batch.front()), static_cast<int>(batch.size()));
}

void ServerWork::drop(Pending p, double now_s) {
  ResultHeader r;
  r.ok = false;
  r.dropped = true;
  r.error = rules_->drop_reason(facts(p), now_s);
  r.t_received = p.t_received;
  r.t_queued = p.t_queued;
  dropped_replies_.emplace_back(std::move(p), r);  // sent by a worker thread, outside the lock
}

// What this engine observes for a helper's time: the batch's input bytes as received, the helper's
// bandwidth as it last reported it (the scenario's schedule before its first report).
double ServerWork::helper_seconds(int helper, const std::vector<Pending>& batch) const {
  double bytes = 0;
  for (const auto& p : batch) bytes += static_cast<double>(p.state_bytes.size());
  double mbps = ctx_.schedules[static_cast<size_t>(helper)].mbps_at(ctx_.now());
  if (const auto h = rooms_.sessions->handler(*in_loop_, helper); h && h->status.bandwidth_mbps > 0) mbps = h->status.bandwidth_mbps;
  return rules_->helper_seconds(helper, facts(batch.front()), static_cast<int>(batch.size()), bytes, mbps_to_bytes_per_s(mbps));
}

bool ServerWork::helper_available(int helper) const {
  const auto h = rooms_.sessions->handler(*in_loop_, helper);
  return h && h->alive && !h->status.busy;
}

void ServerWork::start_batch(std::uint64_t token, std::vector<Pending> batch) {
  to_run_.emplace_back(token, std::move(batch));
  work_cv_.notify_all();
}

// The batch goes whole to the helper: one task per request, each naming the batch and its size, so
// that the helper runs them as one batch (the simulator's rule); the helper is free again when the
// last result returns. A send that fails is reported to its origin, and the helper's connection is closed:
// its reader then fails what it still holds and frees it (the loop is not re-entered from here).
void ServerWork::forward(int helper_index, std::vector<Pending> batch) {
  const std::shared_ptr<Handler> helper = rooms_.sessions->handler(*in_loop_, helper_index);
  if (!helper) throw std::out_of_range("forward: helper " + std::to_string(helper_index) + " is not connected");
  const std::uint64_t batch_id = next_forward_batch_++;
  forwarded_batch_left_[batch_id] = static_cast<int>(batch.size());
  for (Pending& p : batch) {
    const std::uint64_t id = next_forward_id_++;
    forwarded_[id] = {p.origin, p.task, p.t_received, p.t_queued, helper->id, helper_index, batch_id};
    TaskHeader th{p.split, p.origin->id, unix_now(), batch_id, static_cast<int>(batch.size())};
    try {
      helper->conn->send({MsgType::task, id, pack_task(th, p.state_bytes)});
    } catch (const std::exception& e) {
      forwarded_.erase(id);
      ResultHeader r;
      r.ok = false;
      r.error = "forwarding to helper " + helper->id + " failed: " + e.what();
      ctx_.reply(p.origin, p.task, r, "");
      if (--forwarded_batch_left_[batch_id] == 0) forwarded_batch_left_.erase(batch_id);
      helper->conn->close();
    }
  }
}

// --- the lock held ---------------------------------------------------------------------------------
void ServerWork::take(const ServerLock::Held& held, Pending p) {
  const DeviceSpec& d = ctx_.sc.devices[static_cast<size_t>(p.device)];
  const int group =
      group_ids_.id(p.at_cloud ? cloud_batch_group({d.model, d.dataset}, p.split) : edge_batch_group({d.model, d.dataset}, p.split, p.cloud_split));
  const auto added = enter(held, [&](ServerLoop<Pending>& loop) { return loop.on_upload(std::move(p), group, ctx_.now()); });
  if (added.sealed)
    work_cv_.notify_all();
  else if (added.opened)
    timer_cv_.notify_all();
}

size_t ServerWork::remove_of(const ServerLock::Held& held, const std::shared_ptr<Handler>& origin) {
  return enter(held, [&](ServerLoop<Pending>& loop) { return loop.remove_if([&origin](const Pending& p) { return p.origin == origin; }); });
}

void ServerWork::helper_gone(const ServerLock::Held& held, const Handler& h) {
  for (auto f = forwarded_.begin(); f != forwarded_.end();)
    if (f->second.helper == h.id) {
      ResultHeader r;
      r.ok = false;
      r.error = "helper " + h.id + " disconnected";
      ctx_.reply(f->second.origin, f->second.origin_task, r, "");
      forwarded_batch_left_.erase(f->second.batch);
      f = forwarded_.erase(f);
    } else {
      ++f;
    }
  enter(held, [&](ServerLoop<Pending>& loop) { loop.on_helper_done(h.index, ctx_.now()); });
  work_cv_.notify_all();
}

void ServerWork::set_helpers(const ServerLock::Held& held, const std::vector<int>& helpers) {
  enter(held, [&](ServerLoop<Pending>& loop) { loop.set_helpers(helpers_released_ ? std::vector<int>{} : helpers, ctx_.now()); });
  work_cv_.notify_all();
}

void ServerWork::set_batching(const ServerLock::Held& held, const BatchSpec& spec) {
  if (spec == batching_now_) return;
  batching_now_ = spec;
  enter(held, [&](ServerLoop<Pending>& loop) { loop.set_batching(spec, ctx_.now()); });
  timer_cv_.notify_all();  // a window may now end sooner than the timer waits for
  ctx_.log("batching now " + spec.to_string());
}

std::vector<int> ServerWork::release_helpers(const ServerLock::Held& held) {
  helpers_released_ = true;
  const std::vector<int> helpers = loop_->helpers().helpers();
  enter(held, [&](ServerLoop<Pending>& loop) { loop.set_helpers({}, ctx_.now()); });
  return helpers;
}

// --- the lock not held -----------------------------------------------------------------------------
void ServerWork::helper_result(const std::shared_ptr<Handler>& helper, const Frame& f) {
  Forwarded fw;
  {
    const auto held = ctx_.lock.hold();
    auto it = forwarded_.find(f.task_id);
    if (it == forwarded_.end()) throw ProtocolError("result for a task that was not forwarded to this device");
    fw = it->second;
    forwarded_.erase(it);
    auto left = forwarded_batch_left_.find(fw.batch);
    if (left != forwarded_batch_left_.end() && --left->second == 0) {
      forwarded_batch_left_.erase(left);
      enter(held, [&](ServerLoop<Pending>& loop) {  // its whole batch is back
        loop.on_helper_done(helper->index, ctx_.now());
      });
      work_cv_.notify_all();
    }
  }
  std::string out;
  ResultHeader r = unpack_result(f.payload, out);
  r.helper = helper->id;
  r.t_received = fw.t_received;
  r.t_queued = fw.t_queued;
  ctx_.reply(fw.origin, fw.origin_task, r, out);
}

// Seals batches when their window ends (core/batch_queue.hpp), whether or not a worker is free.
void ServerWork::batch_timer_loop() {
  auto held = ctx_.lock.hold();
  while (!ctx_.stopping()) {
    const double due = loop_->next_deadline_s();
    const double wait = std::min(0.1, std::max(0.0, due - ctx_.now()));
    if (wait > 0) held.wait_for(timer_cv_, wait);
    enter(held, [&](ServerLoop<Pending>& loop) { loop.on_timer(ctx_.now()); });
    work_cv_.notify_all();
    rooms_.sessions->release_helpers_when_done(held);
  }
}

void ServerWork::worker_loop(int worker) {
  (void)worker;
  set_compute_threads(ctx_.opt.threads_per_worker);
  BatchRunner runner;  // a worker's own model copies
  while (!ctx_.stopping()) {
    std::uint64_t token = 0;
    std::vector<Pending> batch;
    std::deque<std::pair<Pending, ResultHeader>> drops;
    {
      const auto held = ctx_.lock.hold();
      drops.swap(dropped_replies_);
    }
    for (auto& [p, r] : drops) ctx_.reply(p.origin, p.task, r, "");
    {
      auto held = ctx_.lock.hold();
      if (to_run_.empty()) {
        held.wait_for(work_cv_, 0.1);
        continue;
      }
      token = to_run_.front().first;
      batch = std::move(to_run_.front().second);
      to_run_.pop_front();
    }
    run_batch(batch, runner);
    const auto held = ctx_.lock.hold();
    enter(held, [&](ServerLoop<Pending>& loop) { loop.on_batch_done(token, ctx_.now()); });
    work_cv_.notify_all();
  }
}

void ServerWork::run_batch(std::vector<Pending>& batch, BatchRunner& runner) {
  const ModelSpec& spec = ctx_.specs[static_cast<size_t>(batch.front().device)];
  ResultHeader r;
  r.batch_size = static_cast<int>(batch.size());
  r.t_batch_start = unix_now();
  std::vector<std::string> outputs(batch.size());
  std::string error;
  try {
    std::vector<const std::string*> states;
    for (auto& p : batch) states.push_back(&p.state_bytes);
    outputs = runner.run(spec, states, facts(batch.front()).end);  // where this server's part ends
  } catch (const std::exception& e) {
    error = e.what();
    ctx_.log("batch of " + std::to_string(batch.size()) + " for " + spec.name + "/" + spec.dataset.name + " failed: " + error);
  }
  r.t_batch_end = unix_now();
  for (size_t i = 0; i < batch.size(); ++i) {
    ResultHeader ri = r;
    ri.t_received = batch[i].t_received;
    ri.t_queued = batch[i].t_queued;
    ri.ok = error.empty();
    ri.error = error;
    if (ri.ok && passes_to_cloud(batch[i].cloud_split, batch[i].at_cloud))
      rooms_.cloud->pass_to_cloud(batch[i], ri, std::move(outputs[i]));
    else
      ctx_.reply(batch[i].origin, batch[i].task, ri, outputs[i]);
  }
}

void ServerWork::wake_all() {
  work_cv_.notify_all();
  timer_cv_.notify_all();
}

}  // namespace coinfer::hw
