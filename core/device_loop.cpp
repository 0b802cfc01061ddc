#include "core/device_loop.hpp"

#include "core/cloud_handoff.hpp"
#include "core/plan_memory.hpp"
#include "core/text_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace coinfer {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();

void erase_from(RingQueue<DeviceRequest*>& q, const DeviceRequest* r) { q.erase_value(const_cast<DeviceRequest*>(r)); }

DeviceLoop::TraceSink g_sink;  // conformance tests only
bool g_tracing = false;        // g_sink is set: one plain load per event when it is not
inline bool tracing() { return g_tracing; }
std::string num(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}
std::string num(std::int64_t x) { return std::to_string(x); }
const char* ok_text(bool ok) { return ok ? "ok" : "failed"; }
}  // namespace

void DeviceLoop::set_trace_sink(TraceSink sink) {
  g_sink = std::move(sink);
  g_tracing = static_cast<bool>(g_sink);
}

void DeviceLoop::trace(const std::string& line) const {
  if (g_tracing) g_sink(device_index_, line);
}

DeviceLoop::DeviceLoop(const DeviceSpec& device, int device_index, int server_index, std::uint64_t seed, int num_stages, double arrivals_end_s,
                       DataParallelCosts router_costs, DeviceActions& actions)
    : device_(device),
      act_(actions),
      device_index_(device_index),
      server_(server_index),
      num_stages_(num_stages),
      arrivals_end_s_(arrivals_end_s),
      arrivals_(device, seed, device_index, arrivals_end_s),
      router_(router_costs),
      strategy_(device.strategy),
      strategy_text_(device.strategy.to_string()),
      in_flight_limit_(device.workload.in_flight > 0 ? device.workload.in_flight : default_in_flight(device.strategy)),
      next_arrival_s_(kNever) {
  if (device.hardware) {
    hw_ = device.hardware;
  } else if (device.processor.empty()) {  // the common case without a profile: one shared description
    static const auto unnamed = std::make_shared<const DeviceHardware>(single_processor_hardware("", 0));
    hw_ = unnamed;
  } else {
    hw_ = std::make_shared<const DeviceHardware>(single_processor_hardware(device.processor, 0));
  }
  procs_.resize(static_cast<size_t>(std::max(1, hw_->size())));
  for (double c : hw_->pool_capacity_bytes) memory_limited_ = memory_limited_ || c > 0;
  pool_peak_.assign(hw_->pool_capacity_bytes.size(), 0.0);
  proc_peak_.assign(procs_.size(), 0.0);
  plan_ = plan_for(strategy_);
  local_plan_ = plan_for(Strategy::local());
  offload_plan_ = plan_for(Strategy::offload());
}

const DevicePlan* DeviceLoop::plan_for(const Strategy& s) {
  const int split = s.placed_stages(num_stages_);
  const std::string key = s.placement.to_string() + "/" + std::to_string(split);
  auto it = plans_.find(key);
  if (it != plans_.end()) return &it->second;
  return &plans_.emplace(key, make_device_plan(s, num_stages_, *hw_, device_.id)).first->second;
}

int DeviceLoop::queued() const {
  size_t n = up_queue_.size() + data_parallel_waiting_.size();
  for (size_t i = 0; i < procs_.size(); ++i)
    for (const DeviceRequest* r : procs_[i].queue)  // a split segment waits in two queues: counted once
      if (r->plan->segments.empty() || r->plan->segments[static_cast<size_t>(r->segment)].proc == static_cast<int>(i)) ++n;
  return static_cast<int>(n);
}

bool DeviceLoop::processor_busy() const {
  if (helping_) return true;
  for (const Processor& p : procs_)
    if (p.running != nullptr) return true;
  return false;
}

bool DeviceLoop::running(const DeviceRequest* r) const {
  for (const Processor& p : procs_)
    if (p.running == r) return true;
  return false;
}

void DeviceLoop::drop_from_processors(const DeviceRequest* r) {
  for (Processor& p : procs_) erase_from(p.queue, r);
}

void DeviceLoop::hold(DeviceRequest& r, DeviceRequest::Held what) {
  using Held = DeviceRequest::Held;
  const auto bytes = [this, &r] {
    if (r.held == Held::upload) return act_.tensor_bytes(r, r.device_split);
    return act_.tensor_bytes(r, r.plan->segments.empty() ? 0 : r.plan->segments[static_cast<size_t>(r.segment)].begin);
  };
  if (r.held != Held::none) held_total_ -= bytes();
  r.held = what;
  if (r.held != Held::none) held_total_ += bytes();
  if (held_total_ < 0) held_total_ = 0;  // rounding
}

void DeviceLoop::enqueue_segment(DeviceRequest& r) {
  const DeviceSegment& seg = r.plan->segments[static_cast<size_t>(r.segment)];
  procs_[static_cast<size_t>(seg.proc)].queue.push_back(&r);
  if (seg.with >= 0) procs_[static_cast<size_t>(seg.with)].queue.push_back(&r);
}

void DeviceLoop::on_join(double now_s) {
  if (tracing()) trace("join " + num(now_s));
  if (joined_ || stopped_) return;
  joined_ = true;
  next_arrival_s_ = arrivals_.next();
  while (next_arrival_s_ < now_s) next_arrival_s_ = arrivals_.next();  // due before the device could take them
}

void DeviceLoop::on_strategy(const Strategy& s) {
  if (tracing()) trace("strategy " + s.to_string());
  strategy_ = s;
  strategy_text_ = s.to_string();
  plan_ = plan_for(s);
  if (device_.workload.in_flight <= 0) in_flight_limit_ = default_in_flight(s);
}

bool DeviceLoop::accepting(double now_s) const {
  // A server that is down holds back the closed loop of a strategy that needs it (data_parallel keeps
  // the device side; local never needs it).
  const bool needs_down_server =
      !server_down_why_.empty() && strategy_.kind != Strategy::Kind::data_parallel && strategy_.device_split(num_stages_) < num_stages_;
  return joined_ && !stopped_ && !admission_paused_ && !needs_down_server && now_s >= device_.join_at_s && now_s < device_.leave_at_s &&
         now_s < arrivals_end_s_ && act_.may_create();
}

bool DeviceLoop::closed_loop_admits() const {
  ClosedLoopView v;
  v.num_stages = num_stages_;
  v.unfinished = unfinished();
  v.in_flight_limit = in_flight_limit_;
  // The processor(s) of the current plan's first segment free: a device pipelines across its processors.
  v.compute_idle = true;
  if (!plan_->invalid.empty())  // its requests fail at processor 0, one at a time
    v.compute_idle = procs_[0].running == nullptr && procs_[0].queue.empty();
  else if (!plan_->segments.empty())
    for (const int i : {plan_->segments[0].proc, plan_->segments[0].with})
      if (i >= 0)
        v.compute_idle = v.compute_idle && procs_[static_cast<size_t>(i)].running == nullptr && procs_[static_cast<size_t>(i)].queue.empty();
  v.upload_idle = uploading_ == nullptr && up_queue_.empty();
  v.data_parallel_input_waiting = !data_parallel_waiting_.empty();
  v.data_parallel_side_free = server_down_why_.empty() ? router_.any_free() : !router_.busy(DataParallelRouter::Side::device);
  return ArrivalProcess::admits(strategy_, v);
}

void DeviceLoop::set_admission_paused(bool paused) {
  if (paused != admission_paused_ && tracing()) trace(std::string("pause ") + (paused ? "1" : "0"));
  admission_paused_ = paused;
}

void DeviceLoop::set_server_available(bool up, const std::string& why) {
  if (tracing()) trace(std::string("server ") + (up ? "1" : "0") + (up ? "" : " " + why));
  server_down_why_ = up ? "" : why.empty() ? "its server is down" : why;
}

void DeviceLoop::set_server(int server_index, bool up, const std::string& why) {
  if (tracing()) trace("move " + std::to_string(server_index));
  set_server_available(up, why);
  if (server_index == server_) return;
  server_ = server_index;
  for (DeviceRequest* r : live_)
    if (r->where != Where::at_server && r != uploading_ && r->rec.server >= 0) r->rec.server = server_index;
}

void DeviceLoop::wake(double now_s) {
  if (tracing()) trace("wake " + num(now_s));
  if (!joined_ || stopped_) return;
  while (next_arrival_s_ <= now_s) {  // open loop: the arrivals due by now (ArrivalProcess keeps them in the window)
    if (!act_.may_create()) {
      next_arrival_s_ = kNever;
      break;
    }
    create(now_s);
    next_arrival_s_ = arrivals_.next();
  }
  route_data_parallel(now_s);
  // A request given up while its stages start (dropped past its deadline, failed at a server that is
  // down) frees its place in the closed loop now: admit again, or the device would wait for an event
  // that may never come (a lone pp request dropped before its upload stalled its device for the rest
  // of the run). Each repeat follows a give-up; a new request is never past its deadline, and none
  // that needs a down server is admitted, so this ends.
  for (;;) {
    if (arrivals_.closed_loop())
      while (accepting(now_s) && closed_loop_admits()) create(now_s);
    const long long given_up = given_up_;
    start_idle_stages(now_s);
    if (given_up_ == given_up) break;
  }
}

void DeviceLoop::create(double now_s) {
  DeviceRequest& r = act_.new_request(now_s);
  if (tracing()) trace("> new " + num(r.rec.id));
  r.rec.strategy = strategy_text_;
  r.where = Where::waiting;
  r.live_index = live_.size();
  live_.push_back(&r);
  act_.created(r);
  if (strategy_.kind == Strategy::Kind::data_parallel) {
    r.data_parallel = true;
    data_parallel_waiting_.push_back(&r);
    route_data_parallel(now_s);
    return;
  }
  r.device_split = strategy_.device_split(num_stages_);
  r.plan = plan_;
  route(r);
}

void DeviceLoop::route(DeviceRequest& r) {
  r.rec.split = r.device_split;
  if (r.device_split < num_stages_) r.rec.server = server_;
  r.cloud_split = cloud_split_of(strategy_, r.device_split, num_stages_);
  r.segment = 0;
  act_.routed(r);
  if (memory_limited_) hold(r, r.device_split > 0 || !r.plan->invalid.empty() ? DeviceRequest::Held::segment_input : DeviceRequest::Held::upload);
  if (!r.plan->invalid.empty())  // a placement this device cannot run: fails when processor 0 would take it
    procs_[0].queue.push_back(&r);
  else if (r.device_split > 0)
    enqueue_segment(r);
  else
    up_queue_.push_back(&r);
}

void DeviceLoop::route_data_parallel(double now_s) {
  while (!data_parallel_waiting_.empty() && router_.any_free()) {
    // Its server down: the device side only (an input waits while it is busy).
    if (!server_down_why_.empty() && router_.busy(DataParallelRouter::Side::device)) break;
    const bool to_server = server_down_why_.empty() ? *router_.route_next(act_.link_bytes_per_s(now_s)) == DataParallelRouter::Side::server
                                                    : (router_.take(DataParallelRouter::Side::device), false);
    DeviceRequest* r = data_parallel_waiting_.front();
    data_parallel_waiting_.pop_front();
    r->data_parallel_to_server = to_server;
    r->device_split = to_server ? 0 : num_stages_;
    // The whole input on one side; on the device, as the strategy's placement says (its plan covers [0, n)).
    r->plan = to_server ? offload_plan_ : strategy_.kind == Strategy::Kind::data_parallel ? plan_ : local_plan_;
    route(*r);
  }
}

void DeviceLoop::start_idle_stages(double now_s) {
  for (size_t i = 0; i < procs_.size(); ++i) {
    Processor& p = procs_[i];
    while (p.running == nullptr && !(i == 0 && helping_)) {
      if (i == 0 && !help_queue_.empty()) {  // forwarded work goes before the device's own queued requests
        const std::int64_t task = help_queue_.front();
        help_queue_.pop_front();
        helping_ = true;
        if (tracing()) trace("> help " + num(task));
        act_.start_help(task);
        break;
      }
      if (p.queue.empty()) break;
      DeviceRequest* r = p.queue.front();
      if (!r->plan->invalid.empty()) {  // fails with the reason, as a segment that cannot start
        p.queue.pop_front();
        r->rec.t_device_start = r->rec.t_device_end = now_s;
        finish(*r, false, r->plan->invalid, true);
        continue;
      }
      if (past_deadline(*r, now_s)) {  // drop_late: given up before its next segment
        drop_from_processors(r);
        drop(*r, now_s, "before its device segment " + std::to_string(r->segment));
        continue;
      }
      const DeviceSegment& seg = r->plan->segments[static_cast<size_t>(r->segment)];
      if (seg.with >= 0) {  // a split segment: both processors free, and it heads both queues
        Processor& a = procs_[static_cast<size_t>(seg.proc)];
        Processor& b = procs_[static_cast<size_t>(seg.with)];
        const auto idle = [this](const Processor& x) { return x.running == nullptr && !(&x == &procs_[0] && (helping_ || !help_queue_.empty())); };
        if (!idle(a) || !idle(b) || a.queue.front() != r || b.queue.empty() || b.queue.front() != r) break;
        a.queue.pop_front();
        b.queue.pop_front();
      } else {
        p.queue.pop_front();
      }
      start_segment(*r, now_s);
      break;
    }
  }
  while (uploading_ == nullptr && !up_queue_.empty() && past_deadline(*up_queue_.front(), now_s)) {  // drop_late
    DeviceRequest* r = up_queue_.front();
    up_queue_.pop_front();
    drop(*r, now_s, "before its upload");
  }
  while (uploading_ == nullptr && !up_queue_.empty() && !server_down_why_.empty()) {  // nothing goes to a failed server
    DeviceRequest* r = up_queue_.front();
    up_queue_.pop_front();
    ++given_up_;
    finish(*r, false, server_down_why_, true);
  }
  if (uploading_ == nullptr && !up_queue_.empty()) {
    uploading_ = up_queue_.front();
    up_queue_.pop_front();
    uploading_->where = Where::on_stage;
    if (tracing())
      trace("> upload " + num(uploading_->rec.id) + " " + std::to_string(uploading_->device_split) +
            (uploading_->cloud_split > 0 ? " cloud " + std::to_string(uploading_->cloud_split) : ""));
    act_.start_upload(*uploading_);
  }
}

std::string DeviceLoop::memory_shortfall(DeviceRequest& r) {
  // The need of each pool the segment touches (header: "memory"); also the peaks.
  const DeviceSegment& seg = r.plan->segments[static_cast<size_t>(r.segment)];
  const size_t np = hw_->pool_capacity_bytes.size();
  std::vector<double>& need = need_;
  std::vector<double>& proc_need = proc_need_;
  need.assign(np, 0.0);
  proc_need.assign(procs_.size(), 0.0);
  // The weights its plan keeps on each processor: this runtime splits a stage's output rows, so both
  // processors of a split stage hold its weights whole (core/plan_memory.hpp).
  add_plan_weight_bytes(
      *r.plan, [this, &r](int b, int e) { return act_.weight_bytes(r, b, e); }, SplitStorage::rows, proc_need);
  const SegmentWorkingBytes work = segment_working_bytes(seg, act_.working_bytes(r, seg.begin, seg.end), *hw_);
  for (size_t i = 0; i < procs_.size(); ++i) proc_need[i] += procs_[i].working_bytes;
  proc_need[static_cast<size_t>(seg.proc)] += work.on_proc;
  if (seg.with >= 0) proc_need[static_cast<size_t>(seg.with)] += work.on_with;
  for (size_t i = 0; i < procs_.size(); ++i) need[static_cast<size_t>(hw_->pool_of[i])] += proc_need[i];
  need[0] += held_total_;
  for (size_t i = 0; i < procs_.size(); ++i) proc_peak_[i] = std::max(proc_peak_[i], proc_need[i]);
  for (size_t k = 0; k < np; ++k) pool_peak_[k] = std::max(pool_peak_[k], need[k]);
  for (const int proc : {seg.proc, seg.with}) {
    if (proc < 0) continue;
    const size_t pool = static_cast<size_t>(hw_->pool_of[static_cast<size_t>(proc)]);
    const double cap = hw_->pool_capacity_bytes[pool];
    if (cap > 0 && need[pool] > cap) return out_of_memory_reason(device_.id, hw_->processors[static_cast<size_t>(proc)], need[pool], cap);
  }
  procs_[static_cast<size_t>(seg.proc)].working_bytes = work.on_proc;
  if (seg.with >= 0) procs_[static_cast<size_t>(seg.with)].working_bytes = work.on_with;
  return "";
}

void DeviceLoop::start_segment(DeviceRequest& r, double now_s) {
  const DeviceSegment& seg = r.plan->segments[static_cast<size_t>(r.segment)];
  if (memory_limited_) {
    hold(r, DeviceRequest::Held::none);  // what it held is now its segment's input
    std::string oom = memory_shortfall(r);
    if (!oom.empty()) {  // it runs (the allocation fails somewhere in it: its time bounds the waste), then fails
      if (tracing()) trace("> oom " + num(r.rec.id) + " " + std::to_string(r.segment));
      out_of_memory_.emplace_back(&r, std::move(oom));
    }
  }
  procs_[static_cast<size_t>(seg.proc)].running = &r;
  if (seg.with >= 0) procs_[static_cast<size_t>(seg.with)].running = &r;
  r.where = Where::on_stage;
  if (r.segment == 0) r.rec.t_device_start = now_s;
  if (tracing()) {
    if (r.plan->plain())
      trace("> compute " + num(r.rec.id) + " " + std::to_string(r.device_split));
    else
      trace("> compute " + num(r.rec.id) + " " + std::to_string(r.device_split) + " segment " + std::to_string(r.segment) + " [" +
            std::to_string(seg.begin) + "," + std::to_string(seg.end) + ") on " + std::to_string(seg.proc) +
            (seg.with >= 0 ? "+" + std::to_string(seg.with) : ""));
  }
  act_.start_compute(r);
}

void DeviceLoop::on_computed(std::int64_t id, double now_s, bool ok, const std::string& why) {
  if (tracing()) trace("computed " + num(id) + " " + num(now_s) + " " + ok_text(ok) + " " + why);
  if (stopped_) return;
  DeviceRequest* r = nullptr;
  for (Processor& p : procs_)
    if (p.running != nullptr && p.running->rec.id == id) {
      r = p.running;
      p.running = nullptr;
      p.working_bytes = 0;
    }
  if (r == nullptr) return;
  for (auto it = out_of_memory_.begin(); it != out_of_memory_.end(); ++it)
    if (it->first == r) {  // its segment ran out of memory: it fails now, with the numbers
      const std::string oom = std::move(it->second);
      out_of_memory_.erase(it);
      r->rec.t_device_end = now_s;
      finish(*r, false, oom, true);
      return;
    }
  const int next = r->segment + 1;
  if (ok && next < static_cast<int>(r->plan->segments.size())) {  // on to its next processor
    r->segment = static_cast<std::int16_t>(next);
    r->where = Where::waiting;
    if (memory_limited_) hold(*r, DeviceRequest::Held::segment_input);
    enqueue_segment(*r);
    return;
  }
  r->rec.t_device_end = now_s;
  if (!ok) {
    finish(*r, false, why, true);
  } else if (r->device_split >= num_stages_) {
    r->rec.t_result = now_s;
    finish(*r, true, "", true);
  } else {
    r->where = Where::waiting;
    if (memory_limited_) hold(*r, DeviceRequest::Held::upload);
    up_queue_.push_back(r);
  }
}

void DeviceLoop::on_uploaded(std::int64_t id, double now_s, bool ok, const std::string& why) {
  if (tracing()) trace("uploaded " + num(id) + " " + num(now_s) + " " + ok_text(ok) + " " + why);
  if (stopped_ || uploading_ == nullptr || uploading_->rec.id != id) return;
  DeviceRequest* r = uploading_;
  uploading_ = nullptr;
  if (!ok) {
    finish(*r, false, why, true);
    return;
  }
  r->rec.t_uplink_end = now_s;
  r->where = Where::at_server;
  if (memory_limited_) hold(*r, DeviceRequest::Held::none);
}

void DeviceLoop::on_result(std::int64_t id, double now_s, bool ok, const std::string& why, bool dropped) {
  if (DeviceRequest* r = find_live(id)) return on_result(*r, now_s, ok, why, dropped);
  if (tracing()) trace("result " + num(id) + " " + num(now_s) + " " + (dropped ? "dropped" : ok_text(ok)) + " " + why);
}

void DeviceLoop::on_result(DeviceRequest& r, double now_s, bool ok, const std::string& why, bool dropped) {
  if (tracing()) trace("result " + num(r.rec.id) + " " + num(now_s) + " " + (dropped ? "dropped" : ok_text(ok)) + " " + why);
  if (stopped_ || r.where == Where::finished) return;
  if (running(&r)) return;                     // not sent yet: not its result
  if (&r == uploading_) uploading_ = nullptr;  // overtook its upload's event: the server has it all
  if (ok) r.rec.t_result = now_s;
  finish(r, ok && !dropped, why, true, dropped);
}

void DeviceLoop::fail(std::int64_t id, double now_s, const std::string& why) {
  if (tracing()) trace("fail " + num(id) + " " + num(now_s) + " " + why);
  DeviceRequest* found = find_live(id);
  if (stopped_ || found == nullptr) return;
  DeviceRequest& r = *found;
  if (running(&r) || &r == uploading_) return;
  const bool waiting_for_side = data_parallel_waiting_.contains(&r);
  drop_from_processors(&r);
  erase_from(up_queue_, &r);
  erase_from(data_parallel_waiting_, &r);
  finish(r, false, why, !waiting_for_side);
}

void DeviceLoop::abandon(const std::function<std::string(const DeviceRequest&)>& why) {
  if (tracing()) trace("abandon");
  if (stopped_) return;
  stopped_ = true;
  for (DeviceRequest* r : unfinished_requests()) finish(*r, false, why(*r), false);
  for (Processor& p : procs_) p = Processor{};
  up_queue_.clear();
  data_parallel_waiting_.clear();
  help_queue_.clear();
  uploading_ = nullptr;
  held_total_ = 0;
  out_of_memory_.clear();
}

bool DeviceLoop::past_deadline(const DeviceRequest& r, double now_s) const {
  const WorkloadSpec& w = device_.workload;
  return w.drop_late && w.deadline_ms > 0 && now_s - r.rec.t_created > w.deadline_ms * 1e-3;
}

std::string late_drop_reason(const std::string& where, double age_s, double deadline_ms) {
  return "dropped " + where + ": " + format_double(std::round(age_s * 1e6) / 1e3) + " ms old, past its deadline of " + format_double(deadline_ms) +
         " ms (workload.drop_late)";
}

std::string server_drop_reason(const std::string& server, double age_s, double deadline_ms, double alone_s) {
  return "dropped at server " + server + ": " + format_double(std::round(age_s * 1e6) / 1e3) + " ms old, its deadline of " +
         format_double(deadline_ms) + " ms cannot be met (" + format_double(std::round(alone_s * 1e6) / 1e3) +
         " ms alone on the server; workload.drop_late)";
}

void DeviceLoop::drop(DeviceRequest& r, double now_s, const std::string& where) {
  ++given_up_;
  finish(r, false, late_drop_reason(where, now_s - r.rec.t_created, device_.workload.deadline_ms), true, true);
}

void DeviceLoop::finish(DeviceRequest& r, bool ok, const std::string& why, bool holds_side, bool dropped) {
  DeviceRequest* last = live_.back();  // swap-remove
  live_[r.live_index] = last;
  last->live_index = r.live_index;
  live_.pop_back();
  r.where = Where::finished;
  if (r.held != DeviceRequest::Held::none) hold(r, DeviceRequest::Held::none);
  if (r.data_parallel && holds_side) router_.release(r.data_parallel_to_server ? DataParallelRouter::Side::server : DataParallelRouter::Side::device);
  if (tracing()) trace("> finished " + num(r.rec.id) + " " + ok_text(ok) + " " + why);
  if (ok) {
    r.rec.status = RequestRecord::Status::ok;
    ++completed_;
    latency_sum_s_ += r.rec.latency_s();
  } else {
    r.rec.status = dropped ? RequestRecord::Status::dropped : RequestRecord::Status::failed;
    r.rec.failure = why;
    ++failed_;
  }
  act_.finished(r);
}

void DeviceLoop::stop() {
  if (tracing() && !stopped_) trace("stop");
  stopped_ = true;
}

void DeviceLoop::on_help_arrived(std::int64_t task) {
  if (tracing()) trace("help_arrived " + num(task));
  if (!stopped_) help_queue_.push_back(task);
}

void DeviceLoop::on_help_done() {
  if (tracing()) trace("help_done");
  helping_ = false;
}

DeviceRequest* DeviceLoop::find_live(std::int64_t id) const {
  for (DeviceRequest* r : live_)
    if (r->rec.id == id) return r;
  return nullptr;
}

std::vector<DeviceRequest*> DeviceLoop::unfinished_requests(bool at_server_only) const {
  std::vector<DeviceRequest*> out;
  for (DeviceRequest* r : live_)
    if (!at_server_only || r->where == Where::at_server) out.push_back(r);
  std::sort(out.begin(), out.end(), [](const DeviceRequest* a, const DeviceRequest* b) { return a->rec.id < b->rec.id; });
  return out;
}

}  // namespace coinfer
