#pragma once
// One edge server's event loop, engine-free: uploads in, batches and forwarded batches out, written
// once for the simulator (sim/server_actors.cpp, simulated time) and the real server
// (hw/edge_server.cpp, run time). Events in (an upload is queued, a batch window may have ended, a
// batch ended on a worker, a helper finished its batch, the scheme's helpers changed); actions out
// through ServerActions (start a batch on a free worker, forward a batch to a helper). The rules:
//   - batching: core/batch_queue.hpp (ACE-GNN Fig. 8);
//   - after every event, dispatch: first the forwarding rule (core/helper_forwarding.hpp) may move
//     the newest sealed batches to free helpers, then free workers take the sealed batches by priority
//     (ServerActions::priority), oldest first among equals, one batch per worker (a worker is busy from
//     the batch's start to its end);
//   - what forwarding knows of a running batch is its expected end (start + the server's expected
//     seconds for it), in both engines;
//   - deadlines (workload.drop_late): when a worker or a helper takes a batch, its requests that cannot
//     meet their deadline even if run alone now (now + seconds_alone > drop_after_s: the LUT's least
//     time, the result's way back not counted) are dropped (ServerActions::drop) and the rest run as a
//     smaller batch; a batch left empty takes no worker.
// `Item` is the engine's request handle (the simulator's SimRequest*, the real server's queued task).
// Times are seconds on the engine's clock. Not thread-safe (the real server calls it under its
// mutex); never blocks, never advances time.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/batch_queue.hpp"
#include "core/helper_forwarding.hpp"
#include "core/scenario.hpp"

namespace coinfer {

// Conformance tracing (tests/conformance): while a sink is set, every server loop of the process that
// was given a trace id writes each event it receives and each action it takes as one line, "event
// args @t" or "> action args", with that id (its server index); items as ServerActions::describe
// names them, times as %.17g (they read back exactly). Not for production use: one sink per process,
// no locking.
struct ServerLoopTrace {
  using Sink = std::function<void(int server, const std::string& line)>;
  static void set_sink(Sink sink);
  static bool on() { return on_; }
  static void write(int server, const std::string& line);
  static std::string time(double t_s);  // " @" and t_s as %.17g

 private:
  static inline bool on_ = false;  // read on every event of every loop: inline, no call
};

template <class Item>
class ServerActions {
 public:
  using Batch = std::vector<Item>;
  virtual ~ServerActions() = default;
  // This server's expected seconds for `batch` (its LUT at the batch's size and split).
  virtual double expected_seconds(const Batch& batch) const = 0;
  // Helper `helper`'s expected seconds for `batch` (transfer + compute; +infinity: it cannot run it).
  virtual double helper_seconds(int helper, const Batch& batch) const = 0;
  // Whether `helper` can take work now beyond the loop's own busy flag (the real server: connected
  // and reporting itself idle).
  virtual bool helper_available(int helper) const {
    (void)helper;
    return true;
  }
  // Runs `batch` on a free worker; the engine calls ServerLoop::on_batch_done(token) when it ended.
  virtual void start_batch(std::uint64_t token, Batch batch) = 0;
  // Sends `batch` whole to idle helper `helper`; the engine calls on_helper_done(helper) when the
  // helper finished it (or failed it).
  virtual void forward(int helper, Batch batch) = 0;
  // The largest batch `item`'s batch group may reach here (a server policy's, core/server_timing.hpp
  // batch_limit); 0: the batching's max_size.
  virtual int batch_limit(const Item& item) const {
    (void)item;
    return 0;
  }
  // `item`'s deadline (engine clock, s): its creation plus its device's WorkloadSpec::drop_after_s()
  // (drop_late with a deadline); +infinity otherwise (never dropped here).
  virtual double drop_after_s(const Item& item) const {
    (void)item;
    return std::numeric_limits<double>::infinity();
  }
  // This server's expected seconds for `item` alone (its LUT at batch 1): the least it still needs.
  virtual double seconds_alone(const Item& item) const {
    (void)item;
    return 0;
  }
  // Gives `item` up: its deadline cannot be met any more (see the header). The engine tells its
  // device (a result that says dropped, no payload).
  virtual void drop(Item item, double now_s) {
    (void)item;
    (void)now_s;
  }
  // The priority of `item`'s device at this server (its devices[].workload.priority).
  virtual int priority(const Item& item) const {
    (void)item;
    return 0;
  }
  // How a trace names `item` (ServerLoopTrace; an engine that is traced overrides it).
  virtual std::string describe(const Item& item) const {
    (void)item;
    return "?";
  }
};

template <class Item>
class ServerLoop {
 public:
  using Batch = std::vector<Item>;
  // `actions` must outlive the loop.
  ServerLoop(BatchSpec batching, int workers, ServerActions<Item>& actions) : queue_(batching), workers_(workers), act_(actions) {}

  // ---- events (each ends with a dispatch) -------------------------------------------------------
  // An upload fully received (and decoded) at now_s joins its batch group (core/model_key.hpp). The
  // result says whether it opened a window (the engine's timer must then wake by next_deadline_s()).
  typename BatchQueue<Item>::Added on_upload(Item item, int group, double now_s) {
    if (tracing()) trace("upload " + act_.describe(item) + " g" + std::to_string(group) + ServerLoopTrace::time(now_s));
    const int limit = act_.batch_limit(item);
    const auto added = queue_.add(std::move(item), group, now_s, limit);
    if (added.sealed) dispatch(now_s);
    return added;
  }
  // The engine's timer: seals the batches whose window ended by now_s.
  void on_timer(double now_s) {
    if (tracing()) trace("timer" + ServerLoopTrace::time(now_s));
    if (queue_.seal_due(now_s) > 0) dispatch(now_s);
  }
  // The batch started with `token` ended on its worker.
  void on_batch_done(std::uint64_t token, double now_s) {
    if (tracing()) trace("done " + std::to_string(token) + ServerLoopTrace::time(now_s));
    const auto it = std::find_if(running_until_s_.begin(), running_until_s_.end(), [&](const auto& r) { return r.first == token; });
    if (it == running_until_s_.end()) return;
    running_until_s_.erase(it);
    --busy_workers_;
    dispatch(now_s);
  }
  // `helper` finished (or failed) the batch forwarded to it.
  void on_helper_done(int helper, double now_s) {
    if (tracing()) trace("helper_done " + std::to_string(helper) + ServerLoopTrace::time(now_s));
    helpers_.helper_done(helper);
    dispatch(now_s);
  }
  // The scheme's helpers for this server (device indices).
  void set_helpers(const std::vector<int>& devices, double now_s) {
    if (tracing()) {
      std::string line = "helpers";
      for (int d : devices) line += " " + std::to_string(d);
      trace(line + ServerLoopTrace::time(now_s));
    }
    helpers_.set_helpers(devices);
    dispatch(now_s);
  }
  // The scheme's batching for this server (core/batch_queue.hpp's set_spec rule). The engine's timer
  // must then wake by next_deadline_s() again: a window may end earlier than it was waiting for.
  void set_batching(BatchSpec spec, double now_s) {
    if (tracing()) trace("batching " + spec.to_string() + ServerLoopTrace::time(now_s));
    queue_.set_spec(spec, now_s);
    dispatch(now_s);
  }
  const BatchSpec& batching() const { return queue_.spec(); }
  // The server failed (core/server_failures.hpp): it forgets its queued work and its running batches
  // (their workers are free when it recovers; the engine stops them and tells no one: the devices fail
  // what the server held). Batches at helpers stay theirs: on_helper_done still frees each helper.
  // Returns how many queued requests it dropped.
  size_t on_failure() {
    if (tracing()) trace("failure");
    const size_t dropped = queue_.remove_if([](const Item&) { return true; });
    running_until_s_.clear();
    busy_workers_ = 0;
    return dropped;
  }
  // Queued work whose origin went away (pred(item) true) leaves the queue. Returns how many left.
  template <class Pred>
  size_t remove_if(Pred pred) {
    return queue_.remove_if(pred);
  }

  // ---- what it looks like now ------------------------------------------------------------------
  double next_deadline_s() const { return queue_.next_deadline_s(); }
  int queued() const { return queue_.queued(); }
  int busy_workers() const { return busy_workers_; }
  int workers() const { return workers_; }
  const HelperForwardPolicy& helpers() const { return helpers_; }
  // Traced as server `server` while ServerLoopTrace has a sink (-1: never).
  void trace_as(int server) { trace_id_ = server; }

 private:
  bool tracing() const { return trace_id_ >= 0 && ServerLoopTrace::on(); }
  void trace(const std::string& line) const { ServerLoopTrace::write(trace_id_, line); }
  std::string names(const Batch& b) const {
    std::string out;
    for (const Item& item : b) out += " " + act_.describe(item);
    return out;
  }

  void dispatch(double now_s) {
    if (helpers_.has_helpers() && queue_.has_ready()) {
      ServerLoad load;
      load.now_s = now_s;
      load.workers = workers_;
      load.busy_workers = busy_workers_;
      for (const auto& kv : running_until_s_) load.running_until_s.push_back(kv.second);
      std::vector<double> ready_s;
      for (const Batch& b : queue_.ready()) ready_s.push_back(act_.expected_seconds(b));
      const auto& ready = queue_.ready();
      const std::vector<int> chosen = helpers_.plan(
          load, ready_s, [&](int helper, size_t i) { return act_.helper_seconds(helper, ready[i]); },
          [&](int helper) { return act_.helper_available(helper); });
      for (int helper : chosen) {
        Batch b = queue_.take_newest();
        drop_late(b, now_s);
        if (b.empty()) {
          helpers_.helper_done(helper);  // nothing left to send: the helper stays free
        } else {
          if (tracing()) trace("> forward " + std::to_string(helper) + names(b));
          act_.forward(helper, std::move(b));
        }
      }
    }
    while (busy_workers_ < workers_ && queue_.has_ready()) {
      Batch b = queue_.take_next([this](const Item& item) { return act_.priority(item); });
      drop_late(b, now_s);
      if (b.empty()) continue;
      const std::uint64_t token = next_token_++;
      running_until_s_.emplace_back(token, now_s + act_.expected_seconds(b));
      ++busy_workers_;
      if (tracing()) trace("> start " + std::to_string(token) + names(b));
      act_.start_batch(token, std::move(b));
    }
  }

  // Drops the requests of `b` that cannot meet their deadline even alone (the rest kept in order).
  void drop_late(Batch& b, double now_s) {
    auto keep = std::stable_partition(b.begin(), b.end(), [&](const Item& item) {
      const double deadline = act_.drop_after_s(item);
      return deadline == std::numeric_limits<double>::infinity() || now_s + act_.seconds_alone(item) <= deadline;
    });
    for (auto it = keep; it != b.end(); ++it) {
      if (tracing()) trace("> drop " + act_.describe(*it));
      act_.drop(std::move(*it), now_s);
    }
    b.erase(keep, b.end());
  }

  BatchQueue<Item> queue_;
  HelperForwardPolicy helpers_;
  int workers_;
  int busy_workers_ = 0;
  std::vector<std::pair<std::uint64_t, double>> running_until_s_;  // (token, expected end) per batch running now (at most `workers`)
  std::uint64_t next_token_ = 0;
  int trace_id_ = -1;
  ServerActions<Item>& act_;
};

}  // namespace coinfer
