#include "hw/tracking_allocator.hpp"

#include <cstring>

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <string>

namespace coinfer::hw {

namespace {
// Each block is prefixed by its size so that free() can account for it.
constexpr size_t kHeader = 64;  // keeps the data 64-byte aligned
}  // namespace

TrackingAllocator& TrackingAllocator::instance() {
  static TrackingAllocator a;
  return a;
}

void TrackingAllocator::install() { c10::SetCPUAllocator(&instance(), /*priority=*/100); }

TensorMemoryExhausted::TensorMemoryExhausted(size_t need_bytes, size_t have_bytes)
    : std::runtime_error("tensor memory exhausted: needs " + std::to_string(need_bytes) + " bytes, has " + std::to_string(have_bytes)),
      need(need_bytes),
      have(have_bytes) {}

c10::DataPtr TrackingAllocator::allocate(size_t nbytes) { return static_cast<const TrackingAllocator*>(this)->allocate(nbytes); }

void TrackingAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  if (count > 0) std::memcpy(dest, src, count);
}

c10::DataPtr TrackingAllocator::allocate(size_t nbytes) const {
  const size_t now = current_.fetch_add(nbytes) + nbytes;
  const size_t limit = limit_.load();
  if (limit > 0 && now > limit) {
    current_.fetch_sub(nbytes);
    throw TensorMemoryExhausted(now, limit);
  }
  char* base = static_cast<char*>(c10::alloc_cpu(nbytes + kHeader));
  *reinterpret_cast<size_t*>(base) = nbytes;
  size_t p = peak_.load();
  while (now > p && !peak_.compare_exchange_weak(p, now)) {
  }
  // The context is the data pointer itself: LibTorch's raw_allocate (used by the quantised kernels)
  // requires the two to be equal.
  return {base + kHeader, base + kHeader, &TrackingAllocator::free, c10::Device(c10::DeviceType::CPU)};
}

void TrackingAllocator::free(void* ctx) {
  if (ctx == nullptr) return;
  char* base = static_cast<char*>(ctx) - kHeader;
  instance().current_.fetch_sub(*reinterpret_cast<size_t*>(base));
  c10::free_cpu(base);
}

}  // namespace coinfer::hw
