// The real device runtime's memory limit (hw/tracking_allocator.hpp): LibTorch's CPU tensors may not
// pass it; the refusal says how much was needed and what the limit is, and nothing is leaked.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/device_hardware.hpp"
#include "hw/tracking_allocator.hpp"

using namespace coinfer;
using namespace coinfer::hw;

TEST(TrackingAllocator, ATensorPastTheLimitIsRefusedWithTheNumbers) {
  TrackingAllocator::install();
  TrackingAllocator& a = TrackingAllocator::instance();
  const size_t before = a.current();
  a.set_limit(before + 4'000'000);  // 4 MB of tensors beyond what exists
  {
    torch::Tensor ok = torch::zeros({250'000});  // 1 MB of floats: fits
    EXPECT_EQ(a.current(), before + 1'000'000);
    try {
      torch::Tensor too_big = torch::zeros({1'000'000});  // 4 MB more: 5 MB > 4 MB
      ADD_FAILURE() << "allocated past the limit";
    } catch (const TensorMemoryExhausted& e) {
      EXPECT_EQ(e.need, before + 5'000'000);
      EXPECT_EQ(e.have, before + 4'000'000);
    }
    EXPECT_EQ(a.current(), before + 1'000'000);  // the refused block is not counted
  }
  EXPECT_EQ(a.current(), before);
  a.set_limit(0);
  torch::Tensor big = torch::zeros({1'000'000});  // no limit any more
  EXPECT_EQ(out_of_memory_reason("pi", "cpu", 1012e6, 1000e6), "out of memory on pi:cpu (needs 1012.0 MB, has 1000.0 MB)");
}
