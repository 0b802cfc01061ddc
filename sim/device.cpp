#include "sim/device.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/wire_bytes.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
}

SimDevice::SimDevice(DeviceSlice slice)
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
  for (int i = 0; i < kSlots; ++i) hooks_[i] = CompletionHook{this, i};
}

void SimDevice::stop() {
  stopped_ = true;
  arrival_timer_.cancel();
  if (compute_done_.pending()) count_busy(busy_since_s_, sg4::Engine::get_clock());
  compute_done_.cancel();
  // Cancelled here, before the engine ends (a transfer left unfinished would keep the engine running to
  // its end); SimGrid reports them cancelled, which no hook acts on. Kept until the device is destroyed.
  for (sg4::ActivityPtr a : std::vector<sg4::ActivityPtr>{upload_, inbound_[0].comm, inbound_[1].comm, inbound_[2].comm})
    if (a) {
      a->cancel();
      cancelled_.push_back(a);
    }
  upload_ = nullptr;
  for (Inbound& in : inbound_) {
    in.comm = nullptr;
    in.waiting.clear();
  }
}

void SimDevice::join() {
  if (stopped_) return;
  live_ = true;
  next_arrival_s_ = arrivals_.next();
  step();
  take_arrived();
}

void SimDevice::start_compute(double seconds, int slot) {
  busy_since_s_ = sg4::Engine::get_clock();
  compute_done_.set(busy_since_s_ + seconds, [this, slot] {
    count_busy(busy_since_s_, sg4::Engine::get_clock());
    on_activity_done(slot);
  });
}

void SimDevice::count_busy(double from_s, double to_s) {
  const double a = std::max(from_s, s_.warmup_s), b = std::min(to_s, s_.duration_s);
  if (b > a) busy_window_s_ += b - a;
}

// ---- what others send it (DeviceInbox): from an actor or from kernel context ----

void SimDevice::send_result(SimRequest* r, sg4::Host* from) {
  in_kernel([&] { send(kResultIn, from, r->rec.bytes_down, r); });
}

void SimDevice::send_control(const Strategy* st, sg4::Host* from, double bytes) {
  in_kernel([&] { send(kControlIn, from, bytes, const_cast<Strategy*>(st)); });
}

void SimDevice::send_help(HelpTask* t, sg4::Host* from, double bytes) {
  in_kernel([&] { send(kHelpIn, from, bytes, t); });
}

void SimDevice::send(int slot, sg4::Host* from, double bytes, void* payload) {
  if (stopped_) return;
  inbound_[slot - kResultIn].waiting.push_back(Inbound::Item{from, static_cast<std::uint64_t>(std::llround(bytes)), payload});
  start_inbound(slot);
}

void SimDevice::start_inbound(int slot) {
  Inbound& in = inbound_[slot - kResultIn];
  if (stopped_ || in.comm || in.arrived || in.waiting.empty()) return;
  const Inbound::Item item = in.waiting.front();
  in.waiting.pop_front();
  in.payload = item.payload;
  in.comm = sg4::Comm::sendto_init(item.from, s_.host);
  in.comm->set_payload_size(item.bytes);
  in.comm->set_data(&hooks_[slot]);
  in.comm->start();
}

void SimDevice::take_arrived() {
  // In the order the device's event loop used to look at them: results, scheduling messages, help (one
  // forwarded batch at a time: a batch that arrived while it computes another waits for it).
  if (!live_ || stopped_) return;
  if (Inbound& in = inbound_[kResultIn - kResultIn]; in.arrived) {
    in.arrived = false;
    on_result(static_cast<SimRequest*>(in.payload));
    start_inbound(kResultIn);
    step();
  }
  if (Inbound& in = inbound_[kControlIn - kResultIn]; in.arrived) {
    in.arrived = false;
    on_control(*static_cast<const Strategy*>(in.payload));
    start_inbound(kControlIn);
    step();
  }
  if (Inbound& in = inbound_[kHelpIn - kResultIn]; in.arrived && helping_ == nullptr) {
    in.arrived = false;
    on_help_arrived(static_cast<HelpTask*>(in.payload));
    start_inbound(kHelpIn);
    step();
  }
}

void SimDevice::on_activity_done(int slot) {
  if (stopped_) return;
  switch (slot) {
    case kExec:
      on_computed();
      break;
    case kUpload:
      finished(upload_);
      on_uploaded();
      break;
    case kHelpExec:
      on_help_done();
      break;
    default: {
      Inbound& in = inbound_[slot - kResultIn];
      finished(in.comm);
      in.arrived = true;
      take_arrived();
      return;
    }
  }
  if (!live_) return;
  step();
  take_arrived();
}

void SimDevice::step() {
  // What the device's event loop did after every wake-up: arrivals due now, data_parallel routing,
  // closed-loop admission, idle stages; then the timer for the next arrival (none past the drain's end,
  // where stop() ends everything).
  if (!live_ || stopped_) return;
  const double now = sg4::Engine::get_clock();
  while (next_arrival_s_ <= now) {
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
  if (next_arrival_s_ < s_.ledger->hard_end_s() && !(arrival_timer_.pending() && arrival_timer_at_s_ == next_arrival_s_)) {
    arrival_timer_at_s_ = next_arrival_s_;
    arrival_timer_.set(next_arrival_s_, [this] {
      step();
      take_arrived();
    });
  }
}

void SimDevice::on_help_arrived(HelpTask* task) {
  // Runs the server part of the batch on this device, with this device's LUT for the origin model.
  helping_ = task;
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
  start_compute(seconds, kHelpExec);
}

void SimDevice::on_help_done() {
  const double now = sg4::Engine::get_clock();
  for (SimRequest* r : helping_->batch) {  // straight from the helper to the origin device
    r->rec.t_batch_end = now;
    (*s_.peers)[static_cast<size_t>(r->rec.device)]->send_result(r, s_.host);
  }
  HelpTask* done = helping_;
  helping_ = nullptr;
  done->done();
}

bool SimDevice::accepting() const {
  const double now = sg4::Engine::get_clock();
  return now >= s_.spec->join_at_s && now < s_.spec->leave_at_s && now < s_.ledger->arrivals_end_s() && s_.ledger->may_create();
}

void SimDevice::create_request() {
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

void SimDevice::route(SimRequest* r) {
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

void SimDevice::route_data_parallel() {
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

void SimDevice::try_create_closed_loop() {
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

void SimDevice::start_idle_stages() {
  if (computing_ == nullptr && !exec_queue_.empty()) {
    computing_ = exec_queue_.front();
    exec_queue_.pop_front();
    computing_->rec.t_device_start = sg4::Engine::get_clock();
    // The device's stages, then (when the request goes on to the server) compressing what it sends.
    const LutTable& lut = *binding_of(computing_).lut;  // the model it was created with
    double seconds = s_.time->sample_seconds(lut, 0, computing_->device_split, 1, lut.has_distributions() ? service_rng_.next_unit() : 0.5);
    if (computing_->device_split < num_stages_) seconds += lut.wire_compress_seconds(computing_->device_split);
    start_compute(seconds, kExec);
  }
  if (uploading_ == nullptr && !up_queue_.empty()) {
    uploading_ = up_queue_.front();
    up_queue_.pop_front();
    upload_ = sg4::Comm::sendto_init(s_.host, s_.server_host);
    upload_->set_payload_size(static_cast<std::uint64_t>(std::llround(uploading_->rec.bytes_up)));
    upload_->set_data(&hooks_[kUpload]);
    upload_->start();
  }
}

void SimDevice::on_computed() {
  SimRequest* r = computing_;
  computing_ = nullptr;
  r->rec.t_device_end = sg4::Engine::get_clock();
  if (r->device_split >= num_stages_) {
    r->rec.t_result = r->rec.t_device_end;
    if (r->data_parallel) dp_router_.release(DataParallelRouter::Side::device);
    on_finished(r);
  } else {
    up_queue_.push_back(r);
  }
}

void SimDevice::on_uploaded() {
  // Arrived: the server's dispatcher takes it now (uploads in the order their transfers complete).
  SimRequest* r = uploading_;
  uploading_ = nullptr;
  r->rec.t_uplink_end = sg4::Engine::get_clock();
  bytes_sent_ += r->rec.bytes_up;
  count_radio(r->rec.bytes_up);
  s_.uploads->queue.push_back(r);
  s_.uploads->arrived->release();
}

void SimDevice::on_result(SimRequest* r) {
  r->rec.t_result = sg4::Engine::get_clock();
  bytes_received_ += r->rec.bytes_down;
  count_radio(r->rec.bytes_down);
  if (r->dp_to_server) dp_router_.release(DataParallelRouter::Side::server);
  on_finished(r);
}

void SimDevice::use_binding(int b) {
  if (b == binding_) return;
  binding_ = b;
  const ModelBinding& x = s_.bindings[static_cast<size_t>(b)];
  dp_router_.set_costs(data_parallel_costs(*s_.spec, s_.access_point, *x.model, x.lut, x.server_lut, *s_.time));
}

void SimDevice::apply_strategy(const Strategy& s) {
  // The model variant the strategy names (a scheduler chooses among the bindings the simulation made
  // from the device's variant choices; anything else keeps the current one).
  const std::string run_model = model_under(s_.spec->model, s);
  for (size_t b = 0; b < s_.bindings.size(); ++b)
    if (s_.bindings[b].run_model == run_model) use_binding(static_cast<int>(b));
  strategy_ = s;
  strategy_text_ = s.to_string();
  if (s_.spec->workload.in_flight <= 0) in_flight_limit_ = default_in_flight(s);
}

void SimDevice::on_control(const Strategy& s) { apply_strategy(s); }

void SimDevice::count_radio(double bytes) {
  const double now = sg4::Engine::get_clock();
  if (now >= s_.warmup_s && now <= s_.duration_s) radio_bytes_window_ += bytes;
}

void SimDevice::on_finished(SimRequest* r) {
  --unfinished_;
  ++completed_;
  latency_sum_s_ += r->rec.latency_s();
  s_.ledger->finish(*r);
}

}  // namespace coinfer::sim
