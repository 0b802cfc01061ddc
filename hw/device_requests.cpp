#include "hw/device_requests.hpp"

#include <algorithm>

#include "core/arrival_process.hpp"

namespace coinfer::hw {

DeviceRequests::DeviceRequests(int device_index, int server_index, int num_stages, DataParallelRouter router, JournalWriter& journal)
    : device_(device_index), server_(server_index), n_(num_stages), router_(router), journal_(journal) {}

std::int64_t DeviceRequests::create(const Strategy& current, double now_s, double bytes_per_s) {
  RequestRecord r;
  r.id = next_id_++;
  r.device = device_;
  r.server = server_;
  r.strategy = current.to_string();
  r.t_created = now_s;
  journal_.created(r);
  reqs_[r.id] = r;
  if (current.kind == Strategy::Kind::data_parallel) {
    dp_pending_.push_back(r.id);
    route_data_parallel(bytes_per_s);
  } else {
    route(r.id, current.device_split(n_));
  }
  return r.id;
}

void DeviceRequests::route(std::int64_t id, int split) {
  reqs_[id].split = split;
  if (split > 0) compute_q.push_back({false, id, split, {}});
  else upload_q.emplace_back(id, std::string());  // the raw input is serialised by the uploader
}

void DeviceRequests::route_data_parallel(double bytes_per_s) {
  while (!dp_pending_.empty() && router_.any_free()) {
    const bool to_server = *router_.route_next(bytes_per_s) == DataParallelRouter::Side::server;
    const std::int64_t id = dp_pending_.front();
    dp_pending_.pop_front();
    (to_server ? dp_on_server_ : dp_on_device_).insert(id);
    route(id, to_server ? 0 : n_);
  }
}

void DeviceRequests::complete(std::int64_t id, bool ok, const std::string& why, double now_s, double bytes_per_s) {
  auto it = reqs_.find(id);
  if (it == reqs_.end()) return;
  RequestRecord& r = it->second;
  if (ok) {
    r.t_result = now_s;
    ++completed_;
    latency_sum_s_ += r.latency_s();
  } else {
    r.status = RequestRecord::Status::failed;
    r.failure = why;
    ++failed_;
  }
  journal_.done(r);
  at_server_.erase(id);
  if (dp_on_device_.erase(id)) router_.release(DataParallelRouter::Side::device);
  else if (dp_on_server_.erase(id)) router_.release(DataParallelRouter::Side::server);
  dp_pending_.erase(std::remove(dp_pending_.begin(), dp_pending_.end(), id), dp_pending_.end());
  reqs_.erase(it);
  route_data_parallel(bytes_per_s);
}

bool DeviceRequests::closed_loop_admits(const Strategy& current, int in_flight_limit) const {
  ClosedLoopView v;
  v.num_stages = n_;
  v.unfinished = static_cast<int>(reqs_.size());
  v.in_flight_limit = in_flight_limit;
  bool requests_to_compute = false;
  for (const ComputeJob& j : compute_q) requests_to_compute = requests_to_compute || !j.helper_task;
  v.compute_idle = !computing && !requests_to_compute;
  v.upload_idle = !uploading && upload_q.empty();
  v.dp_input_waiting = !dp_pending_.empty();
  v.dp_side_free = router_.any_free();
  return ArrivalProcess::admits(current, v);
}

RequestRecord* DeviceRequests::find(std::int64_t id) {
  auto it = reqs_.find(id);
  return it == reqs_.end() ? nullptr : &it->second;
}

std::vector<std::int64_t> DeviceRequests::unfinished_ids() const {
  std::vector<std::int64_t> ids;
  for (const auto& kv : reqs_) ids.push_back(kv.first);
  return ids;
}

}  // namespace coinfer::hw
