#pragma once
// Counts the bytes LibTorch's CPU allocator hands out, so that the profiler can report the peak tensor
// memory of running a stage range. Installed process-wide while profiling (c10::SetCPUAllocator).
#include <c10/core/Allocator.h>

#include <atomic>
#include <cstddef>

namespace coinfer::hw {

class TrackingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) const override;
  c10::DeleterFnPtr raw_deleter() const override { return &TrackingAllocator::free; }
  // Restarts the peak at the current allocation.
  void reset_peak() { peak_.store(current_.load()); }
  size_t current() const { return current_.load(); }
  size_t peak() const { return peak_.load(); }
  static TrackingAllocator& instance();
  // Makes this the CPU allocator for the rest of the process.
  static void install();

 private:
  static void free(void* ctx);  // ctx: the data pointer allocate() returned
  mutable std::atomic<size_t> current_{0}, peak_{0};
};

}  // namespace coinfer::hw
