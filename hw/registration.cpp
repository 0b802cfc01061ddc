#include "hw/registration.hpp"

#include <algorithm>

#include "hw/auth.hpp"

namespace coinfer::hw {

RegistrationCheck check_registration(const Registration& r, const std::string& nonce, const std::string& secret, const Scenario& sc, int server_index,
                                     const std::vector<int>* servers_now) {
  RegistrationCheck c;
  if (!constant_time_equal(r.hmac, hmac_sha256_hex(secret, nonce + r.device_id))) {
    c.refusal = "authentication failed for device '" + r.device_id + "' (wrong secret)";
    return c;
  }
  const int index = sc.device_index(r.device_id);
  if (index < 0) {
    c.refusal = "unknown device '" + r.device_id + "' (not in scenario " + sc.name + ")";
    return c;
  }
  const DeviceSpec& d = sc.devices[index];
  const int now_at =
      servers_now && static_cast<size_t>(index) < servers_now->size() ? (*servers_now)[static_cast<size_t>(index)] : sc.server_index(d.server);
  if (now_at != server_index) {
    c.refusal = "device '" + r.device_id + "' belongs to server '" +
                (now_at >= 0 && static_cast<size_t>(now_at) < sc.servers.size() ? sc.servers[static_cast<size_t>(now_at)].id : d.server) + "'";
    c.other_server = now_at;
  } else if (r.type != d.type)
    c.refusal = "device '" + r.device_id + "' registered as type '" + r.type + "', the scenario says '" + d.type + "'";
  else if (r.model != d.model || r.dataset != d.dataset)
    c.refusal = "this server does not have model " + r.model + "/" + r.dataset + " for device '" + r.device_id + "' (it serves " + d.model + "/" +
                d.dataset + ")";
  else
    c.device_index = index;
  return c;
}

PeerCheck check_peer_registration(const PeerRegistration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                  int coordinator_index, bool coordinate_only, bool coordinates) {
  PeerCheck c;
  if (!constant_time_equal(r.hmac, hmac_sha256_hex(secret, nonce + "server:" + r.server_id)))
    c.refusal = "authentication failed for server '" + r.server_id + "' (wrong secret)";
  else if (!coordinates)
    c.refusal = "this process (server " + sc.servers[static_cast<size_t>(coordinator_index)].id +
                ") is a peer, not the coordinator: peers register with the coordinator (its --coordinator address)";
  else if (sc.server_index(r.server_id) < 0)
    c.refusal = "unknown server '" + r.server_id + "' (not in scenario " + sc.name + ")";
  else if (sc.server_index(r.server_id) == coordinator_index && !coordinate_only)
    c.refusal = "server '" + r.server_id + "' is this coordinator itself";
  else if (coordinator_index != 0)
    c.refusal = "this server (" + sc.servers[static_cast<size_t>(coordinator_index)].id +
                ") is not the scenario's first server: peers register with " + sc.servers.front().id;
  else
    c.server_index = sc.server_index(r.server_id);
  return c;
}

PeerCheck check_cloud_registration(const PeerRegistration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                   int cloud_index) {
  PeerCheck c;
  const int edge = sc.server_index(r.server_id);
  const std::string& me = sc.servers[static_cast<size_t>(cloud_index)].id;
  if (!constant_time_equal(r.hmac, hmac_sha256_hex(secret, nonce + "edge:" + r.server_id)))
    c.refusal = "authentication failed for edge server '" + r.server_id + "' (wrong secret)";
  else if (edge < 0)
    c.refusal = "unknown server '" + r.server_id + "' (not in scenario " + sc.name + ")";
  else if (sc.servers[static_cast<size_t>(edge)].cloud != me)
    c.refusal = "server '" + r.server_id + "' does not have this server (" + me + ") as its cloud (servers[].cloud)";
  else
    c.server_index = edge;
  return c;
}

HandshakeGate::Ticket HandshakeGate::try_enter(double now_s, std::function<void()> close) {
  std::lock_guard<std::mutex> lock(m_);
  if (counted_ >= limit_) {
    // Full: the oldest handshake silent for long enough gives its place (its thread ends and leaves).
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (!it->second.heard && !it->second.evicted && now_s - it->second.since_s >= silent_evict_s_ &&
          (oldest == entries_.end() || it->second.since_s < oldest->second.since_s))
        oldest = it;
    if (oldest == entries_.end()) {
      ++refused_;
      return 0;
    }
    oldest->second.evicted = true;
    --counted_;
    ++evicted_;
    if (oldest->second.close) oldest->second.close();
    oldest->second.close = nullptr;
  }
  const Ticket t = next_++;
  entries_[t] = Entry{now_s, false, false, std::move(close)};
  ++counted_;
  return t;
}

void HandshakeGate::heard_from(Ticket t) {
  std::lock_guard<std::mutex> lock(m_);
  if (auto it = entries_.find(t); it != entries_.end()) it->second.heard = true;
}

void HandshakeGate::disarm(Ticket t) {
  std::lock_guard<std::mutex> lock(m_);
  if (auto it = entries_.find(t); it != entries_.end()) it->second.close = nullptr;
}

void HandshakeGate::leave(Ticket t) {
  std::lock_guard<std::mutex> lock(m_);
  auto it = entries_.find(t);
  if (it == entries_.end()) return;
  if (!it->second.evicted) --counted_;
  entries_.erase(it);
  cv_.notify_all();
}

void HandshakeGate::wait_idle() {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [this] { return entries_.empty(); });
}

long long HandshakeGate::evicted() const {
  std::lock_guard<std::mutex> lock(m_);
  return evicted_;
}

long long HandshakeGate::refused() const {
  std::lock_guard<std::mutex> lock(m_);
  return refused_;
}

double RedirectGuard::on_redirect(const std::string& address) {
  ++redirects_;
  looped_ = std::find(chain_.begin(), chain_.end(), address) != chain_.end();
  if (looped_) {
    ++loops_;
    if (loops_ >= kMaxLoops) {
      std::string seen;
      for (const std::string& a : chain_) seen += (seen.empty() ? "" : " -> ") + a;
      throw RedirectLoop("redirect loop: sent back to " + address + " again after " + seen + " (" + std::to_string(loops_) +
                         " loops since the last registration); the servers disagree on where this device belongs, or one "
                         "advertises a wrong address (--advertise)");
    }
    chain_.clear();
  }
  chain_.push_back(address);
  return redirects_ <= 1 ? 0.0 : std::min(2.0, 0.05 * static_cast<double>(1LL << std::min(redirects_ - 2, 10)));
}

void RedirectGuard::on_registered() {
  chain_.clear();
  redirects_ = loops_ = 0;
  looped_ = false;
}

void RedirectGuard::on_unreachable() {
  chain_.clear();
  looped_ = false;
}

bool LogThrottle::allow(const std::string& kind, double now_s, std::string* note) {
  std::lock_guard<std::mutex> lock(m_);
  Kind& k = kinds_[kind];
  if (note) note->clear();
  if (now_s - k.window_start_s >= period_s_) {
    k.window_start_s = now_s;
    k.in_window = 0;
  }
  if (k.in_window >= burst_) {
    ++k.pending;
    ++k.total;
    return false;
  }
  ++k.in_window;
  if (k.pending > 0 && note) *note = "(" + std::to_string(k.pending) + " more " + kind + " lines left out before this one) ";
  k.pending = 0;
  return true;
}

long long LogThrottle::suppressed(const std::string& kind) const {
  std::lock_guard<std::mutex> lock(m_);
  auto it = kinds_.find(kind);
  return it == kinds_.end() ? 0 : it->second.total;
}

StartGate::StartGate(const Scenario& sc, int server_index, double deadline_s, double now_s) : deadline_s_(deadline_s) {
  for (size_t i = 0; i < sc.devices.size(); ++i)
    if ((server_index < 0 || sc.devices[i].server == sc.servers[server_index].id) && sc.devices[i].join_at_s <= now_s &&
        sc.devices[i].leave_at_s > now_s)
      initial_.push_back(static_cast<int>(i));
  waiting_ = initial_;
}

bool StartGate::registered(int device) {
  if (started_) return false;
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), device), waiting_.end());
  if (!waiting_.empty()) return false;
  started_ = true;
  return true;
}

bool StartGate::deadline_passed(double now_s) {
  if (started_ || now_s < deadline_s_) return false;
  started_ = true;
  return true;
}

bool StartGate::is_join(int device) const { return started_ || std::find(initial_.begin(), initial_.end(), device) == initial_.end(); }

}  // namespace coinfer::hw
