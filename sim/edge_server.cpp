#include "sim/edge_server.hpp"

#include <algorithm>

#include "sim/device_runtime.hpp"
#include "sim/sim_run.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer {

EdgeServer::EdgeServer(SimRun& run, int index)
    : run_(run),
      index_(index),
      spec_(run.scenario->servers[index]),
      host_(run.platform.server_hosts[index]),
      timers_sem_(sg4::Semaphore::create(0)),
      ready_sem_(sg4::Semaphore::create(0)),
      forward_sem_(sg4::Semaphore::create(0)) {}

void EdgeServer::start() {
  if (spec_.batch.window_ms > 0 && spec_.batch.max_size > 1)
    sg4::Actor::create(spec_.id + ":batch-timer", host_, [this] { timer_loop(); })->daemonize();
  bool may_have_helpers = false;
  for (const auto& d : run_.scenario->devices)
    may_have_helpers = may_have_helpers || (d.server == spec_.id && d.workload.arrival == WorkloadSpec::Arrival::none);
  if (may_have_helpers) sg4::Actor::create(spec_.id + ":forwarder", host_, [this] { forwarder_loop(); })->daemonize();
  for (int w = 0; w < spec_.workers; ++w)
    sg4::Actor::create(spec_.id + ":worker" + std::to_string(w), host_, [this] { worker_loop(); })->daemonize();
}

void EdgeServer::enqueue(SimRequest* r) {
  // Every simcall (semaphore release) may let other actors run, so the queue is brought to a
  // consistent state first and the wake-ups come last.
  const double now = sg4::Engine::get_clock();
  r->rec.t_queued = now;
  r->rec.server = index_;
  const bool windowed = spec_.batch.window_ms > 0 && spec_.batch.max_size > 1;
  auto it = open_.find(r->batch_group);
  const bool opened = it == open_.end();
  if (opened) it = open_.emplace(r->batch_group, Group{next_group_id_++, now + spec_.batch.window_ms * 1e-3, {}}).first;
  it->second.members.push_back(r);
  const bool full = static_cast<int>(it->second.members.size()) >= spec_.batch.max_size || !windowed;
  const bool arm_timer = opened && windowed && !full;
  if (arm_timer) timers_.emplace_back(r->batch_group, it->second.id);
  if (full) seal(r->batch_group);
  if (arm_timer) timers_sem_->release();
}

void EdgeServer::seal(int batch_group) {
  // State first, then the wake-up (see enqueue).
  auto it = open_.find(batch_group);
  ready_.push_back(std::move(it->second.members));
  open_.erase(it);
  maybe_forward();
  ready_sem_->release();
}

void EdgeServer::set_helpers(const std::vector<int>& devices) {
  std::map<int, bool> next;
  for (int d : devices) next[d] = helper_busy_.count(d) ? helper_busy_[d] : false;
  helper_busy_ = next;
  maybe_forward();
}

void EdgeServer::helper_done(int device) {
  if (helper_busy_.count(device)) helper_busy_[device] = false;
  maybe_forward();
}

double EdgeServer::server_seconds(const std::vector<SimRequest*>& batch) const {
  const SimRequest& first = *batch.front();
  const LutTable* lut = run_.device_server_luts[first.rec.device];
  return lut->mean_seconds(first.device_split, lut->num_stages(), static_cast<int>(batch.size()));
}

double EdgeServer::helper_seconds(int helper, const std::vector<SimRequest*>& batch) const {
  const SimRequest& first = *batch.front();
  const LutTable& lut = *run_.helper_luts.at({helper, first.rec.device});
  const int b = static_cast<int>(batch.size());
  double bytes = 0;
  for (const SimRequest* r : batch) bytes += r->rec.bytes_up;
  const double compute = lut.mean_seconds(first.device_split, lut.num_stages(), std::min(b, lut.max_batch())) *
                         (b > lut.max_batch() ? static_cast<double>(b) / lut.max_batch() : 1.0);
  return bytes / run_.platform.device_bandwidth[helper].bytes_per_s_at(sg4::Engine::get_clock()) + compute;
}

void EdgeServer::maybe_forward() {
  // Idle workers are all blocked waiting for a batch and take one each; batches beyond that would
  // wait. The newest waiting batch goes to a free helper if the helper is expected to finish it
  // sooner. State first, wake-ups last (see enqueue).
  if (helper_busy_.empty()) return;
  const double now = sg4::Engine::get_clock();
  int released = 0;
  while (static_cast<int>(ready_.size()) > spec_.workers - busy_workers_) {
    auto free_helper = std::find_if(helper_busy_.begin(), helper_busy_.end(), [](const auto& kv) { return !kv.second; });
    if (free_helper == helper_busy_.end()) break;
    double ahead = 0;  // server work queued before the newest batch
    for (size_t i = 0; i + 1 < ready_.size(); ++i) ahead += server_seconds(ready_[i]);
    double first_free = now;
    if (busy_workers_ >= spec_.workers && !running_until_s_.empty())
      first_free = *std::min_element(running_until_s_.begin(), running_until_s_.end());
    const double via_server = (first_free - now) + ahead / spec_.workers + server_seconds(ready_.back());
    if (helper_seconds(free_helper->first, ready_.back()) >= via_server) break;
    free_helper->second = true;
    to_forward_.emplace_back(free_helper->first, std::move(ready_.back()));
    ready_.pop_back();
    ++released;
  }
  for (int i = 0; i < released; ++i) forward_sem_->release();
}

void EdgeServer::forwarder_loop() {
  while (true) {
    forward_sem_->acquire();
    auto [helper, batch] = std::move(to_forward_.front());
    to_forward_.pop_front();
    run_.devices[helper]->send_help(std::move(batch), index_);
  }
}

int EdgeServer::queued() const {
  size_t n = 0;
  for (const auto& kv : open_) n += kv.second.members.size();
  for (const auto& b : ready_) n += b.size();
  return static_cast<int>(n);
}

void EdgeServer::timer_loop() {
  // Deadlines arrive in FIFO order (one window per server), so sleeping on the front is exact.
  while (true) {
    timers_sem_->acquire();
    auto [batch_group, id] = timers_.front();
    timers_.pop_front();
    auto it = open_.find(batch_group);
    if (it == open_.end() || it->second.id != id) continue;  // sealed early (full)
    sg4::this_actor::sleep_until(it->second.deadline_s);
    it = open_.find(batch_group);
    if (it != open_.end() && it->second.id == id) seal(batch_group);
  }
}

void EdgeServer::worker_loop() {
  while (true) {
    ready_sem_->acquire();
    if (ready_.empty()) continue;  // the batch went to a helper
    std::vector<SimRequest*> batch = std::move(ready_.front());
    ready_.pop_front();
    const SimRequest& first = *batch.front();
    const int b = static_cast<int>(batch.size());
    const LutTable* lut = run_.device_server_luts[first.rec.device];
    const int n = lut->num_stages();
    const double seconds = lut->mean_seconds(first.device_split, n, b);
    const double start = sg4::Engine::get_clock();
    for (SimRequest* r : batch) {
      r->rec.t_batch_start = start;
      r->rec.batch_size = b;
    }
    ++busy_workers_;
    running_until_s_.push_back(start + seconds);
    if (seconds > 0) sg4::this_actor::execute(seconds * kFlopsPerSecond);
    running_until_s_.erase(std::find(running_until_s_.begin(), running_until_s_.end(), start + seconds));
    --busy_workers_;
    const double end = sg4::Engine::get_clock();
    for (SimRequest* r : batch) {
      r->rec.t_batch_end = end;
      run_.devices[r->rec.device]->send_result(r);
    }
  }
}

}  // namespace coinfer
