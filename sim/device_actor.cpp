#include "sim/device_actor.hpp"

#include <cmath>
#include <limits>

#include "core/wire_bytes.hpp"
#include "sim/platform_builder.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

namespace {
constexpr unsigned kDeviceStackBytes = 256 * 1024;
}

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
}

DeviceActor::DeviceActor(DeviceSlice slice)
    : s_(std::move(slice)),
      strategy_(s_.spec->strategy),
      num_stages_(s_.bindings.at(0).model->num_stages()),
      dp_router_(data_parallel_costs(*s_.spec, s_.access_point, *s_.bindings[0].model, s_.bindings[0].lut, s_.bindings[0].server_lut, *s_.time)),
      arrivals_(*s_.spec, s_.seed, s_.index, s_.ledger->arrivals_end_s()),
      service_rng_(s_.seed, StreamPurpose::service_time, static_cast<std::uint64_t>(s_.index)),
      wire_rng_(s_.seed, StreamPurpose::wire_bytes, static_cast<std::uint64_t>(s_.index)) {
  in_flight_limit_ = s_.spec->workload.in_flight > 0 ? s_.spec->workload.in_flight : default_in_flight(strategy_);
  for (const ModelBinding& b : s_.bindings) {
    bytes_at_split_.emplace_back();
    for (int k = 0; k <= num_stages_; ++k) bytes_at_split_.back().push_back(b.model->bytes_at_split(k));
  }
  strategy_text_ = strategy_.to_string();
  helper_ = s_.help != nullptr;
}

void DeviceActor::start() {
  // A 256 KiB stack (SimGrid's default is 8 MiB, `contexts/stack-size`): the event loop is shallow and
  // waits in SimGrid's simcalls, which run on maestro's stack. Each stack keeps its guard page, so an
  // overflow would stop the program rather than corrupt memory. Measured (bench/RESULTS.md "Scale"):
  // 10,000 devices, engine time 1.95 -> 1.24 s; peak RSS +3 KB per device.
  actor_ = sg4::Actor::init(s_.spec->id, s_.host)->set_stacksize(kDeviceStackBytes)->start([this] { event_loop(); });
  actor_->daemonize();
}

void DeviceActor::on_help_arrived() {
  // Runs the server part of the batch on this device, with this device's LUT for the origin model.
  helping_ = incoming_help_;
  SimRequest* first = helping_->batch.front();
  const int b = static_cast<int>(helping_->batch.size());
  const LutTable& lut = *s_.helper_luts.at({first->rec.device, first->binding});
  const double seconds = s_.time->sample_seconds(lut, first->device_split, lut.num_stages(), b, lut.has_distributions() ? service_rng_.next_unit() : 0.5);
  const double now = sg4::Engine::get_clock();
  for (SimRequest* r : helping_->batch) {
    r->rec.t_batch_start = now;
    r->rec.batch_size = b;
    r->rec.helper = s_.index;
  }
  help_exec_ = sg4::this_actor::exec_async(seconds * kFlopsPerSecond);
  help_get_ = s_.help->get_async<HelpTask>(&incoming_help_);
}

void DeviceActor::on_help_done() {
  const double now = sg4::Engine::get_clock();
  help_exec_ = nullptr;
  for (SimRequest* r : helping_->batch) {  // straight from the helper to the origin device
    r->rec.t_batch_end = now;
    (*s_.peer_results)[r->rec.device]->put_init(r, static_cast<std::uint64_t>(std::llround(r->rec.bytes_down)))->detach();
  }
  HelpTask* done = helping_;
  helping_ = nullptr;
  done->done();
}

void DeviceActor::cancel_activities() {
  // Cancelled by their owner, before the engine ends: SimGrid aborts when it kills an actor that waits
  // on a pending execution, and a transfer freed unfinished keeps the engine running to its end.
  for (const auto& a : std::vector<sg4::ActivityPtr>{exec_, upload_, help_exec_, result_get_, control_get_, help_get_})
    if (a) a->cancel();
  exec_ = help_exec_ = nullptr;
  upload_ = result_get_ = control_get_ = help_get_ = nullptr;
}

bool DeviceActor::accepting() const {
  const double now = sg4::Engine::get_clock();
  return now >= s_.spec->join_at_s && now < s_.spec->leave_at_s && now < s_.ledger->arrivals_end_s() && s_.ledger->may_create();
}

void DeviceActor::create_request() {
  SimRequest& r = s_.ledger->create(s_.index);
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

void DeviceActor::route(SimRequest* r) {
  r->rec.split = r->device_split;
  r->binding = binding_;
  const ModelBinding& b = s_.bindings[static_cast<size_t>(binding_)];
  const std::vector<double>& bytes = bytes_at_split_[static_cast<size_t>(binding_)];
  if (r->device_split < num_stages_) {
    // Wire bytes: the device's LUT knows what its middleware sends up; the server's, what it sends back.
    // (A draw only where a LUT has wire bytes: runs without them cost no random numbers.)
    const double u_up = b.lut->has_wire_bytes() ? wire_rng_.next_unit() : 0.5;
    const double u_down = b.server_lut && b.server_lut->has_wire_bytes() ? wire_rng_.next_unit() : 0.5;
    r->rec.bytes_up = request_wire_bytes(b.lut, r->device_split, bytes[r->device_split], u_up);
    r->rec.bytes_down = request_wire_bytes(b.server_lut, num_stages_, bytes[num_stages_], u_down);
    r->batch_group = b.batch_group[r->device_split];
  }
  (r->device_split > 0 ? exec_queue_ : up_queue_).push_back(r);
}

void DeviceActor::route_data_parallel() {
  while (!dp_pending_.empty() && dp_router_.any_free()) {
    const auto side = dp_router_.route_next(s_.bandwidth->bytes_per_s_at(sg4::Engine::get_clock()));
    const bool to_server = *side == DataParallelRouter::Side::server;
    SimRequest* r = dp_pending_.front();
    dp_pending_.pop_front();
    r->dp_to_server = to_server;
    r->device_split = to_server ? 0 : num_stages_;
    route(r);
  }
}

void DeviceActor::try_create_closed_loop() {
  if (!arrivals_.closed_loop()) return;
  while (accepting()) {
    ClosedLoopView v;
    v.num_stages = num_stages_;
    v.unfinished = unfinished_;
    v.in_flight_limit = in_flight_limit_;
    v.compute_idle = computing_ == nullptr && exec_queue_.empty();
    v.upload_idle = uploading_ == nullptr && up_queue_.empty();
    v.dp_input_waiting = !dp_pending_.empty();
    v.dp_side_free = dp_router_.any_free();
    if (!ArrivalProcess::admits(strategy_, v)) return;
    create_request();
  }
}

void DeviceActor::start_idle_stages() {
  if (computing_ == nullptr && !exec_queue_.empty()) {
    computing_ = exec_queue_.front();
    exec_queue_.pop_front();
    computing_->rec.t_device_start = sg4::Engine::get_clock();
    // The device's stages, then (when the request goes on to the server) compressing what it sends.
    const LutTable& lut = *binding_of(computing_).lut;  // the model it was created with
    double seconds = s_.time->sample_seconds(lut, 0, computing_->device_split, 1, lut.has_distributions() ? service_rng_.next_unit() : 0.5);
    if (computing_->device_split < num_stages_) seconds += lut.wire_compress_seconds(computing_->device_split);
    exec_ = sg4::this_actor::exec_async(seconds * kFlopsPerSecond);
  }
  if (uploading_ == nullptr && !up_queue_.empty()) {
    uploading_ = up_queue_.front();
    up_queue_.pop_front();
    upload_ = sg4::Comm::sendto_async(s_.host, s_.server_host, std::llround(uploading_->rec.bytes_up));
  }
}

void DeviceActor::on_computed() {
  SimRequest* r = computing_;
  computing_ = nullptr;
  exec_ = nullptr;
  r->rec.t_device_end = sg4::Engine::get_clock();
  if (r->device_split >= num_stages_) {
    r->rec.t_result = r->rec.t_device_end;
    if (r->data_parallel) dp_router_.release(DataParallelRouter::Side::device);
    on_finished(r);
  } else {
    up_queue_.push_back(r);
  }
}

void DeviceActor::on_uploaded() {
  // Arrived: the server's dispatcher takes it now (uploads in the order their transfers complete).
  SimRequest* r = uploading_;
  uploading_ = nullptr;
  upload_ = nullptr;
  r->rec.t_uplink_end = sg4::Engine::get_clock();
  bytes_sent_ += r->rec.bytes_up;
  count_radio(r->rec.bytes_up);
  s_.uploads->queue.push_back(r);
  s_.uploads->arrived->release();
}

void DeviceActor::on_result() {
  SimRequest* r = arriving_;
  r->rec.t_result = sg4::Engine::get_clock();
  bytes_received_ += r->rec.bytes_down;
  count_radio(r->rec.bytes_down);
  if (r->dp_to_server) dp_router_.release(DataParallelRouter::Side::server);
  on_finished(r);
  result_get_ = s_.results->get_async<SimRequest>(&arriving_);
}

void DeviceActor::use_binding(int b) {
  if (b == binding_) return;
  binding_ = b;
  const ModelBinding& x = s_.bindings[static_cast<size_t>(b)];
  dp_router_.set_costs(data_parallel_costs(*s_.spec, s_.access_point, *x.model, x.lut, x.server_lut, *s_.time));
}

void DeviceActor::apply_strategy(const Strategy& s) {
  // The model variant the strategy names (a scheduler chooses among the bindings the simulation made
  // from the device's variant choices; anything else keeps the current one).
  const std::string run_model = model_under(s_.spec->model, s);
  for (size_t b = 0; b < s_.bindings.size(); ++b)
    if (s_.bindings[b].run_model == run_model) use_binding(static_cast<int>(b));
  strategy_ = s;
  strategy_text_ = s.to_string();
  if (s_.spec->workload.in_flight <= 0) in_flight_limit_ = default_in_flight(s);
}

void DeviceActor::on_control() {
  apply_strategy(*incoming_strategy_);
  control_get_ = s_.control->get_async<Strategy>(&incoming_strategy_);
}

void DeviceActor::count_radio(double bytes) {
  const double now = sg4::Engine::get_clock();
  if (now >= s_.warmup_s && now <= s_.duration_s) radio_bytes_window_ += bytes;
}

void DeviceActor::on_finished(SimRequest* r) {
  --unfinished_;
  ++completed_;
  latency_sum_s_ += r->rec.latency_s();
  s_.ledger->finish(*r);
}

void DeviceActor::event_loop() {
  const double hard_end = s_.ledger->hard_end_s();
  result_get_ = s_.results->get_async<SimRequest>(&arriving_);
  control_get_ = s_.control->get_async<Strategy>(&incoming_strategy_);
  if (helper_) help_get_ = s_.help->get_async<HelpTask>(&incoming_help_);
  // The drain's end stops the loop: whatever is still running or waiting is cancelled here and its
  // requests are recorded failed by the controller.
  sg4::this_actor::sleep_until(std::min(s_.spec->join_at_s, hard_end));
  next_arrival_s_ = arrivals_.next();
  std::vector<sg4::ActivityPtr> waiting;
  while (true) {
    if (sg4::Engine::get_clock() >= hard_end) {
      cancel_activities();
      return;
    }
    while (next_arrival_s_ <= sg4::Engine::get_clock()) {
      if (!s_.ledger->may_create()) {
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
    const double wake_s = std::min(next_arrival_s_, hard_end);
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

}  // namespace coinfer::sim
