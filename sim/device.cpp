#include "sim/device.hpp"

#include <algorithm>
#include <cmath>

#include "core/time_window.hpp"
#include "core/wire_bytes.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

SimDevice::SimDevice(DeviceSlice slice)
    : s_(std::move(slice)),
      num_stages_(s_.bindings->at(0).model->num_stages()),
      service_rng_(s_.seed, StreamPurpose::service_time, static_cast<std::uint64_t>(s_.index)),
      wire_rng_(s_.seed, StreamPurpose::wire_bytes, static_cast<std::uint64_t>(s_.index)),
      loop_(*s_.spec, s_.index, s_.server_index, s_.seed, num_stages_, s_.ledger->arrivals_end_s(),
            data_parallel_costs(*s_.spec, s_.access_point, *(*s_.bindings)[0].model, (*s_.bindings)[0].lut,
                                s_.server_tables->table(s_.server_index, s_.index, 0), *s_.time),
            *this) {
  if (s_.spec->power.radio.stated()) radio_ = std::make_unique<RadioEnergyMeter>(s_.spec->power.radio, s_.warmup_s, s_.duration_s);
  proc_ = std::vector<ProcessorRun>(static_cast<size_t>(std::max(1, s_.spec->hardware ? s_.spec->hardware->size() : 1)));
  proc_busy_window_s_.assign(proc_.size(), 0.0);
  for (int i = 0; i < kSlots; ++i) hooks_[i] = CompletionHook{this, i};
}

void SimDevice::stop() {
  stopped_ = true;
  loop_.stop();
  arrival_timer_.cancel();
  const double now = sg4::Engine::get_clock();
  for (size_t i = 0; i < proc_.size(); ++i)
    if (proc_[i].busy) {  // a split segment's second processor included
      count_busy(proc_[i].since_s, now, proc_busy_window_s_[i]);
      proc_[i].busy = proc_[i].help = false;
      proc_[i].id = -1;
    }
  if (busy_processors_ > 0) count_busy(busy_since_s_, now, busy_window_s_);
  busy_processors_ = 0;
  for (ProcessorRun& p : proc_) p.done.cancel();
  handover_timer_.cancel();
  upload_resend_.cancel();
  result_resend_.cancel();
  // Cancelled here, before the engine ends (a transfer left unfinished would keep the engine running to
  // its end); SimGrid reports them cancelled, which no hook acts on. Kept until the device is destroyed.
  for (DeviceTransfer* t : {&upload_, &results_.transfer, &control_.transfer, &help_.transfer}) t->cancel(cancelled_);
  if (radio_) radio_->cut_transfers(now);
  results_.waiting.clear();
  control_.waiting.clear();
  help_.waiting.clear();
}

void SimDevice::join() {
  if (stopped_) return;
  live_ = true;
  loop_.on_join(sg4::Engine::get_clock());
  arm_handover();
  step();
  take_arrived();
}

// ---- handovers (core/mobility.hpp "mid_transfer") ----

void SimDevice::arm_handover() {
  if (s_.mid_transfer == MobilitySpec::MidTransfer::wait) return;  // transfers wait through handovers: the link schedule does it
  const double now = sg4::Engine::get_clock();
  while (next_handover_ < s_.handovers.size() && s_.handovers[next_handover_].at_s < now) ++next_handover_;  // before it joined
  if (next_handover_ < s_.handovers.size()) handover_timer_.set(s_.handovers[next_handover_].at_s, [this] { on_handover(); });
}

void SimDevice::on_handover() {
  if (stopped_) return;
  const DeviceHandover& h = s_.handovers[next_handover_++];
  arm_handover();
  // A transfer already held for a resend starts when this later handover ends (it sends nothing meanwhile).
  if (upload_resend_.pending()) upload_resend_.set(h.ends_s, [this] { transfer_upload(); });
  if (result_resend_.pending())
    result_resend_.set(h.ends_s, [this] {
      results_.held = false;
      transfer_inbound(results_);
    });
  const bool up = upload_caught(h);
  const bool down = result_caught(h);
  if (!live_ || !(up || down)) return;
  step();
  take_arrived();
}

bool SimDevice::upload_caught(const DeviceHandover& h) {
  if (!upload_) return false;
  const double now = sg4::Engine::get_clock();
  // The bytes that left before the handover were sent for nothing: the radio spent them.
  const double sent = std::max(0.0, uploading_->rec.bytes_up - upload_.remaining());
  upload_.cancel(cancelled_);
  bytes_sent_ += sent;
  count_radio(sent);
  if (radio_) radio_->transfer_ended(upload_started_s_, now, sent, true);
  if (s_.mid_transfer == MobilitySpec::MidTransfer::resend) {
    ++uploading_->rec.resends;
    upload_resend_.set(h.ends_s, [this] { transfer_upload(); });
    return false;  // still on the uplink: nothing else to do now
  }
  SimRequest* r = uploading_;
  uploading_ = nullptr;
  upload_server_ = -1;
  loop_.on_uploaded(r->rec.id, now, false, handover_failure(h, true));
  return true;
}

bool SimDevice::result_caught(const DeviceHandover& h) {
  if (!results_.transfer || results_.payload->finished) return false;  // nothing on the link, or for a request already over
  const double now = sg4::Engine::get_clock();
  const double got = std::max(0.0, static_cast<double>(results_.bytes) - results_.transfer.remaining());
  results_.transfer.cancel(cancelled_);
  bytes_received_ += got;
  count_radio(got);
  if (radio_) radio_->transfer_ended(results_.started_s, now, got, false);
  if (s_.mid_transfer == MobilitySpec::MidTransfer::resend) {
    ++results_.payload->rec.resends;
    results_.held = true;  // the next result waits behind it
    result_resend_.set(h.ends_s, [this] {
      results_.held = false;
      transfer_inbound(results_);
    });
    return false;
  }
  loop_.on_result(*results_.payload, now, false, handover_failure(h, false));
  start_inbound(results_);
  return true;
}

void SimDevice::start_processor(int proc, int with, double seconds) {
  const double now = sg4::Engine::get_clock();
  if (busy_processors_ == 0) busy_since_s_ = now;
  for (int p : {proc, with}) {
    if (p < 0) continue;
    ++busy_processors_;
    proc_[static_cast<size_t>(p)].since_s = now;
    proc_[static_cast<size_t>(p)].busy = true;
  }
  ProcessorRun& run = proc_[static_cast<size_t>(proc)];
  run.with = with;
  run.done.set(now + seconds, [this, proc] { on_processor_done(proc); });
}

void SimDevice::count_busy(double from_s, double to_s, double& into) { into += overlap_seconds(from_s, to_s, s_.warmup_s, s_.duration_s); }

void SimDevice::on_processor_done(int proc) {
  if (stopped_) return;
  const double now = sg4::Engine::get_clock();
  ProcessorRun& run = proc_[static_cast<size_t>(proc)];
  for (int p : {proc, run.with}) {
    if (p < 0) continue;
    count_busy(proc_[static_cast<size_t>(p)].since_s, now, proc_busy_window_s_[static_cast<size_t>(p)]);
    proc_[static_cast<size_t>(p)].busy = false;
    if (--busy_processors_ == 0) count_busy(busy_since_s_, now, busy_window_s_);
  }
  if (run.help) {
    run.help = false;
    on_help_done();
  } else {
    const std::int64_t id = run.id;
    const std::string why = std::move(run.why);
    run.id = -1;
    run.why.clear();
    if (why.empty())
      loop_.on_computed(id, now);
    else
      loop_.on_computed(id, now, false, why);
  }
  if (!live_) return;
  step();
  take_arrived();
}

void SimDevice::server_status_changed(int server) {
  in_kernel([&] {
    if (stopped_) return;
    const ServerStatus& st = (*s_.server_status)[static_cast<size_t>(server)];
    bool touched = server == loop_.server() || upload_server_ == server;
    if (server == loop_.server()) loop_.set_server_available(st.up, st.why_down);
    if (!st.up) {
      const double now = sg4::Engine::get_clock();
      for (DeviceRequest* r : loop_.unfinished_requests(true))
        if ((r->rec.cloud >= 0 ? r->rec.cloud : r->rec.server) == server) {  // who holds it (its cloud once passed on)
          loop_.on_result(*r, now, false, st.why_failed);
          touched = true;
        }
    }
    // A device with nothing at that server carries on untouched (its events keep their order).
    if (!live_ || !touched) return;
    step();
    take_arrived();
  });
}

// ---- what others send it (DeviceInbox): from an actor or from kernel context ----

void SimDevice::send_result(SimRequest* r, Endpoint from) {
  in_kernel([&] { send(results_, from, r->rec.bytes_down, r); });
}

void SimDevice::send_dropped(SimRequest* r, Endpoint from, std::string why) {
  drop_reasons_.emplace_back(r->rec.id, std::move(why));
  send_result(r, from);
}

void SimDevice::send_control(const ControlMessage* m, Endpoint from, double bytes) {
  in_kernel([&] { send(control_, from, bytes, m); });
}

void SimDevice::send_help(HelpTask* t, Endpoint from, double bytes) {
  in_kernel([&] { send(help_, from, bytes, t); });
}

void SimDevice::fail_request(SimRequest* r, const std::string& why) {
  in_kernel([&] {
    if (stopped_ || r->finished) return;
    loop_.on_result(*r, sg4::Engine::get_clock(), false, why);
    if (!live_) return;
    step();
    take_arrived();
  });
}

template <class Payload>
void SimDevice::send(Inbound<Payload>& in, Endpoint from, double bytes, Payload payload) {
  if (stopped_) return;
  in.waiting.push_back(typename Inbound<Payload>::Item{from, static_cast<std::uint64_t>(std::llround(bytes)), payload});
  start_inbound(in);
}

template <class Payload>
void SimDevice::start_inbound(Inbound<Payload>& in) {
  if (stopped_ || in.transfer || in.held || in.arrived || in.waiting.empty()) return;
  const typename Inbound<Payload>::Item item = in.waiting.front();
  in.waiting.pop_front();
  in.from = item.from;
  in.payload = item.payload;
  in.bytes = item.bytes;
  transfer_inbound(in);
}

template <class Payload>
void SimDevice::transfer_inbound(Inbound<Payload>& in) {
  if (stopped_) return;
  in.started_s = sg4::Engine::get_clock();
  if (in.slot == kResultIn && radio_) radio_->transfer_started(in.started_s);
  in.transfer.start(s_.transfers, *s_.platform, in.from, Endpoint{false, s_.index}, in.bytes, &hooks_[in.slot]);
}

template <class Payload>
void SimDevice::arrived(Inbound<Payload>& in) {
  in.transfer.completed(*s_.retirement);
  if (in.slot == kResultIn && radio_) radio_->transfer_ended(in.started_s, sg4::Engine::get_clock(), static_cast<double>(in.bytes), false);
  in.arrived = true;
  take_arrived();
}

void SimDevice::take_arrived() {
  // In this order: results, scheduling messages, help (one
  // forwarded batch at a time: a batch that arrived while it computes another waits for it).
  if (!live_ || stopped_) return;
  if (results_.arrived) {
    results_.arrived = false;
    on_result(results_.payload);
    start_inbound(results_);
    step();
  }
  if (control_.arrived) {
    control_.arrived = false;
    apply_control(*control_.payload);
    start_inbound(control_);
    step();
  }
  if (help_.arrived && helping_ == nullptr && help_arrived_ == nullptr) {
    help_.arrived = false;
    on_help_arrived(help_.payload);
    start_inbound(help_);
    step();
  }
}

void SimDevice::on_activity_done(int slot) {
  if (stopped_) return;
  switch (slot) {
    case kUpload:
      upload_.completed(*s_.retirement);
      on_uploaded();
      break;
    case kResultIn:
      return arrived(results_);
    case kControlIn:
      return arrived(control_);
    case kHelpIn:
      return arrived(help_);
  }
  if (!live_) return;
  step();
  take_arrived();
}

void SimDevice::step() {
  // The loop's wake (arrivals due now, data_parallel routing, closed-loop admission, idle stages); then
  // the timer for its next arrival (none past the drain's end, where stop() ends everything).
  if (!live_ || stopped_) return;
  const double now = sg4::Engine::get_clock();
  loop_.wake(now);
  const double next = loop_.next_arrival_s();
  if (next < s_.ledger->hard_end_s() && !(arrival_timer_.pending() && arrival_timer_at_s_ == next)) {
    arrival_timer_at_s_ = next;
    arrival_timer_.set(next, [this] {
      step();
      take_arrived();
    });
  }
}

void SimDevice::on_help_arrived(HelpTask* task) {
  help_arrived_ = task;
  loop_.on_help_arrived(help_tasks_++);  // one at a time: the task is help_arrived_
}

void SimDevice::start_help(std::int64_t) {
  // Runs the server part of the batch on this device, with this device's LUT for the origin model.
  helping_ = help_arrived_;
  help_arrived_ = nullptr;
  SimRequest* first = helping_->batch.front();
  const int b = static_cast<int>(helping_->batch.size());
  const LutTable& lut = *s_.helper_luts.at({first->rec.device, first->binding});
  double seconds = s_.time->sample_seconds(lut, first->device_split, lut.num_stages(), b, lut.has_distributions() ? service_rng_.next_unit() : 0.5);
  const double now = sg4::Engine::get_clock();
  if (!s_.load.empty()) seconds *= load_slowdown(s_.load.share_at(now, loop_.hardware().processors[0]));
  for (SimRequest* r : helping_->batch) {
    r->rec.t_batch_start = now;
    r->rec.batch_size = b;
    r->rec.helper = s_.index;
  }
  proc_[0].help = true;
  start_processor(0, -1, seconds);
}

void SimDevice::on_help_done() {
  const double now = sg4::Engine::get_clock();
  for (SimRequest* r : helping_->batch) {  // straight from the helper to the origin device
    r->rec.t_batch_end = now;
    (*s_.peers)[static_cast<size_t>(r->rec.device)]->send_result(r, Endpoint{false, s_.index});
  }
  HelpTask* done = helping_;
  helping_ = nullptr;
  loop_.on_help_done();
  done->done();
}

DeviceRequest& SimDevice::new_request(double) { return s_.ledger->create(s_.index); }

void SimDevice::routed(DeviceRequest& dr) {
  SimRequest& r = static_cast<SimRequest&>(dr);
  r.binding = binding_;
  if (r.device_split >= num_stages_) return;
  const ModelBinding& b = bindings()[static_cast<size_t>(binding_)];
  const std::vector<double>& bytes = b.bytes_at_split;
  // Wire bytes: the device's LUT knows what its middleware sends up; the server's, what it sends back.
  // (A draw only where a LUT has wire bytes: runs without them cost no random numbers.)
  const double u_up = b.lut->has_wire_bytes() ? wire_rng_.next_unit() : 0.5;
  const LutTable* srv = server_lut(binding_);
  const double u_down = srv && srv->has_wire_bytes() ? wire_rng_.next_unit() : 0.5;
  r.rec.bytes_up = request_wire_bytes(b.lut, r.device_split, bytes[r.device_split], u_up);
  r.rec.bytes_down = request_wire_bytes(srv, num_stages_, bytes[num_stages_], u_down);
  r.batch_group = b.batch_group[r.device_split];
  if (r.cloud_split > 0) {
    // pp(k,m) (core/cloud_handoff.hpp): the edge batches [k,m) with others of the same range, the cloud
    // [m,n) with any [m,n).
    const ModelKey key{b.run_model, s_.spec->dataset};
    r.whole_group = r.batch_group;
    r.rec.bytes_to_cloud = bytes[static_cast<size_t>(r.cloud_split)];
    r.batch_group = s_.groups->id(edge_batch_group(key, r.device_split, r.cloud_split));
    r.cloud_group = s_.groups->id(cloud_batch_group(key, r.cloud_split));
  }
}

void SimDevice::start_compute(DeviceRequest& dr) {
  const SimRequest& r = static_cast<const SimRequest&>(dr);
  const DeviceSegment& seg = r.plan->segments[static_cast<size_t>(r.segment)];
  std::string why;
  double seconds = segment_seconds(r, why);
  // Background load (core/background_load.hpp): the share taken on the segment's processor when it starts.
  if (!s_.load.empty())
    seconds *= load_slowdown(s_.load.share_at(sg4::Engine::get_clock(), loop_.hardware().processors[static_cast<size_t>(seg.proc)]));
  ProcessorRun& run = proc_[static_cast<size_t>(seg.proc)];
  run.id = r.rec.id;
  run.why = why;
  start_processor(seg.proc, why.empty() ? seg.with : -1, seconds);
}

double SimDevice::segment_seconds(const SimRequest& r, std::string& why) {
  // core/device_plan.hpp's formula on the tables of the model the request was created with; one
  // uniform draw per segment where a table it uses has distributions.
  const ModelBinding& b = binding_of(&r);
  const DeviceSegment& seg = r.plan->segments[static_cast<size_t>(r.segment)];
  const DeviceHardware& hw = loop_.hardware();
  bool sampled = false;
  for (const int p : {seg.proc, seg.with}) {
    if (p < 0) continue;
    const LutTable* t = static_cast<size_t>(p) < b.processor_luts.size() ? b.processor_luts[static_cast<size_t>(p)] : nullptr;
    if (t == nullptr) {
      why = "no LUT for " + s_.spec->type + ":" + hw.processors[static_cast<size_t>(p)] + "/" + b.run_model + "/" + s_.spec->dataset +
            " (a placement on a processor whose table the scenario's luts lack)";
      return 0;
    }
    sampled = sampled || t->has_distributions();
  }
  const double u = sampled ? service_rng_.next_unit() : 0.5;
  return coinfer::segment_seconds(*r.plan, static_cast<size_t>(r.segment), r.device_split, *b.model, hw, b.processor_luts, *s_.time, u);
}

double SimDevice::tensor_bytes(const DeviceRequest& r, int k) {
  return binding_of(&static_cast<const SimRequest&>(r)).bytes_at_split[static_cast<size_t>(k)];
}

double SimDevice::weight_bytes(const DeviceRequest& r, int b, int e) {
  const std::vector<double>& w = binding_of(&static_cast<const SimRequest&>(r)).weight_prefix;
  return w[static_cast<size_t>(e)] - w[static_cast<size_t>(b)];
}

double SimDevice::working_bytes(const DeviceRequest& r, int b, int e) {
  const std::vector<double>& w = binding_of(&static_cast<const SimRequest&>(r)).stage_working;
  double m = 0;
  for (int k = b; k < e; ++k) m = std::max(m, w[static_cast<size_t>(k)]);
  return m;
}

void SimDevice::start_upload(DeviceRequest& dr) {
  uploading_ = static_cast<SimRequest*>(&dr);
  uploading_->left_device = true;
  // To the server it was routed to (rec.server: the device's server when its upload became due).
  upload_server_ = uploading_->rec.server;
  upload_failures_ = (*s_.server_status)[static_cast<size_t>(upload_server_)].failures;
  transfer_upload();
}

void SimDevice::transfer_upload() {
  if (stopped_) return;
  upload_started_s_ = sg4::Engine::get_clock();
  if (radio_) radio_->transfer_started(upload_started_s_);
  upload_.start(s_.transfers, *s_.platform, Endpoint{false, s_.index}, Endpoint{true, upload_server_},
                static_cast<std::uint64_t>(std::llround(uploading_->rec.bytes_up)), &hooks_[kUpload]);
}

void SimDevice::finished(DeviceRequest& r) { s_.ledger->finish(static_cast<SimRequest&>(r)); }

void SimDevice::on_uploaded() {
  // Arrived: the server's dispatcher takes it now (uploads in the order their transfers complete).
  SimRequest* r = uploading_;
  uploading_ = nullptr;
  bytes_sent_ += r->rec.bytes_up;
  count_radio(r->rec.bytes_up);
  if (radio_) radio_->transfer_ended(upload_started_s_, sg4::Engine::get_clock(), r->rec.bytes_up, true);
  const int to = upload_server_;
  upload_server_ = -1;
  const ServerStatus& st = (*s_.server_status)[static_cast<size_t>(to)];
  if (upload_failures_ != st.failures) {  // its server failed while it was on the link: nobody received it
    loop_.on_uploaded(r->rec.id, sg4::Engine::get_clock(), false, st.why_failed);
    return;
  }
  loop_.on_uploaded(r->rec.id, sg4::Engine::get_clock());
  ArrivedUploads& at = (*s_.uploads)[static_cast<size_t>(to)];
  at.queue.push_back(r);
  at.arrived->release();
}

void SimDevice::on_result(SimRequest* r) {
  bytes_received_ += r->rec.bytes_down;
  count_radio(r->rec.bytes_down);
  if (r->dropped_at_server) {
    std::string why;
    for (auto it = drop_reasons_.begin(); it != drop_reasons_.end(); ++it)
      if (it->first == r->rec.id) {
        why = std::move(it->second);
        drop_reasons_.erase(it);
        break;
      }
    loop_.on_result(*r, sg4::Engine::get_clock(), false, why, true);
  } else
    loop_.on_result(*r, sg4::Engine::get_clock());
}

void SimDevice::use_binding(int b) {
  if (b == binding_) return;
  binding_ = b;
  const ModelBinding& x = bindings()[static_cast<size_t>(b)];
  loop_.set_data_parallel_costs(data_parallel_costs(*s_.spec, s_.access_point, *x.model, x.lut, server_lut(b), *s_.time));
}

void SimDevice::apply_control(const ControlMessage& m) {
  // Its server first (the scheme moved it: Scheme::servers), then the model variant the strategy names
  // (a scheduler chooses among the bindings the simulation made from the device's variant choices;
  // anything else keeps the current one).
  if (m.server >= 0 && m.server != loop_.server()) {
    const ServerStatus& st = (*s_.server_status)[static_cast<size_t>(m.server)];
    loop_.set_server(m.server, st.up, st.why_down);
    const ModelBinding& x = bindings()[static_cast<size_t>(binding_)];
    loop_.set_data_parallel_costs(data_parallel_costs(*s_.spec, s_.access_point, *x.model, x.lut, server_lut(binding_), *s_.time));
  }
  const std::string run_model = model_under(s_.spec->model, m.strategy);
  for (size_t b = 0; b < bindings().size(); ++b)
    if (bindings()[b].run_model == run_model) use_binding(static_cast<int>(b));
  loop_.on_strategy(m.strategy);
}

void SimDevice::count_radio(double bytes) {
  const double now = sg4::Engine::get_clock();
  if (now >= s_.warmup_s && now <= s_.duration_s) radio_bytes_window_ += bytes;
}

}  // namespace coinfer::sim
