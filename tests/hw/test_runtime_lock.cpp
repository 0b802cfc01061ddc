// The real processes' one lock as a type (hw/runtime_lock.hpp): a Held exists only while the lock is
// held; `without` lets another thread in while it runs and takes the lock back, also when it throws.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "hw/runtime_lock.hpp"

using coinfer::hw::RuntimeLock;

static_assert(!std::is_copy_constructible_v<RuntimeLock::Held>);
static_assert(!std::is_default_constructible_v<RuntimeLock::Held>);

namespace {
// Waits up to 10 s for `flag` (a thread taking the lock sets it): false when it never came.
bool came(const std::atomic<bool>& flag) {
  for (int i = 0; i < 1000 && !flag; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return flag;
}
}  // namespace

TEST(RuntimeLock, WithoutLetsAnotherThreadInAndTakesTheLockBackEvenWhenItThrows) {
  RuntimeLock lock;
  auto held = lock.hold();
  // Inside without(): another thread takes the lock (a lock not released would keep it waiting).
  std::atomic<bool> inside{false};
  std::thread first([&] {
    auto h = lock.hold();
    inside = true;
  });
  held.without([&] { EXPECT_TRUE(came(inside)) << "the lock was not released inside without()"; });
  first.join();
  // After a throw from without(): held again, so a new thread waits until it is released. (A wait of
  // 100 ms can only miss a fault here, never invent one.)
  EXPECT_THROW(held.without([] { throw std::runtime_error("boom"); }), std::runtime_error);
  std::atomic<bool> after{false};
  std::thread second([&] {
    auto h = lock.hold();
    after = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(after) << "the lock was not taken back after a throw";
  held.without([&] { second.join(); });
  EXPECT_TRUE(after);
}
