#pragma once
// The requests of one simulation run (sim-internal): created by device actors, handed between
// actors by pointer inside mailbox messages, read by the controller after the run. Owned by the
// run; actors hold a pointer to it, valid for the whole Engine::run().
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
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
  bool left_device = false;  // its upload started: a server or a link may hold it from then on (RequestLedger)
  // The stages the server now holding it runs (core/cloud_handoff.hpp server_part; end -1: the model's
  // end when num_stages is -1 and there is no cloud part).
  int server_begin() const { return server_part(device_split, cloud_split, at_cloud, 0).begin; }
  int server_end(int num_stages) const { return server_part(device_split, cloud_split, at_cloud, num_stages).end; }
};

// Requests live in one address range reserved for limits::kMaxRequests of them, committed a chunk at a
// time as requests are created and given back a chunk at a time (pages returned to the system, the
// range left inaccessible: an address is never used twice, so a pointer kept past its request's release
// faults at once instead of reading another request).
//
// Released as the run goes (release_as_finished): a chunk is handed over, in id order, once all its
// requests finished and a later request exists, unless one of them finished without a result after
// leaving its device (failed, or dropped there, while a server or a link may still hold it and write
// its batch's times into it): that chunk, and every later one, then stays until the run's end. A
// request that completed, or that its server dropped, is held by nobody once finished.
class RequestLedger {
 public:
  // What a chunk is handed to: `n` requests in id order, finished; moved from, then destroyed.
  using Release = std::function<void(SimRequest* first, std::size_t n)>;

  // `chunk`: requests per chunk (rounded up so that a chunk is whole pages: a multiple of 128 requests
  // with 4 KiB pages).
  RequestLedger(double arrivals_end_s, double hard_end_s, std::size_t chunk = kDefaultChunk);
  ~RequestLedger();
  static constexpr std::size_t kDefaultChunk = 4096;  // ~1.2 MB at 288 bytes a request
  RequestLedger(const RequestLedger&) = delete;
  RequestLedger& operator=(const RequestLedger&) = delete;
  // A new request of `device`, created now.
  SimRequest& create(int device);
  // False once the run holds limits::kMaxRequests requests: devices stop creating, and the run is
  // refused afterwards (run_simulation throws InputError).
  bool may_create() const { return static_cast<long long>(size_) < limits::kMaxRequests; }
  // Marks a request finished now (its status and failure as the device loop set them) and wakes the
  // controller if it was the last.
  void finish(SimRequest& r);
  // From now on, chunks are handed to `release` as described above, by an actor of the ledger's own on
  // `host` (never from inside a device's or a server's call, which may still hold a request).
  void release_as_finished(simgrid::s4u::Host* host, Release release);
  double arrivals_end_s() const { return arrivals_end_s_; }  // no request is created at or after this time
  double hard_end_s() const { return hard_end_s_; }          // arrivals end + drain: whatever is unfinished then fails
  long long unfinished() const { return unfinished_; }
  // Released when arrivals ended and the last unfinished request finished.
  const simgrid::s4u::SemaphorePtr& all_done() const { return all_done_; }
  // How many requests were created, and the last one (size() > 0; never released: a later request
  // must exist for a chunk to go).
  std::size_t size() const { return size_; }
  const SimRequest& back() const { return base_[size_ - 1]; }
  // Requests handed to release_as_finished's `release` so far (the first released() ids).
  std::size_t released() const { return released_chunks_ * kChunk; }
  // After the run: hands every request not released yet to `take` in id order, giving each chunk's
  // memory back once taken, so the records assembled from them replace the ledger's memory instead of
  // adding to it. The ledger is empty afterwards; no pointer to a request may be used again.
  template <class F>
  void drain(F take) {
    for (std::size_t c = released_chunks_; c < committed_chunks_; ++c) {
      SimRequest* chunk = base_ + c * kChunk;
      const std::size_t n = std::min(kChunk, size_ - c * kChunk);
      for (std::size_t k = 0; k < n; ++k) take(chunk[k]);
      give_back(c);
    }
    released_chunks_ = committed_chunks_;
  }

 private:
  const std::size_t kChunk;
  struct ChunkState {
    std::int32_t unfinished = 0;
    bool held = false;  // a request finished without a result after leaving its device
  };
  bool releasable(std::size_t c) const;
  void wake_releaser();
  void release_ready();
  void give_back(std::size_t c);  // destroys the chunk's requests and returns its pages

  double arrivals_end_s_, hard_end_s_;
  long long unfinished_ = 0;
  simgrid::s4u::SemaphorePtr all_done_;
  SimRequest* base_ = nullptr;  // the reserved range
  std::size_t reserved_bytes_ = 0;
  std::vector<ChunkState> chunks_;
  std::size_t size_ = 0, committed_chunks_ = 0, released_chunks_ = 0;
  Release release_;
  simgrid::s4u::SemaphorePtr release_wake_;
  bool wake_pending_ = false;
};

}  // namespace coinfer::sim
