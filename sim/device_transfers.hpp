#pragma once
// The transfers a device takes part in (its uploads, what servers and helpers send it), carried either
// by SimGrid (a Comm between two hosts) or by coinfer's FlowShares (sim/flow_shares.hpp) on the same
// links, from one kernel timer. Sim-internal; everything here runs in kernel context at the engine's
// current time and returns at once (no call blocks or advances the clock).
//
// FlowShares carries them where it computes what SimGrid would (device_transfers_by_coinfer): the
// network model is coinfer's CM02 (scenario network_model cm02, no --cfg network/...), and no SimGrid
// transfer shares a link with them (no server passes requests to a cloud: its transfers to the cloud
// are SimGrid's). Elsewhere SimGrid carries them, as before. Why: a SimGrid communication costs an
// activity, an action, a solver variable and their allocations per transfer; computed here a transfer
// is a few numbers (bench/RESULTS.md "Ninth pass").
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "sim/flow_shares.hpp"
#include "sim/kernel_events.hpp"
#include "sim/platform_builder.hpp"

namespace coinfer::sim {

// Whether FlowShares carries the devices' transfers of scenario `s` run with SimGrid settings
// `engine_config` (--cfg): "" when it does, else why not (for the run's log).
std::string why_not_device_transfers_by_coinfer(const Scenario& s, const std::vector<std::string>& engine_config);

// The devices' transfers computed by coinfer: one per simulation, shared by its devices.
class TransferNetwork {
 public:
  TransferNetwork(const Scenario& s, const Platform& platform);
  TransferNetwork(const TransferNetwork&) = delete;
  TransferNetwork& operator=(const TransferNetwork&) = delete;

  // Starts a transfer of `bytes` from `from` to `to` now; `hook` hears of its completion (not of a
  // cancellation), in kernel context at its time.
  FlowShares::Flow start(Endpoint from, Endpoint to, double bytes, CompletionHook* hook);
  // Its bytes not yet sent; cancel also ends it (its hook hears nothing).
  double remaining(FlowShares::Flow f) const;
  double cancel(FlowShares::Flow f);

 private:
  void solve_soon();  // the shares are recomputed before the clock moves on
  void on_timer();

  FlowShares shares_;
  FlowLinks links_;
  KernelTimer timer_;
  double timer_at_s_ = -1;
  bool in_timer_ = false;
  std::vector<std::uint64_t> completed_;
};

// One transfer slot of a device: empty, or a transfer on its way by SimGrid or by the TransferNetwork.
class DeviceTransfer {
 public:
  explicit operator bool() const { return comm_ != nullptr || flow_ >= 0; }
  // `network` null: SimGrid carries it, between the hosts of `platform`.
  void start(TransferNetwork* network, const Platform& platform, Endpoint from, Endpoint to, std::uint64_t bytes, CompletionHook* hook);
  double remaining() const;
  // Ends it before its completion; a SimGrid communication is kept in `cancelled` (SimGrid still uses
  // it until the device is destroyed).
  void cancel(std::vector<simgrid::s4u::ActivityPtr>& cancelled);
  // After its completion: SimGrid's communication is retired once the clock has moved on.
  void completed(ActivityRetirement& retirement);

 private:
  simgrid::s4u::CommPtr comm_;
  TransferNetwork* network_ = nullptr;
  FlowShares::Flow flow_ = -1;
};

}  // namespace coinfer::sim
