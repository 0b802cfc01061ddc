#include "hw/cloud_tier.hpp"

#include <algorithm>

#include "core/cloud_handoff.hpp"
#include "hw/device_sessions.hpp"
#include "hw/server_work.hpp"

namespace coinfer::hw {

CloudTier::CloudTier(ServerContext& ctx, const ServerRooms& rooms) : ctx_(ctx), rooms_(rooms), availability_(ctx.sc) {
  const ServerSpec& me = ctx.sc.servers[static_cast<size_t>(ctx.server_index)];
  cloud_index_ = me.cloud.empty() ? -1 : ctx.sc.server_index(me.cloud);
}

CloudTier::~CloudTier() = default;

void CloudTier::start_link() {
  if (cloud_index_ < 0 || ctx_.opt.coordinate_only) return;
  const ServerSpec& me = ctx_.sc.servers[static_cast<size_t>(ctx_.server_index)];
  CloudLink::Options o;
  o.edge_id = me.id;
  o.edge_address = ctx_.my_address;
  o.cloud_id = me.cloud;
  o.secret = ctx_.opt.secret;
  o.shaping = wan_shaping(ctx_.server_index);
  o.address = [this] {  // as the coordinator's last scheme gave it
    const auto held = ctx_.lock.hold();
    return rooms_.sessions->address_of(held, ctx_.sc.servers[static_cast<size_t>(cloud_index_)].id);
  };
  link_ = std::make_unique<CloudLink>(
      o, [this](std::uint64_t id, const ResultHeader& h, std::string out) { on_cloud_result(id, h, std::move(out)); },
      [this](const std::string& line) { ctx_.log(line); });
}

void CloudTier::close_link() {
  if (link_) link_->close();
}

// --- at an edge (the simulator's ServerActors::pass_to_cloud) ----------------------------------------
void CloudTier::pass_to_cloud(const Pending& p, const ResultHeader& edge, std::string state) {
  const double t = ctx_.now();
  const std::string& cloud_id = ctx_.sc.servers[static_cast<size_t>(cloud_index_)].id;
  if (availability_.any() && !availability_.up_at(cloud_index_, t + 0.25)) {
    ResultHeader r = edge;
    r.ok = false;
    r.error = server_down_reason(cloud_id, availability_.failed_at(cloud_index_, t + 0.25));
    return ctx_.reply(p.origin, p.task, r, "");
  }
  TaskHeader th;
  th.split = p.cloud_split;
  th.origin = ctx_.sc.devices[static_cast<size_t>(p.device)].id;
  th.t_sent = unix_now();
  th.t_created = p.t_created;
  std::uint64_t id = 0;
  {
    const auto held = ctx_.lock.hold();
    id = next_cloud_id_++;
    at_cloud_[id] = AtCloud{p.origin, p.task, edge, static_cast<double>(state.size())};
  }
  link_->submit(id, th, std::move(state));
}

// The cloud's answer for request `id` (or the link's failure): its device gets one result with the
// edge's stamps and the cloud's.
void CloudTier::on_cloud_result(std::uint64_t id, const ResultHeader& cloud, std::string output) {
  AtCloud a;
  {
    const auto held = ctx_.lock.hold();
    auto it = at_cloud_.find(id);
    if (it == at_cloud_.end()) return;
    a = std::move(it->second);
    at_cloud_.erase(it);
  }
  const std::string& cloud_id = ctx_.sc.servers[static_cast<size_t>(cloud_index_)].id;
  ResultHeader r = a.edge;
  r.ok = cloud.ok;
  r.error = cloud.error;
  // Lost with a cloud the scenario fails now (the testbed killed it): the simulator's reason.
  const double t = ctx_.now();
  if (!cloud.ok && cloud.t_queued == 0 && availability_.any() && !availability_.up_at(cloud_index_, t + 0.25))
    r.error = server_failed_reason(cloud_id, availability_.failed_at(cloud_index_, t + 0.25));
  r.dropped = cloud.dropped;
  r.cloud = cloud_id;
  r.cloud_bytes = a.bytes;
  if (cloud.t_queued > 0) {  // it reached the cloud (a failure before has no cloud stamps)
    r.t_cloud_queued = cloud.t_queued;
    if (!cloud.dropped) {
      r.t_cloud_batch_start = cloud.t_batch_start;
      r.t_cloud_batch_end = cloud.t_batch_end;
      r.cloud_batch_size = cloud.batch_size;
    }
  }
  r.t_sent = 0;
  ctx_.reply(a.origin, a.task, r, output);
}

// The path between edge server `edge` and this server's cloud (or this cloud): the cloud's link,
// paced in the middleware at its rate over time, and the one-way latency of both server links.
Shaping CloudTier::wan_shaping(int edge) const {
  const int cloud = cloud_index_ >= 0 ? cloud_index_ : ctx_.server_index;
  const ServerSpec& c = ctx_.sc.servers[static_cast<size_t>(cloud)];
  Shaping s;
  s.latency_s = (c.link.latency_ms + ctx_.sc.servers[static_cast<size_t>(edge)].link.latency_ms) * 1e-3;
  s.schedule = std::make_shared<const BandwidthSchedule>(server_link_schedule(c));
  s.epoch_unix_s = ctx_.opt.epoch_unix_s;
  return s;
}

// --- at a cloud --------------------------------------------------------------------------------------
void CloudTier::accept_edge(std::unique_ptr<Connection> conn, const PeerRegistration& r, const std::string& nonce, const std::string& from) {
  const PeerCheck check = check_cloud_registration(r, nonce, ctx_.opt.secret, ctx_.sc, ctx_.server_index);
  if (!check.accepted()) return ctx_.reject(*conn, from, check.refusal);
  auto h = std::make_shared<Handler>();
  h->index = -1;
  h->id = r.server_id;
  h->generates = false;
  h->conn = std::move(conn);
  h->conn->set_max_payload(kDefaultMaxPayload);
  ctx_.log("edge server " + h->id + " connected from " + from + " (this server is its cloud)");
  const auto held = ctx_.lock.hold();
  // One connection per edge (200 connections of one edge id were all kept): a new
  // one replaces the older, whose reader ends and drops what it queued.
  for (const auto& old : edges_)
    if (old->id == h->id) {
      old->alive = false;
      old->conn->close();
      ctx_.log("edge server " + h->id + ": its older connection closed (replaced by the new one)");
    }
  // Acknowledged once it is the edge's connection, so that a connection of this edge made after the
  // acknowledgement replaces this one, never the other way round (acknowledged before, a registration
  // that came second could take the lock first and close the newer connection). Under the lock and
  // before the WAN shaping: a frame of a few bytes into a new socket's empty buffer does not wait.
  h->conn->send({MsgType::heartbeat, 0, ""}, Seconds(5));
  h->conn->set_shaping(wan_shaping(check.server_index));
  edges_.push_back(h);
  h->reader = std::thread([this, h] { edge_read_loop(h); });
}

void CloudTier::edge_read_loop(std::shared_ptr<Handler> h) {
  const std::string why = ctx_.read_frames(
      *h->conn, &h->alive, 0.5, kCloudSilenceS, [] {},
      [&](const Frame& f) {
        if (f.type == MsgType::heartbeat) return;
        if (f.type == MsgType::error) throw ConnectionClosed("edge server said: " + decode_error(f.payload));
        if (f.type != MsgType::task) throw ProtocolError(std::string("unexpected ") + to_string(f.type) + " message from an edge server");
        on_cloud_task(h, f);
      });
  const auto held = ctx_.lock.hold();
  h->alive = false;
  h->reader_done = true;
  edges_.erase(std::remove(edges_.begin(), edges_.end(), h), edges_.end());
  rooms_.sessions->retire(held, h);
  if (!ctx_.stopping()) ctx_.log("edge server " + h->id + " disconnected: " + why);
  const size_t dropped = rooms_.work->remove_of(held, h);
  if (dropped) ctx_.log("dropped " + std::to_string(dropped) + " queued cloud parts of " + h->id);
}

// A cloud part: stages [m,n) of device `origin`'s request, batched with any [m,n) of that model.
void CloudTier::on_cloud_task(const std::shared_ptr<Handler>& h, const Frame& f) {
  TaskHeader th;
  Pending p = received_task(h, f.task_id, f.payload, true, th);
  p.device = ctx_.sc.device_index(th.origin);
  if (p.device < 0) throw ProtocolError("cloud part of unknown device '" + th.origin + "'");
  const int n = ctx_.specs[static_cast<size_t>(p.device)].num_stages();
  if (th.split < 1 || th.split >= n)
    throw ProtocolError("cloud part split " + std::to_string(th.split) + " out of range 1.." + std::to_string(n - 1));
  p.split = th.split;
  p.t_created = th.t_created;
  p.t_queued = unix_now();
  const auto held = ctx_.lock.hold();
  rooms_.work->take(held, std::move(p));
}

void CloudTier::close_all(const ServerLock::Held&) {
  for (auto& h : edges_) h->conn->close();
}

}  // namespace coinfer::hw
