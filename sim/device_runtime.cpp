#include "sim/device_runtime.hpp"

#include <cmath>

#include "sim/edge_server.hpp"
#include "sim/sim_run.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer {

DeviceRuntime::DeviceRuntime(SimRun& run, int index)
    : run_(run),
      index_(index),
      spec_(run.scenario->devices[index]),
      host_(run.platform.device_hosts[index]),
      server_host_(run.platform.server_hosts[run.scenario->server_index(run.scenario->devices[index].server)]),
      num_stages_(run.device_models[index].num_stages()),
      exec_sem_(sg4::Semaphore::create(0)),
      up_sem_(sg4::Semaphore::create(0)),
      down_sem_(sg4::Semaphore::create(0)) {
  in_flight_limit_ = spec_.workload.in_flight > 0 ? spec_.workload.in_flight : default_in_flight(spec_.strategy);
  server_ = run.servers[run.scenario->server_index(spec_.server)].get();
  const ModelSpec& m = run.device_models[index];
  for (int k = 0; k <= num_stages_; ++k) {
    bytes_at_split_.push_back(m.bytes_at_split(k));
    batch_group_.push_back(run.batch_group_id(spec_.model, spec_.dataset, k));
  }
  result_bytes_ = bytes_at_split_.back();
  strategy_text_ = spec_.strategy.to_string();
}

void DeviceRuntime::start() {
  sg4::Actor::create(spec_.id + ":executor", host_, [this] { executor_loop(); })->daemonize();
  sg4::Actor::create(spec_.id + ":uplink", host_, [this] { uplink_loop(); })->daemonize();
  sg4::Actor::create(spec_.id + ":downlink", host_, [this] { downlink_loop(); })->daemonize();
  if (spec_.workload.arrival != WorkloadSpec::Arrival::closed_loop)
    sg4::Actor::create(spec_.id + ":generator", host_, [this] { generator_loop(); })->daemonize();
}

bool DeviceRuntime::accepting() const {
  const double now = sg4::Engine::get_clock();
  return now >= spec_.join_at_s && now < spec_.leave_at_s && now < run_.arrivals_end_s;
}

void DeviceRuntime::create_request() {
  SimRequest& r = run_.new_request(index_);
  const Strategy& st = spec_.strategy;
  r.rec.strategy = strategy_text_;
  ++unfinished_;
  if (st.kind == Strategy::Kind::data_parallel) {
    r.data_parallel = true;
    dp_pending_.push_back(&r);
    route_data_parallel();
    return;
  }
  r.device_split = st.device_split(num_stages_);
  route(&r);
}

void DeviceRuntime::route(SimRequest* r) {
  r->rec.split = r->device_split;
  if (r->device_split < num_stages_) {
    r->rec.bytes_up = bytes_at_split_[r->device_split];
    r->rec.bytes_down = result_bytes_;
    r->batch_group = batch_group_[r->device_split];
  }
  if (r->device_split > 0) {
    exec_queue_.push_back(r);
    exec_sem_->release();
  } else {
    up_queue_.push_back(r);
    up_sem_->release();
  }
}

void DeviceRuntime::route_data_parallel() {
  while (!dp_pending_.empty()) {
    const bool device_free = !dp_device_busy_;
    const bool server_free = !dp_server_busy_;
    if (!device_free && !server_free) return;
    bool to_server = server_free;
    if (device_free && server_free) {
      // Both free: pick the lower estimated latency at the bandwidth the device sees now.
      const double bw = run_.platform.device_bandwidth[index_].bytes_per_s_at(sg4::Engine::get_clock());
      const double latency = 2 * (spec_.link.latency_ms + run_.scenario->access_point.latency_ms) * 1e-3;
      const double local = run_.device_luts[index_]->mean_seconds(0, num_stages_, 1);
      const double remote = latency + (bytes_at_split_[0] + result_bytes_) / bw +
                            run_.device_server_luts[index_]->mean_seconds(0, num_stages_, 1);
      to_server = remote < local;
    }
    SimRequest* r = dp_pending_.front();
    dp_pending_.pop_front();
    r->dp_to_server = to_server;
    r->device_split = to_server ? 0 : num_stages_;
    (to_server ? dp_server_busy_ : dp_device_busy_) = true;
    route(r);
  }
}

void DeviceRuntime::try_create_closed_loop() {
  if (spec_.workload.arrival != WorkloadSpec::Arrival::closed_loop) return;
  while (accepting()) {
    const Strategy& st = spec_.strategy;
    bool ready;
    if (st.kind == Strategy::Kind::data_parallel) {
      ready = dp_pending_.empty() && (!dp_device_busy_ || !dp_server_busy_);
    } else {
      const bool first_is_executor = st.device_split(num_stages_) > 0;
      ready = unfinished_ < in_flight_limit_ &&
              (first_is_executor ? (!exec_busy_ && exec_queue_.empty()) : (!up_busy_ && up_queue_.empty()));
    }
    if (!ready) return;
    create_request();
  }
}

void DeviceRuntime::executor_loop() {
  sg4::this_actor::sleep_until(spec_.join_at_s);
  try_create_closed_loop();
  while (true) {
    exec_sem_->acquire();
    SimRequest* r = exec_queue_.front();
    exec_queue_.pop_front();
    exec_busy_ = true;
    r->rec.t_device_start = sg4::Engine::get_clock();
    const double seconds = run_.device_luts[index_]->mean_seconds(0, r->device_split, 1);
    if (seconds > 0) sg4::this_actor::execute(seconds * kFlopsPerSecond);
    r->rec.t_device_end = sg4::Engine::get_clock();
    exec_busy_ = false;
    if (r->device_split >= num_stages_) {
      r->rec.t_result = r->rec.t_device_end;
      if (r->data_parallel) dp_device_busy_ = false;
      on_finished(r);
    } else {
      up_queue_.push_back(r);
      up_sem_->release();
    }
    route_data_parallel();
    try_create_closed_loop();
  }
}

void DeviceRuntime::count_radio(double bytes) {
  const double now = sg4::Engine::get_clock();
  if (now >= run_.scenario->warmup_s && now <= run_.scenario->duration_s) radio_bytes_window_ += bytes;
}

void DeviceRuntime::uplink_loop() {
  while (true) {
    up_sem_->acquire();
    SimRequest* r = up_queue_.front();
    up_queue_.pop_front();
    up_busy_ = true;
    const auto bytes = static_cast<std::uint64_t>(std::llround(r->rec.bytes_up));
    if (bytes > 0) sg4::Comm::sendto(host_, server_host_, bytes);
    r->rec.t_uplink_end = sg4::Engine::get_clock();
    bytes_sent_ += r->rec.bytes_up;
    count_radio(r->rec.bytes_up);
    up_busy_ = false;
    server_->enqueue(r);
    try_create_closed_loop();
  }
}

void DeviceRuntime::deliver_result(SimRequest* r) {
  down_queue_.push_back(r);
  down_sem_->release();
}

void DeviceRuntime::downlink_loop() {
  while (true) {
    down_sem_->acquire();
    SimRequest* r = down_queue_.front();
    down_queue_.pop_front();
    const auto bytes = static_cast<std::uint64_t>(std::llround(r->rec.bytes_down));
    if (bytes > 0) sg4::Comm::sendto(server_host_, host_, bytes);
    r->rec.t_result = sg4::Engine::get_clock();
    bytes_received_ += r->rec.bytes_down;
    count_radio(r->rec.bytes_down);
    if (r->dp_to_server) dp_server_busy_ = false;
    on_finished(r);
    route_data_parallel();
    try_create_closed_loop();
  }
}

void DeviceRuntime::on_finished(SimRequest* r) {
  --unfinished_;
  run_.finish(*r);
}

void DeviceRuntime::generator_loop() {
  // Open loop: arrivals independent of completions. Poisson inter-arrival times come from this
  // device's own generator seeded by (scenario seed, device index), so runs are reproducible.
  sg4::this_actor::sleep_until(spec_.join_at_s);
  const double end = std::min(spec_.leave_at_s, run_.arrivals_end_s);
  if (spec_.workload.arrival == WorkloadSpec::Arrival::trace) {
    for (double t : spec_.workload.arrival_times_s) {
      if (t < spec_.join_at_s) continue;
      if (t >= end) break;
      sg4::this_actor::sleep_until(t);
      create_request();
    }
    return;
  }
  // splitmix64 -> uniform in (0,1): portable across standard libraries, unlike std::*_distribution.
  std::uint64_t state = run_.scenario->seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(index_) + 1;
  auto uniform = [&state] {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
  };
  double t = sg4::Engine::get_clock();
  while (true) {
    t += -std::log(uniform()) / spec_.workload.rate_per_s;
    if (t >= end) return;
    sg4::this_actor::sleep_until(t);
    create_request();
  }
}

}  // namespace coinfer
