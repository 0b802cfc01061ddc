#pragma once
// The one lock of a real runtime's process (the edge server's rooms, hw/server_context.hpp; the device
// runtime's, hw/device_context.hpp), as a type: the state a room guards is reachable only through its
// methods, and each method that reads or writes it takes a `const RuntimeLock::Held&`, which exists
// only while the lock is held. A method without one takes the lock itself when it needs it (and must
// not be called with it held).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace coinfer::hw {

using Seconds = std::chrono::duration<double>;

class RuntimeLock {
 public:
  // Proof that the lock is held, for as long as it lives (not copied, not moved).
  class Held {
   public:
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    // Waits on `cv` at most `seconds` (the lock is released meanwhile and held again on return).
    void wait_for(std::condition_variable& cv, double seconds) { cv.wait_for(lock_, Seconds(seconds)); }
    // Releases the lock for `seconds`, then takes it again (blocks).
    void release_for(double seconds) {
      lock_.unlock();
      std::this_thread::sleep_for(Seconds(seconds));
      lock_.lock();
    }

    // Runs `f` with the lock released, then takes it again (also when `f` throws). `f` must not use
    // this Held: it takes the lock itself where it needs it.
    template <class F>
    decltype(auto) without(F&& f) {
      lock_.unlock();
      struct Relock {
        std::unique_lock<std::mutex>& lock;
        ~Relock() { lock.lock(); }
      } relock{lock_};
      return f();
    }

   private:
    friend class RuntimeLock;
    explicit Held(std::mutex& m) : lock_(m) {}
    std::unique_lock<std::mutex> lock_;
  };
  // Takes the lock (blocks until it is free); released when the Held goes.
  Held hold() { return Held(mutex_); }

 private:
  std::mutex mutex_;
};

}  // namespace coinfer::hw
