#include "hw/device_requests.hpp"

namespace coinfer::hw {

DeviceRequests::DeviceRequests(const DeviceSpec& device, int device_index, int server_index, std::uint64_t seed, int num_stages,
                               double arrivals_end_s, DataParallelCosts router_costs, const BandwidthSchedule& link, JournalWriter& journal)
    : device_(device_index),
      link_(link),
      journal_(journal),
      loop_(device, device_index, server_index, seed, num_stages, arrivals_end_s, router_costs, *this) {}

DeviceRequest& DeviceRequests::new_request(double now_s) {
  const std::int64_t id = next_id_++;
  DeviceRequest& r = reqs_[id];
  r.rec.id = id;
  r.rec.device = device_;
  r.rec.t_created = now_s;
  return r;
}

void DeviceRequests::created(DeviceRequest& r) { journal_.created(r.rec); }

void DeviceRequests::start_compute(DeviceRequest& r) {
  RequestStages job{r.rec.id, r.device_split, 0, r.device_split, 0, -1, 1};
  if (r.plan && static_cast<size_t>(r.segment) < r.plan->segments.size()) {
    const DeviceSegment& seg = r.plan->segments[static_cast<size_t>(r.segment)];
    job.begin = seg.begin;
    job.end = seg.end;
    job.proc = seg.proc;
    job.with = seg.with;
    job.share = seg.share;
  }
  slot(job.proc) = std::move(job);
}

std::optional<ComputeJob>& DeviceRequests::slot(int proc) {
  if (proc < 0) proc = 0;
  if (compute_.size() <= static_cast<size_t>(proc)) compute_.resize(static_cast<size_t>(proc) + 1);
  return compute_[static_cast<size_t>(proc)];
}

void DeviceRequests::start_upload(DeviceRequest& r) {
  UploadJob job{r.rec.id, r.device_split, {}, r.cloud_split};
  if (auto it = state_.find(r.rec.id); it != state_.end()) {
    job.state_bytes = std::move(it->second);
    state_.erase(it);
  }
  upload_ = std::move(job);
}

void DeviceRequests::start_help(std::int64_t task) {
  auto it = help_.find(task);
  if (it == help_.end()) return;
  slot(0) = std::move(it->second);
  help_.erase(it);
}

void DeviceRequests::finished(DeviceRequest& r) {
  journal_.done(r.rec);
  if (release_) release_(r.rec.id);
  state_.erase(r.rec.id);
  reqs_.erase(r.rec.id);
}

RequestRecord* DeviceRequests::find(std::int64_t id) {
  auto it = reqs_.find(id);
  return it == reqs_.end() ? nullptr : &it->second.rec;
}

std::optional<ComputeJob> DeviceRequests::take_compute(int proc) {
  if (proc < 0 || static_cast<size_t>(proc) >= compute_.size()) return std::nullopt;
  std::optional<ComputeJob> j = std::move(compute_[static_cast<size_t>(proc)]);
  compute_[static_cast<size_t>(proc)].reset();
  return j;
}

std::optional<UploadJob> DeviceRequests::take_upload() {
  std::optional<UploadJob> j = std::move(upload_);
  upload_.reset();
  return j;
}

void DeviceRequests::keep_state(std::int64_t id, std::string bytes) {
  if (reqs_.count(id)) state_[id] = std::move(bytes);
}

void DeviceRequests::add_helper_batch(std::int64_t batch_id, int split, std::vector<HelperPart> parts) {
  help_[batch_id] = HelperBatch{batch_id, split, std::move(parts)};
  loop_.on_help_arrived(batch_id);
}

}  // namespace coinfer::hw
