#include "hw/coordinator_link.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "core/strategy.hpp"
#include "core/text_util.hpp"
#include "hw/auth.hpp"
#include "hw/device_sessions.hpp"
#include "hw/server_work.hpp"

namespace coinfer::hw {

void CoordinatorLink::report(const ServerLock::Held&, const PeerEvent& e) {
  if (events_.size() >= kMaxEvents) {
    events_.pop_front();
    ctx_.log("the coordinator has not taken " + std::to_string(kMaxEvents) + " triggers: the oldest is lost");
  }
  events_.push_back(e);
}

void CoordinatorLink::bandwidth(const ServerLock::Held& held, int device, double mbps) {
  if (reported_mbps_[static_cast<size_t>(device)] == mbps) return;  // the coordinator has it
  reported_mbps_[static_cast<size_t>(device)] = mbps;
  report(held, PeerEvent{PeerEvent::Kind::bandwidth, device, mbps});
}

PeerReport CoordinatorLink::make_report(const ServerLock::Held& held) {
  PeerReport r;
  r.events.assign(events_.begin(), events_.end());
  events_.clear();
  r.queue_length = rooms_.work->queued(held);
  r.busy_workers = rooms_.work->busy_workers(held);
  r.devices = rooms_.sessions->connected(held);
  return r;
}

void CoordinatorLink::apply_scheme(const PeerScheme& ps) {
  const Scenario& sc = ctx_.sc;
  const size_t n = sc.devices.size();
  if (ps.strategies.size() != n)
    throw ProtocolError("peer_scheme for " + std::to_string(ps.strategies.size()) + " devices; the scenario has " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    try {
      parse_strategy(ps.strategies[i]);
    } catch (const std::exception& e) {
      throw ProtocolError("peer_scheme: strategy of device " + sc.devices[i].id + ": " + e.what());
    }
    if (ps.servers[i] < 0 || static_cast<size_t>(ps.servers[i]) >= sc.servers.size()) throw ProtocolError("peer_scheme: server index out of range");
  }
  for (int h : ps.server_helpers)
    if (h < 0 || static_cast<size_t>(h) >= n || sc.devices[static_cast<size_t>(h)].server != sc.servers[static_cast<size_t>(ctx_.server_index)].id)
      throw ProtocolError("peer_scheme: a helper that is not one of this server's devices");
  const auto held = ctx_.lock.hold();
  for (const auto& [id, a] : ps.addresses)
    if (sc.server_index(id) >= 0) rooms_.sessions->learn_address(held, id, a);
  rooms_.sessions->follow_scheme(held, ps.strategies, ps.helpers, ps.servers);
  rooms_.work->set_helpers(held, ps.server_helpers);
  rooms_.work->set_batching(held, BatchSpec{ps.batch_window_ms, ps.batch_max_size});
}

void CoordinatorLink::run() {
  double backoff = 0.2;
  bool first = true;
  while (!ctx_.stopping()) {
    std::unique_ptr<Connection> c;
    try {
      const auto [host, port] = split_address(ctx_.opt.coordinator, "--coordinator");
      c = Connection::connect(host, port, Seconds(3));
      auto hello = c->receive(Seconds(5));
      if (!hello || hello->type != MsgType::hello) throw ConnectionClosed("no hello from the coordinator");
      const Hello h = decode_hello(hello->payload);
      const std::string& me = ctx_.sc.servers[static_cast<size_t>(ctx_.server_index)].id;
      c->send({MsgType::peer_register, 0, encode(PeerRegistration{me, ctx_.my_address, hmac_sha256_hex(ctx_.opt.secret, h.nonce + "server:" + me)})},
              Seconds(5));
      c->set_max_payload(kDefaultMaxPayload);
      ctx_.log("registered with the coordinator at " + ctx_.opt.coordinator);
      backoff = 0.2;
      {
        const auto held = ctx_.lock.hold();
        if (!first)  // a coordinator started again knows none of them
          for (const PeerDevice& d : rooms_.sessions->connected(held)) events_.push_front(PeerEvent{PeerEvent::Kind::registered, d.device, 0});
        first = false;
      }
      // At once, and every 0.1 s from then, before time zero too: the coordinator closes a peer silent
      // for 5 heartbeats, and the servers start several seconds before time zero (hw/README.md "Processes").
      double next_report = -std::numeric_limits<double>::infinity();
      while (!ctx_.stopping()) {
        if (auto f = c->receive(Seconds(0.02))) {
          if (f->type == MsgType::peer_scheme)
            apply_scheme(decode_peer_scheme(f->payload));
          else if (f->type == MsgType::error)
            throw ConnectionClosed("the coordinator said: " + decode_error(f->payload));
          else
            throw ProtocolError(std::string("unexpected ") + to_string(f->type) + " message from the coordinator");
        }
        std::optional<PeerReport> rep;
        {
          const auto held = ctx_.lock.hold();
          if (!events_.empty() || ctx_.now() >= next_report) rep = make_report(held);
        }
        if (rep) {
          c->send({MsgType::peer_report, 0, encode(*rep)}, Seconds(2));
          next_report = ctx_.now() + 0.1;
        }
      }
    } catch (const std::exception& e) {
      if (ctx_.stopping()) break;
      // A bad message from the coordinator is answered with an error frame naming it, then the close
      // (hw/README.md "Wire protocol"), as every other receiver does.
      if (c && dynamic_cast<const ProtocolError*>(&e) != nullptr) {
        try {
          c->send({MsgType::error, 0, encode_error(std::string("protocol error: ") + e.what())}, Seconds(2));
        } catch (const std::exception&) {
        }
      }
      ctx_.log("coordinator at " + ctx_.opt.coordinator + ": " + e.what() + "; trying again in " + format_double(backoff) + " s");
      if (c) c->close();
      std::this_thread::sleep_for(Seconds(backoff));
      backoff = std::min(2.0, backoff * 2);
    }
  }
}

}  // namespace coinfer::hw
