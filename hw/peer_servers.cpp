#include "hw/peer_servers.hpp"

#include <algorithm>
#include <system_error>

#include "hw/device_sessions.hpp"
#include "hw/server_scheduling.hpp"

namespace coinfer::hw {

void PeerServers::accept(std::unique_ptr<Connection> conn, const PeerRegistration& r, const std::string& nonce, const std::string& from) {
  const PeerCheck check = check_peer_registration(r, nonce, ctx_.opt.secret, ctx_.sc, ctx_.server_index, ctx_.opt.coordinate_only, ctx_.coordinator);
  if (!check.accepted()) return ctx_.reject(*conn, from, check.refusal);
  auto p = std::make_shared<Peer>();
  p->index = check.server_index;
  p->conn = std::move(conn);
  p->conn->set_max_payload(kDefaultMaxPayload);  // authenticated: reports may be large
  const auto held = ctx_.lock.hold();
  if (auto old = peers_.find(p->index); old != peers_.end()) {  // started again: the new one replaces it
    old->second->conn->close();
    ended_.push_back(old->second);
  }
  peers_[p->index] = p;
  rooms_.sessions->learn_address(held, r.server_id, r.address);
  ctx_.log("server " + r.server_id + " registered from " + from + " as a peer (devices reach it at " + r.address + ")");
  send_schemes(held);  // every peer learns the new address
  rooms_.scheduling->peer_registered(held, p->index);
  try {
    p->reader = std::thread([this, p] { read_loop(p); });
  } catch (const std::system_error& e) {
    ctx_.log("server " + r.server_id + " dropped: no thread for its connection (" + e.what() + ")");
    p->conn->close();
    p->reader_done = true;
    peers_.erase(p->index);
    ended_.push_back(p);
  }
}

void PeerServers::read_loop(std::shared_ptr<Peer> p) {
  const std::string& id = ctx_.sc.servers[static_cast<size_t>(p->index)].id;
  const size_t n = ctx_.sc.devices.size();
  const std::string why = ctx_.read_frames(
      *p->conn, nullptr, 0.5, 5 * ctx_.opt.heartbeat_s, [] {},
      [&](const Frame& f) {
        if (f.type == MsgType::error) throw ConnectionClosed("it said: " + decode_error(f.payload));
        if (f.type != MsgType::peer_report) throw ProtocolError(std::string("unexpected ") + to_string(f.type) + " message from a peer server");
        PeerReport rep = decode_peer_report(f.payload);  // bounds of every field: hw/protocol.cpp
        // A report covers 0.1 s: a few events per device at most (100,000 events made a
        // 1.5 MB trigger string).
        if (rep.events.size() > 4 * n + 64 || rep.devices.size() > n)
          throw ProtocolError("peer_report: " + std::to_string(rep.events.size()) + " events and " + std::to_string(rep.devices.size()) +
                              " devices for a scenario of " + std::to_string(n) + " devices");
        for (const PeerEvent& e : rep.events)
          if (e.device < 0 || static_cast<size_t>(e.device) >= n) throw ProtocolError("peer_report: device index out of range");
        for (const PeerDevice& d : rep.devices)
          if (d.device < 0 || static_cast<size_t>(d.device) >= n) throw ProtocolError("peer_report: device index out of range");
        const auto held = ctx_.lock.hold();
        on_report(held, *p, std::move(rep));
      });
  const auto held = ctx_.lock.hold();
  p->reader_done = true;
  if (auto it = peers_.find(p->index); it != peers_.end() && it->second == p) {
    peers_.erase(it);
    ended_.push_back(p);
    if (!ctx_.stopping()) ctx_.log("peer server " + id + " disconnected: " + why + " (its devices are not observed until it registers again)");
  }
}

// A peer speaks for the devices the scheme gives it, no other (a leave of another server's device was
// a leave trigger). A device the scheme just moved away may still be reported by its old server until
// that server has the new scheme: ignored, as the simulator's move has no leave.
void PeerServers::on_report(const ServerLock::Held& held, Peer& p, PeerReport rep) {
  const std::vector<int>& server = rooms_.sessions->scheme(held).server;
  const auto others = [&](int device) { return server[static_cast<size_t>(device)] != p.index; };
  size_t ignored = 0;
  rep.events.erase(std::remove_if(rep.events.begin(), rep.events.end(), [&](const PeerEvent& e) { return others(e.device) && ++ignored; }),
                   rep.events.end());
  rep.devices.erase(std::remove_if(rep.devices.begin(), rep.devices.end(), [&](const PeerDevice& d) { return others(d.device) && ++ignored; }),
                    rep.devices.end());
  if (ignored > 0)
    ctx_.log_throttled("peer-report", "peer server " + ctx_.sc.servers[static_cast<size_t>(p.index)].id + " reported " + std::to_string(ignored) +
                                          " devices that the scheme gives another server: ignored");
  for (const PeerEvent& e : rep.events) {
    if (e.kind == PeerEvent::Kind::registered)
      rooms_.scheduling->registered(held, e.device);
    else if (e.kind == PeerEvent::Kind::leave)
      rooms_.scheduling->left(held, e.device);
    else
      rooms_.scheduling->bandwidth(held, e.device, e.bandwidth_mbps);
  }
  rep.events.clear();
  p.last = std::move(rep);
  p.reported = true;
}

// The whole scheme for peer j.
PeerScheme PeerServers::scheme_for(const ServerLock::Held& held, int j) const {
  const FollowedScheme& view = rooms_.sessions->scheme(held);
  PeerScheme ps;
  ps.strategies = view.strategy;
  ps.helpers = view.helper;
  ps.servers = view.server;
  for (size_t i = 0; i < ctx_.sc.devices.size(); ++i)  // each peer releases its helpers itself at the end of the arrivals
    if (view.helper[i] && ctx_.sc.devices[i].server == ctx_.sc.servers[static_cast<size_t>(j)].id) ps.server_helpers.push_back(static_cast<int>(i));
  const BatchSpec& b = rooms_.scheduling->rescheduler(held).batching(ServerIndex(j));
  ps.batch_window_ms = b.window_ms;
  ps.batch_max_size = b.max_size;
  ps.addresses = view.addresses;
  return ps;
}

void PeerServers::send_schemes(const ServerLock::Held& held) {
  for (const auto& [j, p] : peers_) {
    try {
      p->conn->send({MsgType::peer_scheme, 0, encode(scheme_for(held, j))}, Seconds(2));
    } catch (const std::exception& e) {
      ctx_.log("scheme for server " + ctx_.sc.servers[static_cast<size_t>(j)].id + " not delivered: " + e.what());
    }
  }
}

void PeerServers::observe(const ServerLock::Held& held, std::vector<std::optional<DeviceObservation>>& devices,
                          std::vector<std::optional<ServerObservation>>& servers) const {
  const std::vector<int>& server = rooms_.sessions->scheme(held).server;
  for (const auto& [j, p] : peers_) {
    if (!p->reported) continue;
    servers[static_cast<size_t>(j)] = ServerObservation{p->last.queue_length, p->last.busy_workers, 0};
    for (const PeerDevice& d : p->last.devices) {
      DeviceObservation& o = *devices[static_cast<size_t>(d.device)];
      if (o.connected && server[static_cast<size_t>(d.device)] != j) continue;
      o.connected = true;
      o.link_bandwidth_mbps = d.status.bandwidth_mbps;
      o.queue_length = d.status.queue_length;
      o.unfinished = d.status.unfinished;
      o.busy = d.status.busy;
      o.completed = d.status.completed;
      o.latency_sum_s = d.status.latency_sum_s;
      o.generates = d.generates;
    }
  }
}

void PeerServers::reap(const ServerLock::Held&) {
  for (auto it = ended_.begin(); it != ended_.end();) {
    if ((*it)->reader_done) {
      if ((*it)->reader.joinable()) (*it)->reader.join();
      it = ended_.erase(it);
    } else {
      ++it;
    }
  }
}

void PeerServers::close_all(const ServerLock::Held&) {
  for (auto& [j, p] : peers_) p->conn->close();
}

void PeerServers::join_all() {
  std::vector<std::shared_ptr<Peer>> all;
  {
    const auto held = ctx_.lock.hold();
    for (auto& [j, p] : peers_) all.push_back(p);
    all.insert(all.end(), ended_.begin(), ended_.end());
  }
  for (auto& p : all) {
    p->conn->close();
    if (p->reader.joinable()) p->reader.join();
  }
}

}  // namespace coinfer::hw
