#pragma once
// RingQueue<T>: a FIFO that owns no memory until its first push and then only a power-of-two array of
// the most elements it has held at once. What each simulated device keeps a few of (requests waiting
// for a processor, for the upload link, messages waiting to be received): std::deque allocates a
// 512-byte block and its map even when empty, ~600 bytes per queue and ~4 KB per device with its seven
// queues; most of them stay empty or hold one or two elements (bench/memory_budget.py).
// Not thread-safe; no call blocks. Iteration runs front to back.
#include <cstddef>
#include <utility>
#include <vector>

namespace coinfer {

template <class T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  void push_back(T value) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = std::move(value);
    ++size_;
  }
  void pop_front() {
    buf_[head_] = T{};  // let go of what it held
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  void clear() {
    while (!empty()) pop_front();
    head_ = 0;
  }
  // Removes every element equal to `value`, the others keeping their order.
  void erase_value(const T& value) {
    std::size_t kept = 0;
    for (std::size_t k = 0; k < size_; ++k) {
      T& x = at(k);
      if (x == value) continue;
      if (kept != k) at(kept) = std::move(x);
      ++kept;
    }
    for (std::size_t k = kept; k < size_; ++k) at(k) = T{};
    size_ = kept;
  }
  bool contains(const T& value) const {
    for (std::size_t k = 0; k < size_; ++k)
      if (at(k) == value) return true;
    return false;
  }

  class const_iterator {
   public:
    const_iterator(const RingQueue* q, std::size_t k) : q_(q), k_(k) {}
    const T& operator*() const { return q_->at(k_); }
    const_iterator& operator++() {
      ++k_;
      return *this;
    }
    bool operator!=(const const_iterator& o) const { return k_ != o.k_; }
    bool operator==(const const_iterator& o) const { return k_ == o.k_; }

   private:
    const RingQueue* q_;
    std::size_t k_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  T& at(std::size_t k) { return buf_[(head_ + k) & (buf_.size() - 1)]; }
  const T& at(std::size_t k) const { return buf_[(head_ + k) & (buf_.size() - 1)]; }
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 1 : 2 * buf_.size());
    for (std::size_t k = 0; k < size_; ++k) bigger[k] = std::move(at(k));
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<T> buf_;  // capacity: buf_.size(), 0 or a power of two
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace coinfer
