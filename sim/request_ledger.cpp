#include "sim/request_ledger.hpp"

#include <sys/mman.h>

#include <new>

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

SimRequest& RequestLedger::create(int device) {
  if (size_ % kChunk == 0) {
    void* at = mmap(nullptr, kChunk * sizeof(SimRequest), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) throw std::bad_alloc();
    auto* chunk = static_cast<SimRequest*>(at);
    for (std::size_t k = 0; k < kChunk; ++k) new (chunk + k) SimRequest();
    chunks_.emplace_back(chunk);
  }
  SimRequest& r = chunks_.back()[size_ % kChunk];
  r.rec.id = static_cast<std::int64_t>(size_++);
  r.rec.device = device;
  r.rec.t_created = sg4::Engine::get_clock();
  ++unfinished_;
  return r;
}

void RequestLedger::Unmap::operator()(SimRequest* chunk) const {
  for (std::size_t k = 0; k < kChunk; ++k) chunk[k].~SimRequest();
  munmap(chunk, kChunk * sizeof(SimRequest));
}

void RequestLedger::finish(SimRequest& r) {
  r.finished = true;
  --unfinished_;
  if (unfinished_ == 0 && sg4::Engine::get_clock() >= arrivals_end_s_) all_done_->release();
}

}  // namespace coinfer::sim
