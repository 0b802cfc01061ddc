#include "sim/device_runtime.hpp"

#include <cmath>
#include <limits>

#include "sim/edge_server.hpp"
#include "sim/sim_run.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
}

DeviceRuntime::DeviceRuntime(SimRun& run, int index)
    : run_(run),
      index_(index),
      spec_(run.scenario->devices[index]),
      host_(run.platform.device_hosts[index]),
      server_host_(run.platform.server_hosts[run.scenario->server_index(run.scenario->devices[index].server)]),
      server_(run.servers[run.scenario->server_index(run.scenario->devices[index].server)].get()),
      results_(sg4::Mailbox::by_name("results:" + run.scenario->devices[index].id)),
      control_(sg4::Mailbox::by_name("control:" + run.scenario->devices[index].id)),
      strategy_(run.scenario->devices[index].strategy),
      num_stages_(run.device_models[index].num_stages()),
      arrivals_(run.scenario->devices[index], run.scenario->seed, index, run.arrivals_end_s) {
  in_flight_limit_ = spec_.workload.in_flight > 0 ? spec_.workload.in_flight : default_in_flight(strategy_);
  const ModelSpec& m = run.device_models[index];
  for (int k = 0; k <= num_stages_; ++k) {
    bytes_at_split_.push_back(m.bytes_at_split(k));
    batch_group_.push_back(run.batch_group_id(spec_.model, spec_.dataset, k));
  }
  result_bytes_ = bytes_at_split_.back();
  strategy_text_ = strategy_.to_string();
  helper_ = spec_.workload.arrival == WorkloadSpec::Arrival::none;
  if (helper_) help_ = sg4::Mailbox::by_name("help:" + spec_.id);
}

void DeviceRuntime::send_help(std::vector<SimRequest*> batch, int server) {
  double bytes = 0;
  for (SimRequest* r : batch) bytes += r->rec.bytes_up;
  help_tasks_.push_back(HelpTask{std::move(batch), server});
  help_->put_init(&help_tasks_.back(), static_cast<std::uint64_t>(std::llround(bytes)))->detach();
}

void DeviceRuntime::on_help_arrived() {
  // Runs the server part of the batch on this device, with this device's LUT for the origin model.
  helping_ = incoming_help_;
  SimRequest* first = helping_->batch.front();
  const int b = static_cast<int>(helping_->batch.size());
  const LutTable& lut = *run_.helper_luts.at({index_, first->rec.device});
  const double seconds = lut.mean_seconds(first->device_split, lut.num_stages(), std::min(b, lut.max_batch())) *
                         (b > lut.max_batch() ? static_cast<double>(b) / lut.max_batch() : 1.0);
  const double now = sg4::Engine::get_clock();
  for (SimRequest* r : helping_->batch) {
    r->rec.t_batch_start = now;
    r->rec.batch_size = b;
    r->rec.helper = index_;
  }
  help_exec_ = sg4::this_actor::exec_async(seconds * kFlopsPerSecond);
  help_get_ = help_->get_async<HelpTask>(&incoming_help_);
}

void DeviceRuntime::on_help_done() {
  const double now = sg4::Engine::get_clock();
  help_exec_ = nullptr;
  for (SimRequest* r : helping_->batch) {
    r->rec.t_batch_end = now;
    run_.devices[r->rec.device]->send_result(r);  // straight from the helper to the origin device
  }
  const int server = helping_->server;
  helping_ = nullptr;
  run_.servers[server]->helper_done(index_);
}

void DeviceRuntime::start() {
  actor_ = sg4::Actor::create(spec_.id, host_, [this] { event_loop(); });
  actor_->daemonize();
}

void DeviceRuntime::cancel_activities() {
  // Cancelled by their owner, before the engine ends: SimGrid aborts when it kills an actor that waits
  // on a pending execution, and a transfer freed unfinished keeps the engine running to its end.
  for (const auto& a : std::vector<sg4::ActivityPtr>{exec_, upload_, help_exec_, result_get_, control_get_, help_get_})
    if (a) a->cancel();
  exec_ = help_exec_ = nullptr;
  upload_ = result_get_ = control_get_ = help_get_ = nullptr;
}

bool DeviceRuntime::accepting() const {
  const double now = sg4::Engine::get_clock();
  return now >= spec_.join_at_s && now < spec_.leave_at_s && now < run_.arrivals_end_s && run_.may_create_request();
}

void DeviceRuntime::create_request() {
  SimRequest& r = run_.new_request(index_);
  r.rec.strategy = strategy_text_;
  ++unfinished_;
  if (strategy_.kind == Strategy::Kind::data_parallel) {
    r.data_parallel = true;
    dp_pending_.push_back(&r);
    route_data_parallel();
    return;
  }
  r.device_split = strategy_.device_split(num_stages_);
  route(&r);
}

void DeviceRuntime::route(SimRequest* r) {
  r->rec.split = r->device_split;
  if (r->device_split < num_stages_) {
    r->rec.bytes_up = bytes_at_split_[r->device_split];
    r->rec.bytes_down = result_bytes_;
    r->batch_group = batch_group_[r->device_split];
  }
  (r->device_split > 0 ? exec_queue_ : up_queue_).push_back(r);
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
    const Strategy& st = strategy_;
    bool ready;
    if (st.kind == Strategy::Kind::data_parallel) {
      ready = dp_pending_.empty() && (!dp_device_busy_ || !dp_server_busy_);
    } else {
      const bool first_is_executor = st.device_split(num_stages_) > 0;
      ready = unfinished_ < in_flight_limit_ && (first_is_executor ? (computing_ == nullptr && exec_queue_.empty())
                                                                   : (uploading_ == nullptr && up_queue_.empty()));
    }
    if (!ready) return;
    create_request();
  }
}

void DeviceRuntime::start_idle_stages() {
  if (computing_ == nullptr && !exec_queue_.empty()) {
    computing_ = exec_queue_.front();
    exec_queue_.pop_front();
    computing_->rec.t_device_start = sg4::Engine::get_clock();
    const double seconds = run_.device_luts[index_]->mean_seconds(0, computing_->device_split, 1);
    exec_ = sg4::this_actor::exec_async(seconds * kFlopsPerSecond);
  }
  if (uploading_ == nullptr && !up_queue_.empty()) {
    uploading_ = up_queue_.front();
    up_queue_.pop_front();
    upload_ = sg4::Comm::sendto_async(host_, server_host_, static_cast<std::uint64_t>(std::llround(uploading_->rec.bytes_up)));
  }
}

void DeviceRuntime::on_computed() {
  SimRequest* r = computing_;
  computing_ = nullptr;
  exec_ = nullptr;
  r->rec.t_device_end = sg4::Engine::get_clock();
  if (r->device_split >= num_stages_) {
    r->rec.t_result = r->rec.t_device_end;
    if (r->data_parallel) dp_device_busy_ = false;
    on_finished(r);
  } else {
    up_queue_.push_back(r);
  }
}

void DeviceRuntime::on_uploaded() {
  SimRequest* r = uploading_;
  uploading_ = nullptr;
  upload_ = nullptr;
  r->rec.t_uplink_end = sg4::Engine::get_clock();
  bytes_sent_ += r->rec.bytes_up;
  count_radio(r->rec.bytes_up);
  server_->enqueue(r);
}

void DeviceRuntime::send_result(SimRequest* r) {
  results_->put_init(r, static_cast<std::uint64_t>(std::llround(r->rec.bytes_down)))->detach();
}

void DeviceRuntime::on_result() {
  SimRequest* r = arriving_;
  r->rec.t_result = sg4::Engine::get_clock();
  bytes_received_ += r->rec.bytes_down;
  count_radio(r->rec.bytes_down);
  if (r->dp_to_server) dp_server_busy_ = false;
  on_finished(r);
  result_get_ = results_->get_async<SimRequest>(&arriving_);
}

void DeviceRuntime::send_strategy(const Strategy* s, double bytes) {
  control_->put_init(const_cast<Strategy*>(s), static_cast<std::uint64_t>(std::llround(bytes)))->detach();
}

void DeviceRuntime::apply_strategy(const Strategy& s) {
  strategy_ = s;
  strategy_text_ = s.to_string();
  if (spec_.workload.in_flight <= 0) in_flight_limit_ = default_in_flight(s);
}

void DeviceRuntime::on_control() {
  apply_strategy(*incoming_strategy_);
  control_get_ = control_->get_async<Strategy>(&incoming_strategy_);
}

void DeviceRuntime::count_radio(double bytes) {
  const double now = sg4::Engine::get_clock();
  if (now >= run_.scenario->warmup_s && now <= run_.scenario->duration_s) radio_bytes_window_ += bytes;
}

void DeviceRuntime::on_finished(SimRequest* r) {
  --unfinished_;
  run_.finish(*r);
}

void DeviceRuntime::event_loop() {
  result_get_ = results_->get_async<SimRequest>(&arriving_);
  control_get_ = control_->get_async<Strategy>(&incoming_strategy_);
  if (helper_) help_get_ = help_->get_async<HelpTask>(&incoming_help_);
  // The drain's end (run_.hard_end_s) stops the loop: whatever is still running or waiting is
  // cancelled here and its requests are recorded failed by the controller.
  sg4::this_actor::sleep_until(std::min(spec_.join_at_s, run_.hard_end_s));
  next_arrival_s_ = arrivals_.next();
  std::vector<sg4::ActivityPtr> waiting;
  while (true) {
    if (sg4::Engine::get_clock() >= run_.hard_end_s) {
      cancel_activities();
      return;
    }
    while (next_arrival_s_ <= sg4::Engine::get_clock()) {
      if (!run_.may_create_request()) {
        next_arrival_s_ = kNever;
        break;
      }
      create_request();
      next_arrival_s_ = arrivals_.next();
    }
    route_data_parallel();
    try_create_closed_loop();
    start_idle_stages();
    waiting.clear();
    waiting.push_back(result_get_);
    waiting.push_back(control_get_);
    if (helper_ && help_exec_) waiting.push_back(help_exec_);
    else if (helper_) waiting.push_back(help_get_);  // one forwarded batch at a time
    if (exec_) waiting.push_back(exec_);
    if (upload_) waiting.push_back(upload_);
    const double wake_s = std::min(next_arrival_s_, run_.hard_end_s);
    const ssize_t k = sg4::Activity::wait_any_for(waiting, wake_s - sg4::Engine::get_clock());
    if (k < 0) continue;  // the next arrival is due, or the drain ended
    if (waiting[k] == result_get_) on_result();
    else if (waiting[k] == control_get_) on_control();
    else if (helper_ && waiting[k] == help_get_) on_help_arrived();
    else if (helper_ && waiting[k] == help_exec_) on_help_done();
    else if (waiting[k] == exec_) on_computed();
    else on_uploaded();
  }
}

}  // namespace coinfer
