#include "hw/server_scheduling.hpp"

#include <algorithm>

#include "core/input_error.hpp"
#include "core/model_key.hpp"
#include "core/text_util.hpp"
#include "hw/coordinator_link.hpp"
#include "hw/peer_servers.hpp"
#include "hw/server_work.hpp"
#include "io/decisions_jsonl.hpp"
#include "sched/scheduler_factory.hpp"

namespace coinfer::hw {

namespace {
// The start decision waits for the scenario's initial devices (hw/registration.hpp).
constexpr double kStartDeadlineS = 30;
constexpr double kRecoverDeadlineS = 10;  // run seconds after a restart (--recovering)
}  // namespace

ServerScheduling::ServerScheduling(ServerContext& ctx, const ServerRooms& rooms) : ctx_(ctx), rooms_(rooms) {
  const Scenario& sc = ctx.sc;
  ModelSpecs specs;
  for (size_t i = 0; i < sc.devices.size(); ++i) specs.emplace(ModelKey{sc.devices[i].model, sc.devices[i].dataset}, ctx.specs[i]);
  estimator_ = make_estimator(sc, ctx.luts, std::move(specs));
  scheduler_ = make_scheduler(sc, *estimator_);
  check_scheduler_size(sc, *estimator_, *scheduler_, scenario_state(sc, 0));
  // Only the coordinating process decides; every process keeps its Rescheduler's view. After a failure,
  // the devices present now make up the first decision, given 10 s to come back.
  Coordinator::Options o;
  o.server_index = ctx.server_index;
  o.coordinate_only = ctx.opt.coordinate_only;
  o.several = ctx.several;
  o.recovering = ctx.opt.recovering;
  o.now_s = ctx.opt.recovering ? std::max(0.0, ctx.now()) : 0;
  o.start_deadline_s = ctx.opt.recovering ? o.now_s + kRecoverDeadlineS : kStartDeadlineS;
  coordination_ = std::make_unique<Coordinator>(sc, *scheduler_, *estimator_, ctx.schedules, o);
  present_.assign(sc.devices.size(), false);
  last_seen_.assign(sc.devices.size(), std::nullopt);
}

void ServerScheduling::open_journal() {
  if (ctx_.opt.decisions_out.empty()) return;
  decisions_.open(ctx_.opt.decisions_out, ctx_.opt.recovering ? std::ios::app : std::ios::trunc);
  if (!decisions_) throw InputError(SourceLocation{ctx_.opt.decisions_out, 0, 0}, "--decisions-out", "cannot write this file");
}

ServerScheduling::~ServerScheduling() = default;

FollowedScheme ServerScheduling::initial_scheme() const {
  FollowedScheme s;
  const Rescheduler& r = coordination_->rescheduler();
  for (size_t i = 0; i < ctx_.sc.devices.size(); ++i) {
    s.strategy.push_back(r.strategy(DeviceIndex(static_cast<int>(i))).to_string());
    s.helper.push_back(r.is_helper(DeviceIndex(static_cast<int>(i))));
    s.server.push_back(r.server(DeviceIndex(static_cast<int>(i))).value);
  }
  return s;
}

// --- observations (the lock held) --------------------------------------------------------------------
void ServerScheduling::registered(const ServerLock::Held& held, int device) {
  if (!ctx_.coordinator) return rooms_.link->report(held, PeerEvent{PeerEvent::Kind::registered, device, 0});
  present_[static_cast<size_t>(device)] = true;
  wake_if(coordination_->registered(device));
}

void ServerScheduling::present(const ServerLock::Held&, int device) {
  if (ctx_.coordinator) present_[static_cast<size_t>(device)] = true;
}

void ServerScheduling::left(const ServerLock::Held& held, int device) {
  if (!ctx_.coordinator) return rooms_.link->report(held, PeerEvent{PeerEvent::Kind::leave, device, 0});
  present_[static_cast<size_t>(device)] = false;
  wake_if(coordination_->left(device));
}

void ServerScheduling::bandwidth(const ServerLock::Held& held, int device, double mbps) {
  if (!ctx_.coordinator) return rooms_.link->bandwidth(held, device, mbps);
  wake_if(coordination_->bandwidth(device, mbps));
}

void ServerScheduling::open_gate(const ServerLock::Held&) {
  if (ctx_.coordinator) wake_if(coordination_->registered(-1));
}

void ServerScheduling::peer_registered(const ServerLock::Held&, int server) {
  if (ctx_.coordinator) wake_if(coordination_->server_registered(server, ctx_.now()));
}

// What this server observes (its devices' last heartbeats, its own queue, its peers' last reports);
// the snapshot itself is the Rescheduler's, the simulator's too.
SystemState ServerScheduling::snapshot(const ServerLock::Held& held) {
  std::vector<std::optional<DeviceObservation>> devices = rooms_.sessions->observe(held);
  std::vector<std::optional<ServerObservation>> servers(ctx_.sc.servers.size());
  if (!ctx_.opt.coordinate_only)  // else the first server reports as a peer
    servers[static_cast<size_t>(ctx_.server_index)] =
        ServerObservation{rooms_.work->queued(held), rooms_.work->busy_workers(held), 0};  // no cloud: refused (hw/runtime_scope.hpp)
  rooms_.peers->observe(held, devices, servers);
  // Several servers: a device is present from its registration until it leaves (a leave trigger), as
  // in the simulator, whether or not a connection to it exists at this moment (its server may have
  // just been killed, and its devices are finding their new one): one not observed now is taken as
  // last seen.
  if (ctx_.several)
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i]->connected) {
        last_seen_[i] = devices[i];
      } else if (present_[i]) {
        if (last_seen_[i]) devices[i] = last_seen_[i];
        devices[i]->connected = true;
        if (!last_seen_[i]) devices[i]->generates = ctx_.sc.devices[i].workload.arrival != WorkloadSpec::Arrival::none;
      }
    }
  // A moving device's rate is its schedule's now (its positions: what the simulator observes, and
  // what its next heartbeat will report), not its last heartbeat's.
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i] && devices[i]->connected && ctx_.sc.devices[i].movement.kind != MovementSpec::Kind::none)
      devices[i]->link_bandwidth_mbps = ctx_.schedules[i].mbps_at(ctx_.now());
  return coordination_->rescheduler().snapshot(ctx_.now(), devices, servers);
}

// Carries out a decision of the shared Rescheduler (sched/rescheduler.hpp): only devices whose
// strategy or helper role changed get a scheduling message.
void ServerScheduling::decide(const ServerLock::Held& held) {
  Decision d = coordination_->decide(snapshot(held));
  // The devices connected here are told what changed for them (Decision::changes are exactly the
  // devices whose strategy, helper role or server changed); the peers get the whole scheme and tell
  // theirs.
  const size_t n = ctx_.sc.devices.size();
  std::vector<std::string> strategy(n);
  std::vector<bool> helper(n);
  std::vector<int> server(n);
  const Rescheduler& r = coordination_->rescheduler();
  for (size_t i = 0; i < n; ++i) {
    strategy[i] = r.strategy(DeviceIndex(static_cast<int>(i))).to_string();
    helper[i] = r.is_helper(DeviceIndex(static_cast<int>(i)));
    server[i] = r.server(DeviceIndex(static_cast<int>(i))).value;
  }
  rooms_.sessions->follow_scheme(held, strategy, helper, server);
  rooms_.peers->send_schemes(held);
  if (!ctx_.opt.coordinate_only) {  // else the first server's own process takes its part from its scheme
    // Helpers (once told): each serves its own server (Decision::helpers_of, the simulator's rule too,
    // in the same order); none once released at the end of arrivals.
    rooms_.work->set_helpers(held, d.helpers_of(ctx_.sc, ctx_.sc.servers[static_cast<size_t>(ctx_.server_index)].id));
    // Batching: this server applies the rule the scheme gave it now (the simulator does the same).
    for (const auto& [j, spec] : d.batching)
      if (j.value == ctx_.server_index) rooms_.work->set_batching(held, spec);
  }
  ctx_.log("decision (" + d.record.trigger + "): " + d.record.scheme + ", " + std::to_string(d.record.switched) + " switched");
  if (decisions_.is_open()) {
    decisions_ << decision_to_json(d.record) << "\n";
    decisions_.flush();
  }
}

// --- the coordinator's thread ------------------------------------------------------------------------
void ServerScheduling::scheduler_loop() {
  auto held = ctx_.lock.hold();
  // The coordinator (hw/coordinator.hpp) holds the start gate and, in its loop, the scenario's timed
  // triggers and periods (the simulator's too); this thread waits for them in real time.
  while (!ctx_.stopping()) {
    if (const auto went_without = coordination_->advance_to(ctx_.now())) {
      std::string missing;
      for (int i : *went_without) missing += " " + ctx_.sc.devices[static_cast<size_t>(i)].id;
      ctx_.log("starting without devices that have not registered:" + missing);
    }
    for (int j : coordination_->overdue_recoveries(ctx_.now(), kRecoverDeadlineS))
      ctx_.log("server " + ctx_.sc.servers[static_cast<size_t>(j)].id + " has not registered again " + format_double(kRecoverDeadlineS) +
               " s after its recovery's time: its devices stay where they are until it does");
    if (!coordination_->has_pending()) {
      held.wait_for(sched_cv_, std::min(0.2, std::max(0.0, coordination_->next_event_s() - ctx_.now())));
      continue;
    }
    held.release_for(0.02);  // gather triggers arriving together (e.g. several devices registering) into one decision
    try {
      decide(held);
    } catch (const std::exception& e) {
      // A scheduler that fails keeps the current scheme; the server goes on serving.
      ctx_.log(std::string("scheduler failed, keeping the current scheme: ") + e.what());
    }
  }
}

void ServerScheduling::wake_all() { sched_cv_.notify_all(); }

}  // namespace coinfer::hw
