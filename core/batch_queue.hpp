#pragma once
// The edge server's batching rule, engine-free: requests in, batches out. The simulator's server
// actors (simulated time) and the real server's worker threads (run time) drive the same object.
//
// The rule (ACE-GNN Sec. III-E and Fig. 8, "batch processing with a time window"):
//   - only requests of one batch group (same model, dataset and split: BatchGroupKey) batch together;
//   - the first request of a group opens a batch whose window ends `window_ms` later;
//   - the batch closes (is sealed) when its window ends or when it holds `max_size` requests,
//     whichever comes first; when the spec is not windowed (window 0 or max_size 1) every request
//     is sealed alone at once;
//   - sealed batches wait for a worker in the order they were sealed (FIFO); a free worker takes
//     the one whose requests' highest priority (devices[].workload.priority) is highest, the oldest
//     among equals (all priorities 0: the oldest); helper forwarding (core/helper_forwarding.hpp) may
//     take the newest instead.
// A sealed batch never grows: a request arriving while every worker is busy opens the next batch.
// The spec may change during a run (a scheme's batching, core/scheme.hpp): set_spec applies the new
// window and size to the batches still open as if they had been opened under it (each window ends the
// new window_ms after the batch opened; a batch already as large as the new max_size, or every open
// batch when the new spec is not windowed, is sealed at once) and to every batch opened later.
// This is the GPU-server rule of Fig. 8: the window bounds how long the first request waits for
// company, not how long it waits for a worker. (Letting a batch grow until a worker frees would
// make batch sizes depend on load in a way no LUT entry was measured for.)
//
// Times are seconds on the caller's clock; GroupId is any ordered id (core/model_key.hpp's
// BatchGroupIds gives ints). Not thread-safe: the caller serialises access.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <vector>

#include "core/scenario.hpp"

namespace coinfer {

template <class Item, class GroupId = int>
class BatchQueue {
 public:
  using Batch = std::vector<Item>;
  struct Added {
    bool opened = false;  // the item opened a new batch (a window started)
    bool sealed = false;  // the item's batch was sealed (full, or not windowed)
  };

  explicit BatchQueue(BatchSpec spec) : spec_(spec) {}

  // An item fully received at now_s joins the open batch of its group. `limit` > 0: the batch this
  // item opens holds at most that many (a server policy's size for the group, core/dynamic_batching.hpp),
  // never more than the spec's max_size; 0: the spec's.
  Added add(Item item, const GroupId& group, double now_s, int limit = 0) {
    Added a;
    auto it = open_.find(group);
    if (it == open_.end()) {
      it = open_.emplace(group, Open{now_s, now_s + spec_.window_ms * 1e-3, next_order_++, limit, {}}).first;
      a.opened = true;
    }
    it->second.members.push_back(std::move(item));
    if (!spec_.windowed() || static_cast<int>(it->second.members.size()) >= size_of(it->second)) {
      ready_.push_back(std::move(it->second.members));
      open_.erase(it);
      a.sealed = true;
    }
    return a;
  }

  // The rule from now_s on (see the header). Returns how many open batches it sealed; the caller
  // dispatches when > 0 and re-arms its timer (a window may now end earlier than before).
  int set_spec(BatchSpec spec, double now_s) {
    spec_ = spec;
    std::vector<std::pair<std::uint64_t, GroupId>> sealed;
    for (auto& [group, o] : open_) {
      o.deadline_s = o.opened_s + spec_.window_ms * 1e-3;
      if (!spec_.windowed() || static_cast<int>(o.members.size()) >= size_of(o)) sealed.emplace_back(o.order, group);
    }
    std::sort(sealed.begin(), sealed.end());
    for (const auto& [order, group] : sealed) {
      auto it = open_.find(group);
      ready_.push_back(std::move(it->second.members));
      open_.erase(it);
    }
    return static_cast<int>(sealed.size()) + seal_due(now_s);
  }
  const BatchSpec& spec() const { return spec_; }

  // Seals every open batch whose window ended at or before now_s, in the order they opened.
  // Returns how many were sealed.
  int seal_due(double now_s) {
    std::vector<std::pair<std::uint64_t, GroupId>> due;
    for (const auto& [group, o] : open_)
      if (o.deadline_s <= now_s) due.emplace_back(o.order, group);
    std::sort(due.begin(), due.end());
    for (const auto& [order, group] : due) {
      auto it = open_.find(group);
      ready_.push_back(std::move(it->second.members));
      open_.erase(it);
    }
    return static_cast<int>(due.size());
  }

  // The earliest window end of an open batch; +infinity when no batch is open.
  double next_deadline_s() const {
    double t = std::numeric_limits<double>::infinity();
    for (const auto& kv : open_) t = std::min(t, kv.second.deadline_s);
    return t;
  }

  bool has_ready() const { return !ready_.empty(); }
  // Sealed batches waiting for a worker, oldest first.
  const std::deque<Batch>& ready() const { return ready_; }
  // The oldest sealed batch (a free worker's next). Precondition: has_ready().
  Batch take_oldest() {
    Batch b = std::move(ready_.front());
    ready_.pop_front();
    return b;
  }
  // The sealed batch a free worker takes: the highest priority(item) over its items, the oldest among
  // equals. Precondition: has_ready().
  template <class Priority>
  Batch take_next(Priority priority) {
    size_t best = 0;
    long long best_p = std::numeric_limits<long long>::min();
    for (size_t i = 0; i < ready_.size(); ++i) {
      long long p = std::numeric_limits<long long>::min();
      for (const Item& item : ready_[i]) p = std::max<long long>(p, priority(item));
      if (p > best_p) best_p = p, best = i;
    }
    Batch b = std::move(ready_[best]);
    ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(best));
    return b;
  }
  // The newest sealed batch (what forwarding to a helper takes). Precondition: has_ready().
  Batch take_newest() {
    Batch b = std::move(ready_.back());
    ready_.pop_back();
    return b;
  }

  // Requests in open and sealed batches.
  int queued() const {
    size_t n = 0;
    for (const auto& kv : open_) n += kv.second.members.size();
    for (const auto& b : ready_) n += b.size();
    return static_cast<int>(n);
  }

  // Removes the items for which pred(item) holds from open and sealed batches (their origin went
  // away); batches left empty disappear. Returns how many were removed.
  template <class Pred>
  size_t remove_if(Pred pred) {
    size_t removed = 0;
    auto prune = [&](Batch& b) {
      const size_t before = b.size();
      b.erase(std::remove_if(b.begin(), b.end(), pred), b.end());
      removed += before - b.size();
    };
    for (auto it = open_.begin(); it != open_.end();) {
      prune(it->second.members);
      it = it->second.members.empty() ? open_.erase(it) : std::next(it);
    }
    for (auto& b : ready_) prune(b);
    ready_.erase(std::remove_if(ready_.begin(), ready_.end(), [](const Batch& b) { return b.empty(); }), ready_.end());
    return removed;
  }

 private:
  struct Open {
    double opened_s;
    double deadline_s;
    std::uint64_t order;
    int limit;  // > 0: at most this many (and the spec's max_size)
    Batch members;
  };
  int size_of(const Open& o) const { return o.limit > 0 ? std::min(o.limit, spec_.max_size) : spec_.max_size; }
  BatchSpec spec_;
  std::map<GroupId, Open> open_;
  std::deque<Batch> ready_;
  std::uint64_t next_order_ = 0;
};

}  // namespace coinfer
