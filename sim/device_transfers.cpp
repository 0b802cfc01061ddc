#include "sim/device_transfers.hpp"

namespace sg4 = simgrid::s4u;

namespace coinfer::sim {

std::string why_not_device_transfers_by_coinfer(const Scenario& s, const std::vector<std::string>& engine_config) {
  if (s.network_model != "cm02") return "network_model " + s.network_model + " (coinfer computes CM02 only)";
  for (const std::string& c : engine_config)
    if (c.rfind("network/", 0) == 0) return "--cfg " + c;
  for (const ServerSpec& sv : s.servers)
    if (!sv.cloud.empty()) return "server " + sv.id + " passes requests to a cloud (SimGrid transfers share its links)";
  return "";
}

TransferNetwork::TransferNetwork(const Scenario& s, const Platform& platform) : links_(add_flow_links(s, platform, shares_)) {}

FlowShares::Flow TransferNetwork::start(Endpoint from, Endpoint to, double bytes, CompletionHook* hook) {
  FlowShares::Link route[FlowShares::kMaxRoute];
  const int n = flow_route(links_, from, to, route);
  const FlowShares::Flow f = shares_.start(sg4::Engine::get_clock(), route, n, bytes, reinterpret_cast<std::uintptr_t>(hook));
  solve_soon();
  return f;
}

double TransferNetwork::remaining(FlowShares::Flow f) const { return shares_.remaining(sg4::Engine::get_clock(), f); }

double TransferNetwork::cancel(FlowShares::Flow f) {
  const double left = shares_.cancel(sg4::Engine::get_clock(), f);
  solve_soon();
  return left;
}

void TransferNetwork::solve_soon() {
  if (in_timer_) return;  // on_timer solves before it returns
  const double now = sg4::Engine::get_clock();
  if (timer_.pending() && timer_at_s_ == now) return;
  timer_at_s_ = now;
  timer_.set(now, [this] { on_timer(); });
}

void TransferNetwork::on_timer() {
  in_timer_ = true;
  const double now = sg4::Engine::get_clock();
  // What is due now, then what the completions' listeners started now, until nothing more is due now.
  double next = shares_.next_event_s();
  for (; next <= now; next = shares_.next_event_s()) {
    completed_.clear();
    shares_.advance(now, completed_);
    for (const std::uint64_t tag : completed_) {
      const auto* hook = reinterpret_cast<const CompletionHook*>(static_cast<std::uintptr_t>(tag));
      hook->listener->on_activity_done(hook->slot);
    }
  }
  in_timer_ = false;
  if (next == FlowShares::kNever) {
    timer_.cancel();  // nothing on its way: the engine may end
    return;
  }
  timer_at_s_ = next;
  timer_.set(next, [this] { on_timer(); });
}

void DeviceTransfer::start(TransferNetwork* network, const Platform& platform, Endpoint from, Endpoint to, std::uint64_t bytes,
                           CompletionHook* hook) {
  if (network != nullptr) {
    network_ = network;
    flow_ = network->start(from, to, static_cast<double>(bytes), hook);
    return;
  }
  comm_ = sg4::Comm::sendto_init(host_of(platform, from), host_of(platform, to));
  comm_->set_payload_size(bytes);
  comm_->set_data(hook);
  comm_->start();
}

double DeviceTransfer::remaining() const { return comm_ ? comm_->get_remaining() : network_->remaining(flow_); }

void DeviceTransfer::cancel(std::vector<sg4::ActivityPtr>& cancelled) {
  if (comm_) {
    comm_->cancel();
    cancelled.push_back(comm_);
    comm_ = nullptr;
  } else if (flow_ >= 0) {
    network_->cancel(flow_);
    flow_ = -1;
  }
}

void DeviceTransfer::completed(ActivityRetirement& retirement) {
  if (comm_) {
    retirement.retire(comm_);
    comm_ = nullptr;
  }
  flow_ = -1;
}

}  // namespace coinfer::sim
