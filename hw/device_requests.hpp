#pragma once
// The real device's requests from creation to completion and the queues of its two stages, without
// threads, sockets or Torch (the device runtime's threads hold its mutex while they call in). The
// rules are the simulator's: data_parallel routing (core/data_parallel_router.hpp) and closed-loop
// admission (core/arrival_process.hpp). Every request is journalled when created and when done.
// Times are run time (s since the epoch); bandwidths bytes/s. Not thread-safe.
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/data_parallel_router.hpp"
#include "core/request_record.hpp"
#include "core/strategy.hpp"
#include "hw/record_journal.hpp"

namespace coinfer::hw {

// Work for the compute thread: a request's device stages, or a task forwarded to this device as a
// helper (which is not a request of ours).
struct ComputeJob {
  bool helper_task = false;
  std::int64_t id = 0;        // request id, or the server's task id for helper work
  int split = 0;              // request: device runs [0, split); helper task: state is at split
  std::string state_bytes;    // helper task only
};

class DeviceRequests {
 public:
  // `journal` must outlive this object.
  DeviceRequests(int device_index, int server_index, int num_stages, DataParallelRouter router, JournalWriter& journal);

  // A new request created now under `current`, journalled and routed: to the compute queue (a
  // device part), the upload queue (offload), or, under data_parallel, to a free side.
  std::int64_t create(const Strategy& current, double now_s, double bytes_per_s);
  // Completes (ok) or fails a request; unknown ids are ignored (already failed). Frees its
  // data_parallel side and routes waiting data_parallel inputs.
  void complete(std::int64_t id, bool ok, const std::string& why, double now_s, double bytes_per_s);
  // The closed-loop admission rule for `current` on the queues as they are now.
  bool closed_loop_admits(const Strategy& current, int in_flight_limit) const;

  RequestRecord* find(std::int64_t id);
  size_t unfinished() const { return reqs_.size(); }
  std::vector<std::int64_t> unfinished_ids() const;
  std::vector<std::int64_t> at_server_ids() const { return {at_server_.begin(), at_server_.end()}; }
  void mark_at_server(std::int64_t id) { at_server_.insert(id); }
  long long failed() const { return failed_; }
  long long completed() const { return completed_; }      // completed ok since the start
  double latency_sum_s() const { return latency_sum_s_; }  // the sum of their latencies (s)
  int queue_length() const { return static_cast<int>(compute_q.size() + upload_q.size()); }

  // The stages' queues and whether a request's stage is in progress (the threads take from these).
  std::deque<ComputeJob> compute_q;
  std::deque<std::pair<std::int64_t, std::string>> upload_q;  // (request, serialised state at its split)
  bool computing = false, uploading = false;

 private:
  void route(std::int64_t id, int split);
  void route_data_parallel(double bytes_per_s);

  int device_, server_, n_;
  DataParallelRouter router_;
  JournalWriter& journal_;
  std::map<std::int64_t, RequestRecord> reqs_;  // unfinished requests
  std::set<std::int64_t> at_server_;            // sent, awaiting a result
  std::deque<std::int64_t> dp_pending_;         // data_parallel requests waiting for a side
  std::set<std::int64_t> dp_on_device_, dp_on_server_;
  std::int64_t next_id_ = 0;
  long long failed_ = 0;
  long long completed_ = 0;
  double latency_sum_s_ = 0;
};

}  // namespace coinfer::hw
