#include "hw/device_sessions.hpp"

#include <algorithm>
#include <system_error>

#include "core/cloud_handoff.hpp"
#include "core/text_util.hpp"
#include "hw/cloud_tier.hpp"
#include "hw/server_scheduling.hpp"
#include "hw/server_work.hpp"

namespace coinfer::hw {

DeviceSessions::DeviceSessions(ServerContext& ctx, const ServerRooms& rooms, FollowedScheme start)
    : ctx_(ctx), rooms_(rooms), scheme_(std::move(start)) {
  for (const auto& d : ctx.sc.devices)
    handovers_.push_back(ctx.sc.mobility.mid_transfer == MobilitySpec::MidTransfer::wait ? std::vector<DeviceHandover>{}
                                                                                         : handovers_of(ctx.sc, d.id));
}

// --- registration ------------------------------------------------------------------------------------
void DeviceSessions::admit(std::unique_ptr<Connection>& conn, const Registration& r, const std::string& nonce, const std::string& peer) {
  std::vector<int> servers_now;
  {
    const auto held = ctx_.lock.hold();
    servers_now = scheme_.server;
  }
  const RegistrationCheck check = check_registration(r, nonce, ctx_.opt.secret, ctx_.sc, ctx_.server_index, &servers_now);
  if (check.other_server >= 0) return redirect(*conn, peer, r.device_id, check.other_server);
  if (ctx_.opt.coordinate_only && check.accepted())
    return redirect(*conn, peer, r.device_id, ctx_.server_index);  // served by the first server's own process
  if (!check.accepted()) return ctx_.reject(*conn, peer, check.refusal);
  const int index = check.device_index;
  auto h = std::make_shared<Handler>();
  h->index = index;
  h->id = r.device_id;
  h->generates = r.generates;
  h->conn = std::move(conn);
  h->conn->set_max_payload(kDefaultMaxPayload);  // authenticated: tasks and results may be large
  ctx_.apply_shaping(*h);
  Assignment a;
  {
    const auto held = ctx_.lock.hold();
    if (auto old = handlers_.find(index); old != handlers_.end()) {  // a reconnection replaces the old one
      old->second->alive = false;
      old->second->conn->close();
      retire(held, old->second);
    }
    handlers_[index] = h;
    a.strategy = scheme_.strategy[static_cast<size_t>(index)];
    a.helper = scheme_.helper[static_cast<size_t>(index)] && !rooms_.work->helpers_released(held);
    a.epoch_unix_s = ctx_.opt.epoch_unix_s;  // the device's journal is put on this time zero (hw/clock_sync.hpp)
    h->conn->send({MsgType::registered, 0, encode(a)}, Seconds(5));
    // A device the scheme moved here registers without a trigger (the simulator's move has none).
    if (!r.moved)
      rooms_.scheduling->registered(held, index);
    else
      rooms_.scheduling->present(held, index);
  }
  ctx_.log("device " + h->id + " registered from " + peer + " (" + a.strategy + ")");
  try {
    h->reader = std::thread([this, h] { read_loop(h); });
  } catch (const std::system_error& e) {  // no thread to be had: the device is told, and goes
    ctx_.log("device " + h->id + " dropped: no thread for its connection (" + e.what() + ")");
    h->conn->close();
    const auto held = ctx_.lock.hold();
    h->alive = false;
    h->reader_done = true;
    if (auto it = handlers_.find(index); it != handlers_.end() && it->second == h) {
      handlers_.erase(it);
      if (!ctx_.stopping() && ctx_.now() < ctx_.sc.duration_s) rooms_.scheduling->left(held, index);
    }
    retire(held, h);
  }
}

// A registration for a device the scheme has at another server: where to go instead, or (its
// address not known yet) a close without an answer, so that the device tries again.
void DeviceSessions::redirect(Connection& c, const std::string& peer, const std::string& device, int other) {
  const std::string& id = ctx_.sc.servers[static_cast<size_t>(other)].id;
  std::string address;
  {
    const auto held = ctx_.lock.hold();
    address = address_of(held, id);
  }
  if (address.empty()) {
    ctx_.log_throttled("redirect", "device " + device + " from " + peer + " belongs to server " + id +
                                       ", whose address is not known yet: closed, it will try again");
    c.close();
    return;
  }
  ctx_.log_throttled("redirect", "device " + device + " from " + peer + " belongs to server " + id + ": redirected to " + address);
  try {
    c.send({MsgType::redirect, 0, encode(Redirect{id, address})}, Seconds(2));
  } catch (const std::exception&) {
  }
  c.close();
}

// --- a device's reader -------------------------------------------------------------------------------
void DeviceSessions::read_loop(std::shared_ptr<Handler> h) {
  const std::string why = ctx_.read_frames(
      *h->conn, &h->alive, ctx_.opt.heartbeat_s, 5 * ctx_.opt.heartbeat_s, [&] { ctx_.apply_shaping(*h); },
      [&](const Frame& f) {
        const double t_arrived = unix_now();  // t2 of a clock probe
        switch (f.type) {
          case MsgType::task:
            on_task(h, f);
            break;
          case MsgType::result:
            rooms_.work->helper_result(h, f);
            break;
          case MsgType::resend:
            on_resend(h, f);
            break;
          case MsgType::heartbeat: {
            const DeviceStatus st = decode_status(f.payload);
            if (st.probe_t1 > 0) {  // answer at once: the time spent here is t3 - t2, excluded from the round trip
              ClockEcho e{st.probe_t1, t_arrived, 0};
              e.t3 = unix_now();
              h->conn->send({MsgType::heartbeat, 0, encode(e)}, Seconds(2));
            }
            on_status(h, st);
            break;
          }
          case MsgType::error:
            throw ConnectionClosed("device said: " + decode_error(f.payload));
          default:
            throw ProtocolError(std::string("unexpected ") + to_string(f.type) + " message from a device");
        }
      });
  const auto held = ctx_.lock.hold();
  ended(held, h, why);
}

// Device h's reader ended (`why`): its connection retired, the work forwarded to it as a helper failed
// to its origins, and, when it was this server's registration, it leaves (before the end of the
// arrivals) and its queued tasks go (the device records them failed itself).
void DeviceSessions::ended(const ServerLock::Held& held, const std::shared_ptr<Handler>& h, const std::string& why) {
  h->alive = false;
  h->reader_done = true;  // from here on only the lock is held: reap_retired() may join
  retire(held, h);
  rooms_.work->helper_gone(held, *h);
  auto it = handlers_.find(h->index);
  if (it == handlers_.end() || it->second != h) return;
  handlers_.erase(it);
  if (!ctx_.stopping()) {
    ctx_.log("device " + h->id + " disconnected: " + why);
    // After the arrivals end devices finish and go: that is the run ending, not a scenario leave. A
    // device the scheme moved elsewhere closes this connection once its requests here are done.
    if (ctx_.now() < ctx_.sc.duration_s && scheme_.server[static_cast<size_t>(h->index)] == ctx_.server_index)
      rooms_.scheduling->left(held, h->index);
  }
  for (auto up = held_uploads_.begin(); up != held_uploads_.end();) up = up->second.origin == h ? held_uploads_.erase(up) : std::next(up);
  const size_t dropped = rooms_.work->remove_of(held, h);
  if (dropped) ctx_.log("dropped " + std::to_string(dropped) + " queued tasks of " + h->id);
}

void DeviceSessions::on_task(const std::shared_ptr<Handler>& h, const Frame& f) {
  TaskHeader th;
  Pending p = received_task(h, f.task_id, f.payload, false, th);
  const int n = ctx_.specs[static_cast<size_t>(h->index)].num_stages();
  if (th.split < 0 || th.split >= n) throw ProtocolError("task split " + std::to_string(th.split) + " out of range 0.." + std::to_string(n - 1));
  if (th.cloud_split != 0 && (th.cloud_split <= th.split || th.cloud_split >= n))
    throw ProtocolError("task cloud_split " + std::to_string(th.cloud_split) + " out of range " + std::to_string(th.split + 1) + ".." +
                        std::to_string(n - 1));
  p.device = h->index;
  p.split = th.split;
  p.cloud_split = cloud_split_at_server(th.cloud_split, rooms_.cloud->has_cloud());
  p.t_created = th.t_created;
  p.t_queued = unix_now();
  const auto held = ctx_.lock.hold();
  // A handover on the device's link while this upload crossed it (core/mobility.hpp "mid_transfer"):
  // from its first byte leaving (the device's stamp) to its last arriving (now).
  const DeviceHandover* caught =
      handover_catching(handovers_[static_cast<size_t>(h->index)], th.t_sent - ctx_.opt.epoch_unix_s, p.t_received - ctx_.opt.epoch_unix_s);
  const auto key = std::make_pair(h->index, f.task_id);
  if (th.copy) {  // the bytes of an upload caught before, again: go on with the first copy, kept here
    auto kept = held_uploads_.find(key);
    if (kept == held_uploads_.end()) throw ProtocolError("a copy of task " + std::to_string(f.task_id) + ", which no handover caught");
    if (caught) {  // caught again: once more
      ask_resend(*h, f.task_id, f.payload.size(), *caught);
      return;
    }
    const double received = p.t_received;
    p = std::move(kept->second);
    held_uploads_.erase(kept);
    p.t_received = p.t_queued = received;
  } else if (caught) {
    if (ctx_.sc.mobility.mid_transfer == MobilitySpec::MidTransfer::fail || held_uploads_.size() >= kMaxHeldUploads) {
      ResultHeader r;
      r.ok = false;
      r.error = ctx_.sc.mobility.mid_transfer == MobilitySpec::MidTransfer::fail
                    ? handover_failure(*caught, true)
                    : "a handover caught its upload and " + std::to_string(kMaxHeldUploads) + " caught uploads already wait for their copies";
      ctx_.reply(h, f.task_id, r, "");  // no stamps: it was not received whole before the handover (the simulator's record)
      return;
    }
    held_uploads_.emplace(key, std::move(p));
    ask_resend(*h, f.task_id, f.payload.size(), *caught);
    return;
  }
  rooms_.work->take(held, std::move(p));
}

void DeviceSessions::on_status(const std::shared_ptr<Handler>& h, const DeviceStatus& s) {
  const auto held = ctx_.lock.hold();
  h->status = s;
  if (s.bandwidth_mbps > 0) rooms_.scheduling->bandwidth(held, h->index, s.bandwidth_mbps);
}

// Asks device h for the bytes of `task` again once the handover that caught them ends (the lock held).
void DeviceSessions::ask_resend(Handler& h, std::uint64_t task, size_t bytes, const DeviceHandover& caught) {
  ctx_.log("a handover (" + caught.from_access_point + " to " + caught.access_point + " at " + format_double(caught.at_s) +
           " s) caught the upload of " + h.id + " task " + std::to_string(task) + ": asking for it again");
  try {
    h.conn->send({MsgType::resend, task, encode(ResendRequest{static_cast<std::int64_t>(bytes), ctx_.opt.epoch_unix_s + caught.ends_s})}, Seconds(2));
  } catch (const std::exception& e) {
    ctx_.log("resend request to " + h.id + " not delivered: " + e.what());
  }
}

// Device h asks for the bytes of a result again (a handover caught them): a copy of as many bytes
// (filler: the device kept the first), not before the handover's end.
void DeviceSessions::on_resend(const std::shared_ptr<Handler>& h, const Frame& f) {
  const ResendRequest q = decode_resend(f.payload);
  const MobilitySpec& mobility = ctx_.sc.mobility;
  if (mobility.mid_transfer != MobilitySpec::MidTransfer::resend)
    throw ProtocolError(std::string("resend request under mobility.mid_transfer: ") + mid_transfer_name(mobility.mid_transfer));
  {
    std::lock_guard<std::mutex> lock(h->recent_mutex);
    const auto sent = std::find_if(h->recent_results.begin(), h->recent_results.end(), [&f](const auto& r) { return r.first == f.task_id; });
    if (sent == h->recent_results.end() || static_cast<std::size_t>(q.bytes) > sent->second)
      throw ProtocolError("resend request for task " + std::to_string(f.task_id) + " (" + std::to_string(q.bytes) +
                          " bytes): not one of the last results sent to this device, or more bytes than it had");
  }
  // Not before the handover ends; at most one handover later than now (the device's clock may be ahead).
  const double wait_s = std::min(q.not_before_unix_s - unix_now(), mobility.handover_ms * 1e-3);
  if (wait_s > 0) std::this_thread::sleep_for(Seconds(wait_s));
  ResultHeader r;
  r.copy = true;
  r.t_sent = unix_now();
  const size_t head = pack_result(r, "").size();  // the copy's payload is as long as the first's
  const size_t filler = static_cast<size_t>(q.bytes) > head ? static_cast<size_t>(q.bytes) - head : 0;
  ctx_.reply(h, f.task_id, r, incompressible_filler(filler, f.task_id));
}

// --- the lock held -----------------------------------------------------------------------------------
std::shared_ptr<Handler> DeviceSessions::handler(const ServerLock::Held&, int device) const {
  const auto it = handlers_.find(device);
  return it == handlers_.end() ? nullptr : it->second;
}

std::vector<std::optional<DeviceObservation>> DeviceSessions::observe(const ServerLock::Held&) const {
  std::vector<std::optional<DeviceObservation>> devices(ctx_.sc.devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    auto it = handlers_.find(static_cast<int>(i));
    DeviceObservation o;
    o.connected = it != handlers_.end() && it->second->alive;
    if (o.connected) {
      const DeviceStatus& s = it->second->status;
      o.link_bandwidth_mbps = s.bandwidth_mbps;
      o.queue_length = s.queue_length;
      o.unfinished = s.unfinished;
      o.busy = s.busy;
      o.completed = s.completed;
      o.latency_sum_s = s.latency_sum_s;
      o.generates = it->second->generates;
    }
    devices[i] = o;
  }
  return devices;
}

std::vector<PeerDevice> DeviceSessions::connected(const ServerLock::Held&) const {
  std::vector<PeerDevice> out;
  for (const auto& [i, h] : handlers_)
    if (h->alive) out.push_back(PeerDevice{i, h->generates, h->status});
  return out;
}

std::string DeviceSessions::address_of(const ServerLock::Held&, const std::string& server_id) const {
  const auto a = scheme_.addresses.find(server_id);
  return a == scheme_.addresses.end() ? std::string() : a->second;
}

void DeviceSessions::follow_scheme(const ServerLock::Held& held, const std::vector<std::string>& strategy, const std::vector<bool>& helper,
                                   const std::vector<int>& server) {
  for (size_t i = 0; i < strategy.size(); ++i) {
    const bool changed = strategy[i] != scheme_.strategy[i] || helper[i] != scheme_.helper[i] || server[i] != scheme_.server[i];
    const bool was_mine = scheme_.server[i] == ctx_.server_index;
    auto it = handlers_.find(static_cast<int>(i));
    if (changed && was_mine && it != handlers_.end()) {  // the others are told at their registration
      Assignment a;
      a.strategy = strategy[i];
      a.helper = helper[i] && !rooms_.work->helpers_released(held);
      if (server[i] != ctx_.server_index) {
        const std::string& id = ctx_.sc.servers[static_cast<size_t>(server[i])].id;
        if (auto addr = scheme_.addresses.find(id); addr != scheme_.addresses.end()) {
          a.server = id;
          a.address = addr->second;
        } else {
          ctx_.log("device " + it->second->id + " moved to server " + id + ", whose address is not known yet: it stays here");
        }
      }
      try {
        it->second->conn->send({MsgType::scheduling, 0, encode(a)}, Seconds(2));
      } catch (const std::exception& e) {
        ctx_.log("scheduling message to " + it->second->id + " failed: " + e.what());
      }
    }
    scheme_.strategy[i] = strategy[i];
    scheme_.helper[i] = helper[i];
    scheme_.server[i] = server[i];
  }
}

void DeviceSessions::release_helpers_when_done(const ServerLock::Held& held) {
  if (rooms_.work->helpers_released(held) || ctx_.now() < ctx_.sc.duration_s) return;
  for (const auto& kv : handlers_)
    if (kv.second->alive && ctx_.sc.devices[static_cast<size_t>(kv.first)].workload.arrival != WorkloadSpec::Arrival::none) return;
  const std::vector<int> helpers = rooms_.work->release_helpers(held);
  for (const auto& kv : handlers_) {
    if (!scheme_.helper[static_cast<size_t>(kv.first)]) continue;
    try {
      Assignment a;
      a.strategy = scheme_.strategy[static_cast<size_t>(kv.first)];
      kv.second->conn->send({MsgType::scheduling, 0, encode(a)}, Seconds(2));
    } catch (const std::exception& e) {
      ctx_.log("releasing helper " + kv.second->id + " failed: " + e.what());
    }
  }
  if (!helpers.empty()) ctx_.log("arrivals ended and every device that creates inputs has gone: helpers released");
}

void DeviceSessions::retire(const ServerLock::Held&, const std::shared_ptr<Handler>& h) {
  if (std::find(retired_.begin(), retired_.end(), h) == retired_.end()) retired_.push_back(h);
}

size_t DeviceSessions::reap_retired(const ServerLock::Held&) {
  size_t freed = 0;
  for (auto it = retired_.begin(); it != retired_.end();) {
    std::shared_ptr<Handler>& h = *it;
    if (!h->reader_done) {
      ++it;
      continue;
    }
    if (h->reader.joinable()) h->reader.join();  // also releases the thread's own copy of h
    if (h.use_count() == 1) {                    // no queued task, forwarded task or map entry refers to it
      it = retired_.erase(it);
      ++freed;
    } else {
      ++it;
    }
  }
  return freed;
}

void DeviceSessions::close_all(const ServerLock::Held&) {
  for (auto& [i, h] : handlers_) h->conn->close();
}

std::vector<std::shared_ptr<Handler>> DeviceSessions::every_handler(const ServerLock::Held&) const {
  std::vector<std::shared_ptr<Handler>> all;
  for (const auto& [i, h] : handlers_) all.push_back(h);
  all.insert(all.end(), retired_.begin(), retired_.end());
  return all;
}

}  // namespace coinfer::hw
