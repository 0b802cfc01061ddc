#pragma once
// The requests of one simulation run (sim-internal): created by device actors, handed between
// actors by pointer inside mailbox messages, read by the controller after the run. Owned by the
// run; actors hold a pointer to it, valid for the whole Engine::run().
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "core/cloud_handoff.hpp"
#include "core/device_loop.hpp"
#include "core/limits.hpp"
#include "core/request_record.hpp"

namespace coinfer::sim {

// One request in flight: what the device loop knows of it (core/device_loop.hpp: the record, its
// split, data_parallel side) and what the simulation adds. Lives in the RequestLedger (stable
// addresses).
struct SimRequest : DeviceRequest {
  int batch_group = 0;  // BatchGroupIds id of (model, dataset, split): equal ids batch together
  int binding = 0;      // which of its device's models (DeviceSlice::bindings) it runs: 0 = as named
  bool finished = false;
  bool dropped_at_server = false;  // the server gave it up past its deadline (its result says so)
  // pp(k,m) (a cloud tier; DeviceRequest::cloud_split is m): the batch group of [m,n) at the cloud, and
  // whether the edge has passed it on (from then on the cloud holds it: rec.cloud).
  int cloud_group = 0;
  int whole_group = 0;  // the group of [k,n): where it batches at a server without a cloud (see ServerActors)
  bool at_cloud = false;
  // The stages the server now holding it runs (core/cloud_handoff.hpp server_part; end -1: the model's
  // end when num_stages is -1 and there is no cloud part).
  int server_begin() const { return server_part(device_split, cloud_split, at_cloud, 0).begin; }
  int server_end(int num_stages) const { return server_part(device_split, cloud_split, at_cloud, num_stages).end; }
};

class RequestLedger {
 public:
  RequestLedger(double arrivals_end_s, double hard_end_s)
      : arrivals_end_s_(arrivals_end_s), hard_end_s_(hard_end_s), all_done_(simgrid::s4u::Semaphore::create(0)) {}
  // A new request of `device`, created now.
  SimRequest& create(int device);
  // False once the run holds limits::kMaxRequests requests: devices stop creating, and the run is
  // refused afterwards (run_simulation throws InputError).
  bool may_create() const { return static_cast<long long>(size_) < limits::kMaxRequests; }
  // Marks a request finished now (its status and failure as the device loop set them) and wakes the
  // controller if it was the last.
  void finish(SimRequest& r);
  double arrivals_end_s() const { return arrivals_end_s_; }  // no request is created at or after this time
  double hard_end_s() const { return hard_end_s_; }          // arrivals end + drain: whatever is unfinished then fails
  long long unfinished() const { return unfinished_; }
  // Released when arrivals ended and the last unfinished request finished.
  const simgrid::s4u::SemaphorePtr& all_done() const { return all_done_; }
  // How many requests were created, and the last one (size() > 0).
  std::size_t size() const { return size_; }
  const SimRequest& back() const { return chunks_.back()[(size_ - 1) % kChunk]; }
  // After the run: hands every request to `take` in id order, freeing each chunk of kChunk requests
  // once taken, so the records assembled from them replace the ledger's memory instead of adding to it
  // (each chunk is one allocation large enough for the allocator to give back at once). The ledger is
  // empty afterwards; no pointer to a request may be used again.
  template <class F>
  void drain(F take) {
    std::size_t left = size_;
    for (auto& chunk : chunks_) {
      const std::size_t n = std::min(left, kChunk);
      for (std::size_t k = 0; k < n; ++k) take(chunk[k]);
      left -= n;
      chunk.reset();
    }
    chunks_.clear();
    size_ = 0;
  }

 private:
  // Requests live in chunks of kChunk (stable addresses; ~1.2 MB each at 288 bytes a request), each
  // mapped from the system on its own and unmapped when freed, so a drained chunk leaves the process
  // at once (a deque's node per request, or a malloc'd chunk once glibc's threshold has risen, stays
  // in the heap after free: the assembled records then came on top, ~550 instead of ~330 bytes per
  // request at the peak; bench/memory_budget.py).
  static constexpr std::size_t kChunk = 4096;
  struct Unmap {
    void operator()(SimRequest* chunk) const;
  };
  double arrivals_end_s_, hard_end_s_;
  long long unfinished_ = 0;
  simgrid::s4u::SemaphorePtr all_done_;
  std::vector<std::unique_ptr<SimRequest[], Unmap>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace coinfer::sim
