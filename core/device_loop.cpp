#include "core/device_loop.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace coinfer {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();

void erase_from(std::deque<DeviceRequest*>& q, const DeviceRequest* r) { q.erase(std::remove(q.begin(), q.end(), r), q.end()); }

DeviceLoop::TraceSink g_sink;  // conformance tests only
bool g_tracing = false;          // g_sink is set: one plain load per event when it is not
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

DeviceLoop::DeviceLoop(const DeviceSpec& device, int device_index, int server_index, std::uint64_t seed, int num_stages,
                       double arrivals_end_s, DataParallelCosts dp_costs, DeviceActions& actions)
    : device_(device),
      act_(actions),
      device_index_(device_index),
      server_(server_index),
      num_stages_(num_stages),
      arrivals_end_s_(arrivals_end_s),
      arrivals_(device, seed, device_index, arrivals_end_s),
      router_(dp_costs),
      strategy_(device.strategy),
      strategy_text_(device.strategy.to_string()),
      in_flight_limit_(device.workload.in_flight > 0 ? device.workload.in_flight : default_in_flight(device.strategy)),
      next_arrival_s_(kNever) {}

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
  if (device_.workload.in_flight <= 0) in_flight_limit_ = default_in_flight(s);
}

bool DeviceLoop::accepting(double now_s) const {
  return joined_ && !stopped_ && !admission_paused_ && now_s >= device_.join_at_s && now_s < device_.leave_at_s &&
         now_s < arrivals_end_s_ && act_.may_create();
}

bool DeviceLoop::closed_loop_admits() const {
  ClosedLoopView v;
  v.num_stages = num_stages_;
  v.unfinished = unfinished();
  v.in_flight_limit = in_flight_limit_;
  v.compute_idle = computing_ == nullptr && exec_queue_.empty();
  v.upload_idle = uploading_ == nullptr && up_queue_.empty();
  v.dp_input_waiting = !dp_pending_.empty();
  v.dp_side_free = router_.any_free();
  return ArrivalProcess::admits(strategy_, v);
}

void DeviceLoop::set_admission_paused(bool paused) {
  if (paused != admission_paused_ && tracing()) trace(std::string("pause ") + (paused ? "1" : "0"));
  admission_paused_ = paused;
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
  if (arrivals_.closed_loop())
    while (accepting(now_s) && closed_loop_admits()) create(now_s);
  start_idle_stages(now_s);
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
    dp_pending_.push_back(&r);
    route_data_parallel(now_s);
    return;
  }
  r.device_split = strategy_.device_split(num_stages_);
  route(r);
}

void DeviceLoop::route(DeviceRequest& r) {
  r.rec.split = r.device_split;
  if (r.device_split < num_stages_) r.rec.server = server_;
  act_.routed(r);
  (r.device_split > 0 ? exec_queue_ : up_queue_).push_back(&r);
}

void DeviceLoop::route_data_parallel(double now_s) {
  while (!dp_pending_.empty() && router_.any_free()) {
    const bool to_server = *router_.route_next(act_.link_bytes_per_s(now_s)) == DataParallelRouter::Side::server;
    DeviceRequest* r = dp_pending_.front();
    dp_pending_.pop_front();
    r->dp_to_server = to_server;
    r->device_split = to_server ? 0 : num_stages_;
    route(*r);
  }
}

void DeviceLoop::start_idle_stages(double now_s) {
  if (computing_ == nullptr && !helping_) {
    if (!help_queue_.empty()) {  // forwarded work goes before the device's own queued requests
      const std::int64_t task = help_queue_.front();
      help_queue_.pop_front();
      helping_ = true;
      if (tracing()) trace("> help " + num(task));
      act_.start_help(task);
    } else if (!exec_queue_.empty()) {
      computing_ = exec_queue_.front();
      exec_queue_.pop_front();
      computing_->where = Where::on_stage;
      computing_->rec.t_device_start = now_s;
      if (tracing()) trace("> compute " + num(computing_->rec.id) + " " + std::to_string(computing_->device_split));
      act_.start_compute(*computing_);
    }
  }
  if (uploading_ == nullptr && !up_queue_.empty()) {
    uploading_ = up_queue_.front();
    up_queue_.pop_front();
    uploading_->where = Where::on_stage;
    if (tracing()) trace("> upload " + num(uploading_->rec.id) + " " + std::to_string(uploading_->device_split));
    act_.start_upload(*uploading_);
  }
}

void DeviceLoop::on_computed(std::int64_t id, double now_s, bool ok, const std::string& why) {
  if (tracing()) trace("computed " + num(id) + " " + num(now_s) + " " + ok_text(ok) + " " + why);
  if (stopped_ || computing_ == nullptr || computing_->rec.id != id) return;
  DeviceRequest* r = computing_;
  computing_ = nullptr;
  r->rec.t_device_end = now_s;
  if (!ok) {
    finish(*r, false, why, true);
  } else if (r->device_split >= num_stages_) {
    r->rec.t_result = now_s;
    finish(*r, true, "", true);
  } else {
    r->where = Where::waiting;
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
}

void DeviceLoop::on_result(std::int64_t id, double now_s, bool ok, const std::string& why) {
  if (DeviceRequest* r = find_live(id)) return on_result(*r, now_s, ok, why);
  if (tracing()) trace("result " + num(id) + " " + num(now_s) + " " + ok_text(ok) + " " + why);
}

void DeviceLoop::on_result(DeviceRequest& r, double now_s, bool ok, const std::string& why) {
  if (tracing()) trace("result " + num(r.rec.id) + " " + num(now_s) + " " + ok_text(ok) + " " + why);
  if (stopped_ || r.where == Where::finished) return;
  if (&r == computing_) return;  // not sent yet: not its result
  if (&r == uploading_) uploading_ = nullptr;  // overtook its upload's event: the server has it all
  if (ok) r.rec.t_result = now_s;
  finish(r, ok, why, true);
}

void DeviceLoop::fail(std::int64_t id, double now_s, const std::string& why) {
  if (tracing()) trace("fail " + num(id) + " " + num(now_s) + " " + why);
  DeviceRequest* found = find_live(id);
  if (stopped_ || found == nullptr) return;
  DeviceRequest& r = *found;
  if (&r == computing_ || &r == uploading_) return;
  const bool waiting_for_side = std::find(dp_pending_.begin(), dp_pending_.end(), &r) != dp_pending_.end();
  erase_from(exec_queue_, &r);
  erase_from(up_queue_, &r);
  erase_from(dp_pending_, &r);
  finish(r, false, why, !waiting_for_side);
}

void DeviceLoop::abandon(const std::function<std::string(const DeviceRequest&)>& why) {
  if (tracing()) trace("abandon");
  if (stopped_) return;
  stopped_ = true;
  for (DeviceRequest* r : unfinished_requests()) finish(*r, false, why(*r), false);
  exec_queue_.clear();
  up_queue_.clear();
  dp_pending_.clear();
  help_queue_.clear();
  computing_ = uploading_ = nullptr;
}

void DeviceLoop::finish(DeviceRequest& r, bool ok, const std::string& why, bool holds_side) {
  DeviceRequest* last = live_.back();  // swap-remove
  live_[r.live_index] = last;
  last->live_index = r.live_index;
  live_.pop_back();
  r.where = Where::finished;
  if (r.data_parallel && holds_side) router_.release(r.dp_to_server ? DataParallelRouter::Side::server : DataParallelRouter::Side::device);
  if (tracing()) trace("> finished " + num(r.rec.id) + " " + ok_text(ok) + " " + why);
  if (ok) {
    r.rec.status = RequestRecord::Status::ok;
    ++completed_;
    latency_sum_s_ += r.rec.latency_s();
  } else {
    r.rec.status = RequestRecord::Status::failed;
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
