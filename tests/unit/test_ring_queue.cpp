// RingQueue (core/ring_queue.hpp): a FIFO that holds no memory until used, checked against
// std::deque over a random sequence of operations, and its wrap-around and erase by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include "core/ring_queue.hpp"

namespace coinfer {
namespace {

std::vector<int> contents(const RingQueue<int>& q) {
  std::vector<int> out;
  for (int x : q) out.push_back(x);
  return out;
}

TEST(RingQueue, WrapsAroundAndGrowsInOrder) {
  RingQueue<int> q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.begin(), q.end());
  // Capacity 1, 2, 4: push 1 2 3, pop 1, push 4 5: the array of 4 now holds 2 3 4 5 with its head at
  // index 1 and 5 wrapped to index 0; pushing 6 regrows it to 8 in order 2 3 4 5 6.
  q.push_back(1);
  q.push_back(2);
  q.push_back(3);
  q.pop_front();
  q.push_back(4);
  q.push_back(5);
  EXPECT_EQ(contents(q), (std::vector<int>{2, 3, 4, 5}));
  q.push_back(6);
  EXPECT_EQ(contents(q), (std::vector<int>{2, 3, 4, 5, 6}));
  EXPECT_EQ(q.front(), 2);
  EXPECT_EQ(q.size(), 5u);
}

TEST(RingQueue, EraseValueKeepsTheOthersInOrder) {
  RingQueue<int> q;
  for (int x : {7, 1, 7, 2, 7}) q.push_back(x);
  q.pop_front();  // 1 7 2 7, head moved off index 0
  q.erase_value(7);
  EXPECT_EQ(contents(q), (std::vector<int>{1, 2}));
  EXPECT_TRUE(q.contains(2));
  EXPECT_FALSE(q.contains(7));
  q.push_back(3);
  EXPECT_EQ(contents(q), (std::vector<int>{1, 2, 3}));
  q.clear();
  EXPECT_TRUE(q.empty());
  q.push_back(4);
  EXPECT_EQ(contents(q), (std::vector<int>{4}));
}

TEST(RingQueue, BehavesAsADequeOverRandomOperations) {
  std::mt19937 rng(12345);
  RingQueue<int> q;
  std::deque<int> ref;
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      const int v = static_cast<int>(rng() % 8);
      q.push_back(v);
      ref.push_back(v);
    } else if (op < 8) {
      if (!ref.empty()) {
        ASSERT_EQ(q.front(), ref.front());
        q.pop_front();
        ref.pop_front();
      }
    } else if (op == 8) {
      const int v = static_cast<int>(rng() % 8);
      q.erase_value(v);
      ref.erase(std::remove(ref.begin(), ref.end(), v), ref.end());
    } else if (rng() % 50 == 0) {
      q.clear();
      ref.clear();
    }
    ASSERT_EQ(q.size(), ref.size());
    ASSERT_EQ(contents(q), std::vector<int>(ref.begin(), ref.end())) << "step " << step;
  }
}

}  // namespace
}  // namespace coinfer
