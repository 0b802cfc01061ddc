#include "sim/server_actors.hpp"

#include <cstdio>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/device_loop.hpp"
#include "sim/platform_builder.hpp"
#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

ServerActors::ServerActors(ServerSlice slice)
    : s_(std::move(slice)),
      rules_(*s_.scenario, s_.index, *s_.timing),
      loop_(s_.spec->batch, s_.spec->workers, *this),
      timers_sem_(sg4::Semaphore::create(0)),
      run_sem_(sg4::Semaphore::create(0)),
      forward_sem_(sg4::Semaphore::create(0)),
      service_rng_(s_.seed, StreamPurpose::service_time, kServerStreamBase + static_cast<std::uint64_t>(s_.index)) {
  loop_.trace_as(s_.index);  // written only while a conformance test sets ServerLoopTrace's sink
}

void ServerActors::start() {
  const std::string& id = s_.spec->id;
  add_actor(id + ":uploads", s_.host, [this] { dispatcher_loop(); })->daemonize();
  if (s_.spec->batch.windowed()) start_timer();
  if (s_.timing->may_have_helpers()) add_actor(id + ":forwarder", s_.host, [this] { forwarder_loop(); })->daemonize();
  start_workers();
}

void ServerActors::start_workers() {
  workers_.clear();
  for (int w = 0; w < s_.spec->workers; ++w) {
    workers_.push_back(add_actor(s_.spec->id + ":worker" + std::to_string(w), s_.host, [this] { worker_loop(); }));
    workers_.back()->daemonize();
  }
}

void ServerActors::set_up(bool up) {
  if (up == !down_) return;
  down_ = !up;
  if (up) {
    start_workers();
    return;
  }
  ++failures_;
  // Everything it held is lost (its devices fail those requests): the loop forgets its queue and its
  // running batches, the workers die with their executions, batches not yet taken by a worker go.
  loop_.on_failure();
  const double now = sg4::Engine::get_clock();
  for (const auto* batch : running_)  // cut now: their span ends here (server_results' busy time)
    for (SimRequest* r : *batch) (r->at_cloud ? r->rec.t_cloud_batch_end : r->rec.t_batch_end) = now;
  running_.clear();
  for (auto& w : workers_) w->kill();
  workers_.clear();
  to_run_.clear();
  runs_to_wake_ = 0;
  run_sem_ = sg4::Semaphore::create(0);
}

void ServerActors::dispatcher_loop() {
  while (true) {
    s_.uploads->arrived->acquire();
    SimRequest* r = s_.uploads->queue.front();
    s_.uploads->queue.pop_front();
    const std::uint64_t failures = failures_;
    if (r->at_cloud) {                     // passed on by its edge (pp(k,m)): its cloud part joins this server's queue as is
      if (down_ || r->finished) continue;  // lost with this server, or failed meanwhile (its device knows)
      const double now = sg4::Engine::get_clock();
      r->rec.t_cloud_queued = now;
      const auto added = loop_.on_upload(r, r->cloud_group, now);
      wake_actors();
      if (!added.sealed && added.opened) timers_sem_->release();
      continue;
    }
    if (r->cloud_split > 0 && cloud_split_at_server(r->cloud_split, s_.cloud >= 0) == 0) {
      // A pp(k,m) request routed while its device's server had a cloud, uploaded here after a scheme
      // moved the device to this server, which has none: it runs [k,n) here (core/cloud_handoff.hpp).
      r->cloud_split = 0;
      r->rec.bytes_to_cloud = 0;
      r->batch_group = r->whole_group;
    }
    // Decompressing what arrived (measured per split on this server's hardware; 0 when sent raw),
    // one upload after another as the server's receiving thread does.
    const LutTable& lut = *s_.timing->server_lut(r->rec.device, r->binding);
    const double decompress_s = lut.wire_decompress_seconds(r->device_split);
    if (decompress_s > 0) sg4::this_actor::sleep_for(decompress_s);
    if (down_ || failures != failures_) continue;  // lost with the server (its device failed it)
    // Every simcall (semaphore release) may let other actors run, so the loop is brought to a
    // consistent state first and the wake-ups come last.
    const double now = sg4::Engine::get_clock();
    r->rec.t_queued = now;
    r->rec.server = s_.index;
    const auto added = loop_.on_upload(r, r->batch_group, now);
    wake_actors();
    if (!added.sealed && added.opened) timers_sem_->release();
  }
}

void ServerActors::start_timer() {
  const std::uint64_t generation = ++timer_generation_;
  timers_sem_ = sg4::Semaphore::create(0);
  add_actor(s_.spec->id + ":batch-timer", s_.host, [this, generation, wake = timers_sem_] { timer_loop(generation, wake); })->daemonize();
}

void ServerActors::timer_loop(std::uint64_t generation, sg4::SemaphorePtr wake) {
  // Under one batching, windows all have the same length, so the earliest deadline only moves later;
  // sleeping until it and sealing what is due there is exact. One permit per opened batch wakes the
  // timer when idle. A new batching (set_batching) recomputes the open windows and starts a new
  // timer: this one ends when it next wakes.
  while (generation == timer_generation_) {
    const double deadline = loop_.next_deadline_s();
    if (deadline == std::numeric_limits<double>::infinity()) {
      wake->acquire();
      continue;
    }
    sg4::this_actor::sleep_until(deadline);
    if (generation != timer_generation_) return;
    loop_.on_timer(sg4::Engine::get_clock());
    wake_actors();
  }
}

void ServerActors::set_helpers(const std::vector<int>& devices) {
  loop_.set_helpers(devices, sg4::Engine::get_clock());
  wake_actors();
}

void ServerActors::set_batching(const BatchSpec& spec) {
  loop_.set_batching(spec, sg4::Engine::get_clock());
  if (spec.windowed())
    start_timer();
  else
    ++timer_generation_;  // no window: no timer (the one before ends when it next wakes)
  wake_actors();
}

void ServerActors::wake_actors() {
  // After the loop's call returned: a release may let other actors run, and they may call the loop
  // and count more wake-ups meanwhile; so the counts are taken first (each wake-up released once).
  const int runs = runs_to_wake_, forwards = forwards_to_wake_;
  runs_to_wake_ = forwards_to_wake_ = 0;
  for (int i = 0; i < runs; ++i) run_sem_->release();
  for (int i = 0; i < forwards; ++i) forward_sem_->release();
}

ServerRequestFacts ServerActors::facts(const SimRequest& r) {
  ServerRequestFacts f;
  f.device = r.rec.device;
  f.binding = r.binding;
  f.begin = r.server_begin();
  f.end = r.server_end(-1);
  f.device_split = r.device_split;
  f.may_forward = may_forward_to_helper(r.cloud_split);  // a request at its cloud has its cloud split
  f.t_created_s = r.rec.t_created;
  f.bytes = r.rec.bytes_up;
  return f;
}

std::string ServerActors::describe(SimRequest* const& r) const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "r%lld d%d s%d c%d a%d t%.17g b%.17g", static_cast<long long>(r->rec.id), r->rec.device, r->device_split,
                r->cloud_split, r->at_cloud ? 1 : 0, r->rec.t_created, r->rec.bytes_up);
  return buf;
}

double ServerActors::expected_seconds(const std::vector<SimRequest*>& batch) const {
  return rules_.expected_seconds(facts(*batch.front()), static_cast<int>(batch.size()));
}

double ServerActors::sample_server_seconds(const std::vector<SimRequest*>& batch) {
  const SimRequest& first = *batch.front();
  const LutTable& lut = *s_.timing->server_lut(first.rec.device, first.binding);
  const double u = lut.has_distributions() ? service_rng_.next_unit() : 0.5;  // no draw for tables without distributions
  return s_.timing->time().sample_seconds(lut, first.server_begin(), first.server_end(lut.num_stages()), static_cast<int>(batch.size()), u);
}

// The engine's observations: the batch's upload bytes, the helper's bandwidth now.
double ServerActors::helper_seconds(int helper, const std::vector<SimRequest*>& batch) const {
  double bytes = 0;
  for (const SimRequest* r : batch) bytes += r->rec.bytes_up;
  return rules_.helper_seconds(helper, facts(*batch.front()), static_cast<int>(batch.size()), bytes,
                               (*s_.bandwidth)[helper].bytes_per_s_at(sg4::Engine::get_clock()));
}

void ServerActors::start_batch(std::uint64_t token, std::vector<SimRequest*> batch) {
  to_run_.emplace_back(token, std::move(batch));
  ++runs_to_wake_;
}

void ServerActors::drop(SimRequest* r, double now_s) {
  // A notice with no payload (its few header bytes are not modelled): the device records it dropped.
  if (!r->at_cloud) r->rec.server = s_.index;
  r->dropped_at_server = true;
  r->rec.bytes_down = 0;
  (*s_.devices)[static_cast<size_t>(r->rec.device)]->send_dropped(r, Endpoint{true, s_.index}, rules_.drop_reason(facts(*r), now_s));
}

void ServerActors::forward(int helper, std::vector<SimRequest*> batch) {
  HelpTask task;
  task.batch = std::move(batch);
  task.done = [this, helper] {
    loop_.on_helper_done(helper, sg4::Engine::get_clock());
    wake_actors();
  };
  to_forward_.emplace_back(helper, std::move(task));
  ++forwards_to_wake_;
}

void ServerActors::forwarder_loop() {
  while (true) {
    forward_sem_->acquire();
    auto [helper, task] = std::move(to_forward_.front());
    to_forward_.pop_front();
    double bytes = 0;
    for (const SimRequest* r : task.batch) bytes += r->rec.bytes_up;
    in_help_.push_back(std::move(task));
    (*s_.devices)[static_cast<size_t>(helper)]->send_help(&in_help_.back(), Endpoint{true, s_.index}, bytes);
  }
}

void ServerActors::worker_loop() {
  while (true) {
    run_sem_->acquire();
    auto [token, batch] = std::move(to_run_.front());
    to_run_.pop_front();
    const int b = static_cast<int>(batch.size());
    const double seconds = sample_server_seconds(batch);
    const double start = sg4::Engine::get_clock();
    for (SimRequest* r : batch) {
      if (r->at_cloud) {
        r->rec.t_cloud_batch_start = start;
        r->rec.cloud_batch_size = b;
      } else {
        r->rec.t_batch_start = start;
        r->rec.batch_size = b;
      }
    }
    running_.push_back(&batch);
    if (seconds > 0) sg4::this_actor::execute(seconds * kFlopsPerSecond);
    running_.erase(std::find(running_.begin(), running_.end(), &batch));
    const double end = sg4::Engine::get_clock();
    loop_.on_batch_done(token, end);
    wake_actors();
    std::vector<SimRequest*> for_cloud;
    for (SimRequest* r : batch) {
      if (r->at_cloud) {
        r->rec.t_cloud_batch_end = end;
      } else {
        r->rec.t_batch_end = end;
        if (passes_to_cloud(r->cloud_split, r->at_cloud)) {  // its edge part: on to the cloud (core/cloud_handoff.hpp)
          for_cloud.push_back(r);
          continue;
        }
      }
      (*s_.devices)[static_cast<size_t>(r->rec.device)]->send_result(r, Endpoint{true, s_.index});
    }
    // Started last (creating an actor may let others run).
    for (SimRequest* r : for_cloud) add_actor(s_.spec->id + ":to-cloud", s_.host, [this, r] { pass_to_cloud(r); })->daemonize();
  }
}

void ServerActors::pass_to_cloud(SimRequest* r) {
  // The rule (sim/README.md "Cloud tier"): when its edge batch ends, the edge sends each request's
  // tensor at stage m to its cloud, each transfer on its own (a stream each: they share the links, as
  // SimGrid shares a link among the transfers crossing it). From the start of its transfer the cloud
  // holds it: a failure of the cloud then fails it (its device fails what rec.cloud names); a cloud
  // already down fails it at once with the cloud's why_down.
  if (r->finished) return;  // failed meanwhile (its device knows)
  const ServerStatus& st = (*s_.server_status)[static_cast<size_t>(s_.cloud)];
  r->at_cloud = true;
  r->rec.cloud = s_.cloud;
  if (!st.up) {
    (*s_.devices)[static_cast<size_t>(r->rec.device)]->fail_request(r, st.why_down);
    return;
  }
  const std::uint64_t failures = st.failures;
  ++to_cloud_;
  sg4::Comm::sendto(s_.host, s_.cloud_host, static_cast<std::uint64_t>(std::llround(r->rec.bytes_to_cloud)));
  --to_cloud_;
  if (r->finished || st.failures != failures) return;  // the cloud failed meanwhile: its device failed it
  s_.cloud_uploads->queue.push_back(r);
  s_.cloud_uploads->arrived->release();
}

}  // namespace coinfer::sim
