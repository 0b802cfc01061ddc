#pragma once
// The real server's work (a room of hw/server_context.hpp): the server loop (core/server_loop.hpp,
// the simulator's too: batching, dropping past deadlines, forwarding sealed batches to idle helpers)
// driven on run time, its worker threads running batches with real models (hw/batch_runner.hpp), the
// batch timer, and the work forwarded to helpers until it returns. Owns: the loop, the batches started
// for the workers, the drops to answer, the forwarded work, the helpers' release and this server's
// batching now. Torch stays in the .cpp (BatchRunner).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/batch_spec.hpp"
#include "core/model_key.hpp"
#include "core/server_loop.hpp"
#include "core/server_request_rules.hpp"
#include "core/server_timing.hpp"
#include "hw/pending_request.hpp"
#include "hw/server_context.hpp"

namespace coinfer::hw {

class BatchRunner;

class ServerWork final : public ServerActions<Pending> {
 public:
  ServerWork(ServerContext& ctx, const ServerRooms& rooms);
  ~ServerWork() override;

  // --- the lock held ---
  // A request received whole (a device's upload, or at a cloud an edge's part): queued in its batch group.
  void take(const ServerLock::Held& held, Pending p);
  // Drops the queued requests whose result goes to `origin` (gone); returns how many.
  size_t remove_of(const ServerLock::Held& held, const std::shared_ptr<Handler>& origin);
  // Device h's connection ended: the work forwarded to it as a helper fails to its origins, and the
  // loop no longer counts it busy.
  void helper_gone(const ServerLock::Held& held, const Handler& h);
  // This server's helpers (none once released) and its batching (logged when it changes).
  void set_helpers(const ServerLock::Held& held, const std::vector<int>& helpers);
  void set_batching(const ServerLock::Held& held, const BatchSpec& spec);
  // Once the arrivals ended and no device that creates inputs is here (DeviceSessions says), the loop
  // forwards to no helper any more; returns the helpers it had.
  std::vector<int> release_helpers(const ServerLock::Held& held);
  bool helpers_released(const ServerLock::Held&) const { return helpers_released_; }
  int queued(const ServerLock::Held&) const { return loop_->queued(); }
  int busy_workers(const ServerLock::Held&) const { return loop_->busy_workers(); }

  // --- the lock not held ---
  // Helper `helper`'s result for a task forwarded to it: to the origin, with the server's stamps
  // (throws ProtocolError for a task not forwarded to it). Blocks sending.
  void helper_result(const std::shared_ptr<Handler>& helper, const Frame& f);
  // Threads: a worker (runs batches until stopped) and the batch timer (seals batches whose window ended).
  void worker_loop(int worker);
  void batch_timer_loop();
  void wake_all();  // at shutdown

 private:
  // Requests forwarded to a helper, awaiting its result (keyed by the helper's task id). A batch
  // forwarded whole is one task per request; the helper is free again when the last one returns.
  struct Forwarded {
    std::shared_ptr<Handler> origin;
    std::uint64_t origin_task = 0;
    double t_received = 0, t_queued = 0;
    std::string helper;
    int helper_index = -1;
    std::uint64_t batch = 0;
  };

  // The loop's calls (core/server_loop.hpp ServerActions) come only from inside the loop, which this
  // room enters only with the lock held: `in_loop_` is that Held while it does.
  template <class F>
  auto enter(const ServerLock::Held& held, F f) {
    struct Leave {
      const ServerLock::Held*& slot;
      ~Leave() { slot = nullptr; }
    } leave{in_loop_};
    in_loop_ = &held;
    return f(*loop_);
  }
  int priority(const Pending& p) const override { return rules_->priority(facts(p)); }
  double drop_after_s(const Pending& p) const override { return rules_->drop_after_s(facts(p)); }
  double seconds_alone(const Pending& p) const override { return rules_->seconds_alone(facts(p)); }
  int batch_limit(const Pending& p) const override { return rules_->batch_limit(facts(p)); }
  double expected_seconds(const std::vector<Pending>& batch) const override;
  void drop(Pending p, double now_s) override;
  double helper_seconds(int helper, const std::vector<Pending>& batch) const override;
  bool helper_available(int helper) const override;
  void start_batch(std::uint64_t token, std::vector<Pending> batch) override;
  void forward(int helper_index, std::vector<Pending> batch) override;
  ServerRequestFacts facts(const Pending& p) const { return request_facts(p, ctx_.opt.epoch_unix_s); }
  void run_batch(std::vector<Pending>& batch, BatchRunner& runner);

  ServerContext& ctx_;
  const ServerRooms& rooms_;
  // This server's LUTs for its devices' models and its helpers' (core/server_timing.hpp, the simulator's
  // too); the testbed runs each device's model as named (binding 0). Fixed.
  std::unique_ptr<ServerTiming> timing_;
  std::unique_ptr<ServerRequestRules> rules_;  // on timing_

  // Guarded by the lock.
  std::unique_ptr<ServerLoop<Pending>> loop_;
  const ServerLock::Held* in_loop_ = nullptr;
  BatchGroupIds group_ids_;
  std::deque<std::pair<std::uint64_t, std::vector<Pending>>> to_run_;  // started by the loop, for the workers
  // Requests the loop dropped past their deadline, with the result that says so; a worker sends them.
  std::deque<std::pair<Pending, ResultHeader>> dropped_replies_;
  std::map<std::uint64_t, Forwarded> forwarded_;
  std::map<std::uint64_t, int> forwarded_batch_left_;  // batch id -> requests not yet returned
  std::uint64_t next_forward_id_ = 1, next_forward_batch_ = 1;
  // Set once the arrivals have ended and no device of this server that creates inputs is still
  // connected: no work can come for helpers any more, so they are told they are not helpers and go.
  bool helpers_released_ = false;
  BatchSpec batching_now_;
  std::condition_variable work_cv_, timer_cv_;
};

}  // namespace coinfer::hw
