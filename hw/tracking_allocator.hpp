#pragma once
// Counts the bytes LibTorch's CPU allocator hands out, so that the profiler can report the peak tensor
// memory of running a stage range. Installed process-wide while profiling (c10::SetCPUAllocator).
#include <c10/core/Allocator.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>

namespace coinfer::hw {

// Thrown by TrackingAllocator::allocate when a limit is set and the allocation would pass it: the
// tensors' bytes it would make (need) and the limit (have).
struct TensorMemoryExhausted : std::runtime_error {
  TensorMemoryExhausted(size_t need_bytes, size_t have_bytes);
  size_t need, have;
};

// LibTorch 2.3 made c10::Allocator::allocate non-const and added a pure copy_data (Debian 12 has 1.13,
// Debian 13's CUDA build 2.6, a GPU machine's PyTorch whatever it ships). Both allocate signatures are
// declared, neither marked override: whichever the base class has is overridden, the other is an
// overload; copy_data likewise. (No Torch version header here: this header stays Torch-free.)
class TrackingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) const;                            // LibTorch < 2.3
  c10::DataPtr allocate(size_t nbytes);                                  // LibTorch >= 2.3
  void copy_data(void* dest, const void* src, std::size_t count) const;  // LibTorch >= 2.3: a plain copy
  c10::DeleterFnPtr raw_deleter() const override { return &TrackingAllocator::free; }
  // Restarts the peak at the current allocation.
  void reset_peak() { peak_.store(current_.load()); }
  size_t current() const { return current_.load(); }
  size_t peak() const { return peak_.load(); }
  static TrackingAllocator& instance();
  // Makes this the CPU allocator for the rest of the process.
  static void install();
  // Refuses allocations that would take the tensors' bytes past `bytes` (0: no limit): the real
  // device runtime's memory limit, so that a board with little memory fails a request as the
  // simulator does (scenarios/README.md "Placement"). Counts LibTorch's CPU tensors only.
  void set_limit(size_t bytes) { limit_.store(bytes); }
  size_t limit() const { return limit_.load(); }

 private:
  static void free(void* ctx);  // ctx: the data pointer allocate() returned
  mutable std::atomic<size_t> current_{0}, peak_{0}, limit_{0};
};

}  // namespace coinfer::hw
