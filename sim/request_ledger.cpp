#include "sim/request_ledger.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <new>

#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

namespace {
constexpr std::size_t kChunkBytes(std::size_t requests) { return requests * sizeof(SimRequest); }
// The fewest requests that fill whole pages, and `asked` rounded up to a multiple of them.
std::size_t chunk_of(std::size_t asked) {
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t page_bytes = page > 0 ? static_cast<std::size_t>(page) : 4096;
  const std::size_t step = page_bytes / std::gcd(sizeof(SimRequest), page_bytes);
  return std::max(step, (asked + step - 1) / step * step);
}
}  // namespace

RequestLedger::RequestLedger(double arrivals_end_s, double hard_end_s, std::size_t chunk)
    : kChunk(chunk_of(chunk)), arrivals_end_s_(arrivals_end_s), hard_end_s_(hard_end_s), all_done_(sg4::Semaphore::create(0)) {
  const std::size_t chunks = (static_cast<std::size_t>(limits::kMaxRequests) + kChunk - 1) / kChunk;
  reserved_bytes_ = chunks * kChunkBytes(kChunk);
  // Address space only: nothing is committed (or counted against the system's memory) until a chunk
  // is made accessible.
  void* at = mmap(nullptr, reserved_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (at == MAP_FAILED) throw std::bad_alloc();
  base_ = static_cast<SimRequest*>(at);
  chunks_.reserve(chunks);
}

RequestLedger::~RequestLedger() {
  for (std::size_t c = released_chunks_; c < committed_chunks_; ++c)
    for (std::size_t k = 0; k < kChunk; ++k) base_[c * kChunk + k].~SimRequest();
  munmap(base_, reserved_bytes_);
}

SimRequest& RequestLedger::create(int device) {
  if (size_ % kChunk == 0) {
    if (kChunkBytes((committed_chunks_ + 1) * kChunk) > reserved_bytes_) throw std::bad_alloc();  // past kMaxRequests
    SimRequest* chunk = base_ + committed_chunks_ * kChunk;
    if (mprotect(chunk, kChunkBytes(kChunk), PROT_READ | PROT_WRITE) != 0) throw std::bad_alloc();
    for (std::size_t k = 0; k < kChunk; ++k) new (chunk + k) SimRequest();
    chunks_.emplace_back();
    ++committed_chunks_;
  }
  SimRequest& r = base_[size_];
  r.rec.id = static_cast<std::int64_t>(size_++);
  r.rec.device = device;
  r.rec.t_created = sg4::Engine::get_clock();
  ++chunks_.back().unfinished;
  ++unfinished_;
  // The first request of a chunk makes the one before it full: it may be releasable now.
  if (size_ % kChunk == 1 && committed_chunks_ >= 2 && releasable(committed_chunks_ - 2)) wake_releaser();
  return r;
}

void RequestLedger::finish(SimRequest& r) {
  r.finished = true;
  --unfinished_;
  ChunkState& c = chunks_[static_cast<std::size_t>(r.rec.id) / kChunk];
  --c.unfinished;
  if (r.left_device && r.rec.status != RequestRecord::Status::ok && !r.dropped_at_server) c.held = true;
  if (releasable(static_cast<std::size_t>(r.rec.id) / kChunk)) wake_releaser();
  if (unfinished_ == 0 && sg4::Engine::get_clock() >= arrivals_end_s_) all_done_->release();
}

bool RequestLedger::releasable(std::size_t c) const {
  return release_ && c == released_chunks_ && c + 1 < committed_chunks_ && chunks_[c].unfinished == 0 && !chunks_[c].held;
}

void RequestLedger::wake_releaser() {
  if (wake_pending_) return;
  wake_pending_ = true;
  release_wake_->release();
}

void RequestLedger::release_as_finished(sg4::Host* host, Release release) {
  release_ = std::move(release);
  release_wake_ = sg4::Semaphore::create(0);
  add_actor("ledger", host, [this] {
    while (true) {
      release_wake_->acquire();
      wake_pending_ = false;
      release_ready();
    }
  })->daemonize();
}

void RequestLedger::release_ready() {
  while (releasable(released_chunks_)) {
    release_(base_ + released_chunks_ * kChunk, kChunk);
    give_back(released_chunks_);
    ++released_chunks_;
  }
}

void RequestLedger::give_back(std::size_t c) {
  SimRequest* chunk = base_ + c * kChunk;
  for (std::size_t k = 0; k < kChunk; ++k) chunk[k].~SimRequest();
  // The pages go back to the system; the range stays reserved and inaccessible.
  madvise(chunk, kChunkBytes(kChunk), MADV_DONTNEED);
  mprotect(chunk, kChunkBytes(kChunk), PROT_NONE);
}

}  // namespace coinfer::sim
