#pragma once
// The real device's work (a room of hw/device_context.hpp): the device loop (core/device_loop.hpp
// through hw/device_requests.hpp: requests, stage queues, the strategy) driven by its threads — the
// arrivals clock, one compute thread per processor (its own stages, and on processor 0 the batches
// forwarded to it as a helper), the upload thread (with the copies a handover made the server ask for)
// — and what the server's answers do to its requests. Owns: the requests, the helper role and the
// helper batches' models, the copies to send, whether the arrivals are over, the work threads' CPU cap.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/strategy.hpp"
#include "hw/batch_runner.hpp"
#include "hw/device_context.hpp"
#include "hw/device_requests.hpp"
#include "hw/protocol.hpp"

namespace coinfer::hw {

class CpuCap;

class DeviceWork {
 public:
  // Open-loop times come from the simulator's own generator for (seed, device): a testbed run replays
  // the simulated arrivals exactly. `router_costs`: the data_parallel router's (core/data_parallel_router.hpp).
  DeviceWork(DeviceContext& ctx, const DeviceRooms& rooms, const DataParallelCosts& router_costs);
  ~DeviceWork();

  // --- the lock not held ---
  // Caps the work threads (DeviceOptions::work_cpu_cores) before any starts; throws, saying why.
  void cap_threads();
  int processors() const { return rq_->processors(); }
  // Threads: the loop's clock, processor `proc`'s compute, the uploads.
  void arrivals_loop();
  void compute_loop(int proc);
  void upload_loop();
  // The server asks for an upload's bytes again (a handover caught them; mobility.mid_transfer: resend).
  void on_resend_request(const Frame& f);
  // True when the device's run is over: arrivals ended and nothing is unfinished, or the drain ran out.
  bool done(double hard_end);

  // --- the lock held ---
  // After every event: the loop creates what is due and starts idle stages; the threads wake.
  void wake(const DeviceLock::Held& held);
  const Strategy& strategy(const DeviceLock::Held&) const { return rq_->loop().strategy(); }
  // The server's scheduling message: its strategy (logged when it changes) and helper role.
  void assign(const DeviceLock::Held& held, const Strategy& s, bool helper);
  // A batch forwarded to this helper, complete: runs on processor 0 with its origin's model.
  void add_helper_batch(const DeviceLock::Held& held, int split, int origin, std::vector<HelperPart> parts);
  // A handover caught request `id`'s result: counted as a resend. False when the request is over.
  bool count_resend(const DeviceLock::Held& held, std::int64_t id);
  // Request `id` ends with this result (`frame_bytes` on the wire): the server's stamps recorded, then
  // done or failed (`handover_failed`: why the result, though it came, fails).
  void complete(const DeviceLock::Held& held, std::int64_t id, std::size_t frame_bytes, const ResultHeader& h, const std::string& handover_failed);
  int server(const DeviceLock::Held&) const { return rq_->loop().server(); }
  // The server request `id` went to (its record's; its server now when it has none yet).
  int server_of(const DeviceLock::Held&, std::int64_t id);
  // Its server is `server` now (a move or a redirect): up or down as the scenario says now.
  void set_server(const DeviceLock::Held& held, int server);
  // Registered with its server: the loop joins at the first registration (inputs start), a server
  // back after a failure is up again.
  void registered(const DeviceLock::Held& held);
  bool ever_registered(const DeviceLock::Held&) const { return ever_connected_; }
  // The connection to `server` is gone (`current`: its server now): see DeviceServerLink::lose_connection.
  void lose(const DeviceLock::Held& held, int server, bool current);
  bool waiting_on(const DeviceLock::Held&, int server) const;  // a request that went to `server` is unfinished
  DeviceStatus status(const DeviceLock::Held&) const;          // for a heartbeat (its bandwidth, queue, counts)
  // The run ends: whatever is unfinished fails (`fatal`, else the drain's text); the threads end.
  void finish(const DeviceLock::Held& held, const std::string& fatal);
  long long failed(const DeviceLock::Held&) const { return rq_->loop().failed(); }

 private:
  void join_work_cap(const char* what);
  void run_helper_batch(const HelperBatch& job, const ModelSpec& origin_model);
  void send_copy(DeviceLock::Held& held);
  std::string failure_reason(double t, int server) const { return ctx_.scheduled_failure_reason(t, server); }

  DeviceContext& ctx_;
  const DeviceRooms& rooms_;
  std::unique_ptr<CpuCap> work_cap_;
  std::mutex work_threads_m_;  // the work threads file (DeviceOptions::work_threads_file)
  BatchRunner helper_runner_;  // compute thread 0 only

  // Guarded by the lock.
  std::unique_ptr<DeviceRequests> rq_;
  std::condition_variable cv_;  // any state change
  bool helper_ = false;
  bool arrivals_over_ = false;
  bool ever_connected_ = false;
  // Uploads the server asked for again (a handover caught them): sent before any new upload, each not
  // before its handover ends, as the simulator holds the uplink for a resend.
  std::deque<std::pair<std::uint64_t, ResendRequest>> copies_to_send_;
  std::int64_t next_help_batch_ = 0;
  std::map<std::int64_t, ModelSpec> helper_specs_;  // helper batch -> its origin's model
};

}  // namespace coinfer::hw
