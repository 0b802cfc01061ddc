#pragma once
// The real device's side of its device loop (core/device_loop.hpp, the request life the simulator
// runs too): storage for its unfinished requests, the journal, and the work the loop hands to the
// device runtime's threads (one computation per processor and one upload at a time). No threads,
// sockets or Torch here: the runtime's threads hold its mutex while they call in. Times are run time
// (s since the run's time zero). Not thread-safe.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/device_loop.hpp"
#include "hw/record_journal.hpp"

namespace coinfer::hw {

// One request of a batch forwarded to this device as a helper: the server's task id and its state.
struct HelperPart {
  std::int64_t task = 0;
  std::string state_bytes;
};

// Work for a processor's compute thread: one of ours, a segment of a request's device stages (its
// plan, core/device_plan.hpp: stages [begin, end) on processor `proc`, the device's [0, split) in all;
// the default plan is one segment [0, split) on processor 0) ...
struct RequestStages {
  std::int64_t request = 0;
  int split = 0;           // the request's device split: end == split is its last device segment
  int begin = 0, end = 0;  // this segment's stages
  int proc = 0;            // the processor (DeviceHardware slot) that runs it
  int with = -1;           // >= 0: the segment is split with this processor (share of its rows on proc)
  double share = 1;
};
// ... or a batch forwarded to this device as a helper (not requests of ours), run as one batch on
// processor 0.
struct HelperBatch {
  std::int64_t batch = 0;  // this device's number for it (DeviceRequests::add_helper_batch)
  int split = 0;           // its states are at `split`; the helper runs [split, n)
  std::vector<HelperPart> parts;
};
using ComputeJob = std::variant<RequestStages, HelperBatch>;

// Work for the upload thread: a request's state at its split (empty for split 0: the raw input,
// serialised by the uploader).
struct UploadJob {
  std::int64_t id = 0;
  int split = 0;
  std::string state_bytes;
  int cloud_split = 0;  // pp(k,m): m, told to the server (core/cloud_handoff.hpp); 0 none
};

class DeviceRequests final : private DeviceActions {
 public:
  // `device`, `link` and `journal` must outlive this object. Arguments as DeviceLoop's; `link`: the
  // device's link as the scenario describes it (data_parallel routing).
  DeviceRequests(const DeviceSpec& device, int device_index, int server_index, std::uint64_t seed, int num_stages, double arrivals_end_s,
                 DataParallelCosts router_costs, const BandwidthSchedule& link, JournalWriter& journal);
  DeviceRequests(const DeviceRequests&) = delete;
  DeviceRequests& operator=(const DeviceRequests&) = delete;

  DeviceLoop& loop() { return loop_; }
  const DeviceLoop& loop() const { return loop_; }
  // An unfinished request's record; nullptr once it finished (the journal has it).
  RequestRecord* find(std::int64_t id);

  // Processor `proc`'s compute thread: the job the loop started there, taken once (nullopt: none).
  // Processors compute at once (the loop pipelines a request's segments across them).
  std::optional<ComputeJob> take_compute(int proc = 0);
  // The device's processors (the loop's hardware): one compute thread each.
  int processors() const { return loop_.hardware().size(); }
  // Called with a request's id when it finishes (any way): the engine drops what it kept for it
  // between segments. Called under the caller's lock, from inside a loop call.
  void on_release(std::function<void(std::int64_t)> f) { release_ = std::move(f); }
  // The upload thread: likewise.
  std::optional<UploadJob> take_upload();
  // What request `id`'s device stages produced, for its upload.
  void keep_state(std::int64_t id, std::string bytes);
  // A batch forwarded by the server, complete: queued for the processor (DeviceLoop::on_help_arrived).
  void add_helper_batch(std::int64_t batch_id, int split, std::vector<HelperPart> parts);

 private:
  DeviceRequest& new_request(double now_s) override;
  double link_bytes_per_s(double now_s) override { return link_.bytes_per_s_at(now_s); }
  void created(DeviceRequest& r) override;
  void start_compute(DeviceRequest& r) override;
  void start_upload(DeviceRequest& r) override;
  void start_help(std::int64_t task) override;
  void finished(DeviceRequest& r) override;
  std::optional<ComputeJob>& slot(int proc);  // compute_[proc], grown as needed

  int device_;
  const BandwidthSchedule& link_;
  JournalWriter& journal_;
  std::map<std::int64_t, DeviceRequest> reqs_;      // unfinished requests (node-based: stable addresses)
  std::map<std::int64_t, std::string> state_;       // computed, awaiting upload
  std::map<std::int64_t, HelperBatch> help_;        // forwarded, not started yet
  std::vector<std::optional<ComputeJob>> compute_;  // per processor slot
  std::function<void(std::int64_t)> release_;
  std::optional<UploadJob> upload_;
  std::int64_t next_id_ = 0;
  DeviceLoop loop_;  // last: it is built with *this
};

}  // namespace coinfer::hw
