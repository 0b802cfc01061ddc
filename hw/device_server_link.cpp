#include "hw/device_server_link.hpp"

#include <algorithm>
#include <limits>

#include "core/strategy.hpp"
#include "core/text_util.hpp"
#include "hw/auth.hpp"
#include "hw/device_work.hpp"

namespace coinfer::hw {

using Refused = RegistrationRefused;

DeviceServerLink::DeviceServerLink(DeviceContext& ctx, const DeviceRooms& rooms) : ctx_(ctx), rooms_(rooms) {
  server_host_ = ctx.opt.host;
  server_port_ = ctx.opt.port;
}

// --- registration --------------------------------------------------------------------------------------
// Connects and registers; returns the connection, throws Refused, RegistrationRedirected or ConnectionClosed.
std::shared_ptr<Connection> DeviceServerLink::connect_and_register(const std::string& host, int port, bool moved) {
  std::shared_ptr<Connection> c = Connection::connect(host, port, Seconds(3));
  auto hello = c->receive(Seconds(5));
  if (!hello || hello->type != MsgType::hello) throw ConnectionClosed("no hello from the server");
  const Hello h = decode_hello(hello->payload);
  const DeviceSpec& d = ctx_.device();
  Registration r;
  r.device_id = ctx_.opt.device_id;
  r.type = d.type;
  r.model = d.model;
  r.dataset = d.dataset;
  r.generates = d.workload.arrival != WorkloadSpec::Arrival::none;
  r.hmac = hmac_sha256_hex(ctx_.opt.secret, h.nonce + ctx_.opt.device_id);
  r.moved = moved;
  c->send({MsgType::register_, 0, encode(r)}, Seconds(5));
  auto reply = c->receive(Seconds(10));
  if (!reply) throw ConnectionClosed("no answer to the registration");
  if (reply->type == MsgType::error) throw Refused("the server refused the registration: " + decode_error(reply->payload));
  if (reply->type == MsgType::redirect) {
    const Redirect to = decode_redirect(reply->payload);
    if (ctx_.sc.server_index(to.server) < 0) throw ProtocolError("redirect to unknown server '" + to.server + "'");
    throw RegistrationRedirected(to.server, to.address);
  }
  if (reply->type != MsgType::registered) throw ConnectionClosed("unexpected answer to the registration");
  const Assignment a = decode_assignment(reply->payload);
  if (a.epoch_unix_s > 0 && !epochs_noted_) {
    ctx_.journal->epochs(ctx_.opt.epoch_unix_s, a.epoch_unix_s);
    epochs_noted_ = true;
  }
  apply(a);
  return c;
}

// A scheduling message (or the registration's assignment): its strategy and helper role, and a move.
void DeviceServerLink::apply(const Assignment& a) {
  Strategy s;
  try {
    s = parse_strategy(a.strategy);
    if (s.kind == Strategy::Kind::pp) ctx_.spec.check_split(s.split);
    if (!s.variant.empty() && model_under(ctx_.spec.name, s) != ctx_.spec.name)
      throw std::invalid_argument("strategy " + s.to_string() + " names another model variant than " + ctx_.spec.name +
                                  ": the testbed runs each device's model as the scenario names it");
  } catch (const std::exception& e) {
    throw ProtocolError(std::string("scheduling message: ") + e.what());
  }
  const int to = a.server.empty() ? -1 : ctx_.sc.server_index(a.server);
  if (!a.server.empty() && to < 0) throw ProtocolError("scheduling message: unknown server '" + a.server + "'");
  const auto held = ctx_.lock.hold();
  rooms_.work->assign(held, s, a.helper);
  if (to >= 0 && to != rooms_.work->server(held)) {
    ctx_.log("moved to server " + a.server + " at " + a.address + ": registering there; requests on their way finish where they are");
    move_to_ = std::make_pair(to, a.address);
  }
  rooms_.work->wake(held);
}

std::string DeviceServerLink::serve(double hard_end) {
  double backoff = 0.2;
  RedirectGuard redirects;  // redirects since the last registration
  std::string fatal;
  bool moved = false;            // the next registration follows a move or a redirect (not a join)
  bool ask_coordinator = false;  // several servers: every other attempt asks the first server where to go
  DeviceWork& work = *rooms_.work;
  while (!ctx_.stopping()) {
    std::shared_ptr<Connection> c;
    std::string host;
    int port = 0;
    {
      const auto held = ctx_.lock.hold();
      if (move_to_) {  // moved while the connection was lost: register there
        set_server_now(held, move_to_->first, move_to_->second);
        moved = true;
      }
      host = server_host_;
      port = server_port_;
    }
    const bool via_coordinator = ask_coordinator && !ctx_.opt.coordinator.empty();
    try {
      if (via_coordinator) {  // it takes the registration only where the scheme moved the device to it: not a join
        const auto [ch, cp] = split_address(ctx_.opt.coordinator, "--coordinator");
        c = connect_and_register(ch, cp, true);
        const auto held = ctx_.lock.hold();
        set_server_now(held, 0, ctx_.opt.coordinator);  // it took the registration: the first server is its server now
      } else {
        c = connect_and_register(host, port, moved);
      }
      backoff = 0.2;
      moved = false;
      ask_coordinator = false;
      redirects.on_registered();
    } catch (const RegistrationRedirected& e) {
      // Bounded (hw/registration.hpp RedirectGuard): back-off, a loop asks the coordinator, the
      // fifth loop is an error, and the run's end holds here too.
      double wait = 0;
      try {
        wait = redirects.on_redirect(e.address);
      } catch (const RedirectLoop& loop) {
        fatal = loop.what();
        break;
      }
      ctx_.log(std::string("registration ") + e.what() + (redirects.looped() ? " (a loop: asking the coordinator next)" : "") +
               (wait > 0 ? ", following in " + std::to_string(wait).substr(0, 4) + " s" : ""));
      {
        const auto held = ctx_.lock.hold();
        set_server_now(held, ctx_.sc.server_index(e.server), e.address);
      }
      moved = true;
      ask_coordinator = redirects.looped() && !ctx_.opt.coordinator.empty();
      for (double waited = 0; waited < wait && !work.done(hard_end); waited += 0.05) std::this_thread::sleep_for(Seconds(0.05));
      if (work.done(hard_end)) break;
      continue;
    } catch (const Refused& e) {
      fatal = e.what();
      break;
    } catch (const std::exception& e) {
      ctx_.log(std::string("cannot reach the server (") + e.what() + "), retrying in " + std::to_string(backoff).substr(0, 4) + " s");
      redirects.on_unreachable();
      if (work.done(hard_end)) break;
      std::this_thread::sleep_for(Seconds(backoff));
      backoff = std::min(2.0, backoff * 2);
      // Several servers: every other attempt asks the first server where the device belongs now (its
      // own may be down, and the scheme may have moved it meanwhile).
      if (!ctx_.opt.coordinator.empty() && ctx_.opt.coordinator != host + ":" + std::to_string(port)) ask_coordinator = !ask_coordinator;
      continue;
    }
    {
      const auto held = ctx_.lock.hold();
      conn_ = c;
      work.registered(held);
      ctx_.log("registered with " + c->peer() + " as " + ctx_.opt.device_id + " (" + work.strategy(held).to_string() + ")");
    }
    std::thread reader([this, c] { read_loop(c, true); });
    stay_connected(c, reader, hard_end, fatal);
    c->close();
    reader.join();
    int server_now = 0;
    {
      const auto held = ctx_.lock.hold();
      server_now = work.server(held);
    }
    lose_connection(server_now);
    if (!fatal.empty() || work.done(hard_end)) break;
    // Its server failed (the scenario says so): the scheduler may move it elsewhere at this very
    // failure. Ask the coordinator first, once it has had time to decide (it gathers triggers for
    // 20 ms), instead of trying the dead server first.
    const bool failed_now = !ctx_.scheduled_failure_reason(ctx_.now(), server_now).empty();
    if (failed_now && !ctx_.opt.coordinator.empty()) {
      ask_coordinator = true;
      std::this_thread::sleep_for(Seconds(0.05));
    }
  }
  return fatal;
}

// Connected on `c` (read by `reader`): carries out moves, closes drained connections, paces the link
// and sends heartbeats until the connection closes or the run is over; a refusal sets `fatal`.
void DeviceServerLink::stay_connected(std::shared_ptr<Connection>& c, std::thread& reader, double hard_end, std::string& fatal) {
  double next_beat = 0;
  while (!c->closed() && !rooms_.work->done(hard_end)) {
    try {
      if (!carry_out_move(c, reader)) std::this_thread::sleep_for(Seconds(0.2));
    } catch (const Refused& e) {
      fatal = e.what();
      return;
    }
    close_drained();
    const double latency = one_way_latency_s(ctx_.sc, static_cast<size_t>(ctx_.index));
    if (ctx_.opt.shape)
      c->set_shaping({0, latency, ctx_.shared_schedule, ctx_.opt.epoch_unix_s - ctx_.opt.clock_skew_s});  // paced on the run's time
    else if (ctx_.opt.shape_latency)
      c->set_shaping({0, latency, nullptr, 0});
    if (ctx_.now() >= next_beat) {
      DeviceStatus s;
      {
        const auto held = ctx_.lock.hold();
        s = rooms_.work->status(held);
      }
      s.probe_t1 = ctx_.device_unix();
      try {
        c->send({MsgType::heartbeat, 0, encode(s)}, Seconds(2));
      } catch (const std::exception&) {
      }
      // The first probes come quickly, for a clock estimate before much is recorded.
      next_beat = ctx_.now() + (++beats_ < 5 ? std::min(0.1, ctx_.opt.heartbeat_s) : ctx_.opt.heartbeat_s);
    }
    std::this_thread::sleep_for(Seconds(0.1));
  }
}

// --- readers -------------------------------------------------------------------------------------------
void DeviceServerLink::read_loop(std::shared_ptr<Connection> c, bool fresh) {
  std::map<std::uint64_t, Collecting> collecting;
  if (fresh) {  // their copies were to come on the previous connection (its reader has been joined)
    std::lock_guard<std::mutex> readers(reader_mutex_);
    held_results_.clear();
  }
  try {
    while (!ctx_.stopping()) {
      auto f = c->receive(Seconds(0.2));
      if (!f) continue;
      switch (f->type) {
        case MsgType::result:
          on_result(*c, std::move(*f), kHeaderBytes + f->payload.size());
          break;
        case MsgType::resend:
          rooms_.work->on_resend_request(*f);
          break;
        case MsgType::scheduling:
          apply(decode_assignment(f->payload));
          break;
        case MsgType::task:
          on_task(*f, collecting);
          break;
        case MsgType::heartbeat: {
          const double t4 = ctx_.device_unix();
          const ClockEcho e = decode_clock_echo(f->payload);
          std::lock_guard<std::mutex> readers(reader_mutex_);
          if (e.t1 > 0 && clock_.add(clock_sample(e.t1, e.t2, e.t3, t4)))
            ctx_.journal->clock(clock_.offset_s(), clock_.uncertainty_s(), clock_.samples());
          break;
        }
        case MsgType::error:
          ctx_.log("server said: " + decode_error(f->payload));
          break;
        default:
          throw ProtocolError(std::string("unexpected ") + to_string(f->type) + " from the server");
      }
    }
  } catch (const std::exception& e) {
    if (!ctx_.stopping() && !c->closed()) ctx_.log(std::string("connection lost: ") + e.what());
  }
  c->close();
}

// Work forwarded to this helper: collected until its batch is complete (hw/README.md).
void DeviceServerLink::on_task(const Frame& f, std::map<std::uint64_t, Collecting>& collecting) {
  std::string bytes;
  const TaskHeader th = unpack_task(f.payload, bytes);
  const int origin = ctx_.sc.device_index(th.origin);
  if (origin < 0) throw ProtocolError("forwarded task of unknown device '" + th.origin + "'");
  const std::uint64_t key = th.batch == 0 ? ~f.task_id : th.batch;
  Collecting& b = collecting[key];
  if (b.parts.empty()) {
    if (collecting.size() > 16) throw ProtocolError("more than 16 forwarded batches incomplete at once");
    b.size = th.batch_size;
    b.split = th.split;
    b.origin = origin;
  } else if (b.size != th.batch_size || b.split != th.split || b.origin != origin) {
    throw ProtocolError("forwarded batch " + std::to_string(th.batch) + ": its tasks disagree on size, split or origin");
  }
  b.parts.push_back({static_cast<std::int64_t>(f.task_id), std::move(bytes)});
  if (static_cast<int>(b.parts.size()) < b.size) return;
  Collecting done = std::move(b);
  collecting.erase(key);
  const auto held = ctx_.lock.hold();
  rooms_.work->add_helper_batch(held, done.split, done.origin, std::move(done.parts));
}

// A result frame: a handover on this device's link while it crossed it (core/mobility.hpp
// "mid_transfer": from the server handing it over, or the previous result's arrival, to now) fails
// it or keeps it until a copy has crossed the link too; otherwise it completes its request.
void DeviceServerLink::on_result(Connection& c, Frame f, std::size_t frame_bytes) {
  std::lock_guard<std::mutex> readers(reader_mutex_);
  const std::uint64_t task = f.task_id;
  const auto id = static_cast<std::int64_t>(task);
  const MobilitySpec& mobility = ctx_.sc.mobility;
  std::string out;
  ResultHeader h = unpack_result(f.payload, out);
  const double arrived = ctx_.now();
  const double started = std::max(h.t_sent - ctx_.opt.epoch_unix_s, last_result_arrival_);
  last_result_arrival_ = arrived;
  const bool on_link = h.copy || (h.ok && !h.dropped);  // a payload the device needs (failures carry none)
  const DeviceHandover* caught = on_link ? handover_catching(ctx_.handovers, started, arrived) : nullptr;
  const auto complete = [&](std::size_t bytes, const ResultHeader& header, const std::string& handover_failed) {
    const auto held = ctx_.lock.hold();
    rooms_.work->complete(held, id, bytes, header, handover_failed);
  };
  if (h.copy) {
    auto kept = held_results_.find(task);
    if (kept == held_results_.end()) return;  // its request is over meanwhile
    if (!caught) {                            // the copy crossed: the first copy completes the request
      std::pair<Frame, std::size_t> first = std::move(kept->second);
      held_results_.erase(kept);
      out.clear();
      h = unpack_result(first.first.payload, out);
      complete(first.second, h, "");
      return;
    }
  }
  if (caught) {
    if (mobility.mid_transfer == MobilitySpec::MidTransfer::fail || (!h.copy && held_results_.size() >= kMaxHeldResults)) {
      // Failed with what the server's stamps say of it, as the simulator's record of a result caught so.
      complete(frame_bytes, h,
               mobility.mid_transfer == MobilitySpec::MidTransfer::fail
                   ? handover_failure(*caught, false)
                   : "a handover caught its result and " + std::to_string(kMaxHeldResults) + " caught results already wait for their copies");
      return;
    }
    const auto held = ctx_.lock.hold();
    if (!rooms_.work->count_resend(held, id)) return;
    ctx_.log("a handover (" + caught->from_access_point + " to " + caught->access_point + " at " + format_double(caught->at_s) +
             " s) caught the result of task " + std::to_string(task) + ": asking for it again");
    if (!h.copy) held_results_.emplace(task, std::make_pair(std::move(f), frame_bytes));
    try {
      c.send({MsgType::resend, task,
              encode(ResendRequest{static_cast<std::int64_t>(frame_bytes - kHeaderBytes), ctx_.opt.epoch_unix_s + caught->ends_s})},
             Seconds(2));
    } catch (const std::exception& e) {
      ctx_.log(std::string("resend request not delivered: ") + e.what());
    }
    return;
  }
  complete(frame_bytes, h, "");
}

// --- servers and connections ---------------------------------------------------------------------------
std::shared_ptr<Connection> DeviceServerLink::connection_for(const DeviceLock::Held& held, std::int64_t id) {
  const int server = rooms_.work->server_of(held, id);
  if (server == rooms_.work->server(held)) return conn_;
  for (const Draining& d : draining_)
    if (d.server == server) return d.conn;
  return nullptr;
}

// Its server is `server` now, listening at `address` (a move or a redirect).
void DeviceServerLink::set_server_now(const DeviceLock::Held& held, int server, const std::string& address) {
  const auto [host, port] = split_address(address, "scheduling");
  server_host_ = host;
  server_port_ = port;
  move_to_.reset();
  rooms_.work->set_server(held, server);
}

// The connection to `server` is gone: what that server held is lost (the requests whose records
// name it). When the scenario's failure of that server explains it (a fail event at or before now,
// no recover since: `coinfer testbed` killed it), they fail with the simulator's reasons
// (core/server_failures.hpp) and, for its server now, the loop treats the server as down until it
// registers again, as the simulator's devices do; any other loss is "connection to the server lost"
// and only pauses the closed loop.
void DeviceServerLink::lose_connection(int server) {
  const auto held = ctx_.lock.hold();
  const bool current = server == rooms_.work->server(held);
  if (current) conn_.reset();
  rooms_.work->lose(held, server, current);
}

// Closes the connections to servers it moved away from once nothing it sent there is unfinished,
// or once lost (their requests then fail).
void DeviceServerLink::close_drained() {
  std::vector<Draining> done;
  {
    const auto held = ctx_.lock.hold();
    for (auto it = draining_.begin(); it != draining_.end();) {
      if (!rooms_.work->waiting_on(held, it->server) || it->conn->closed()) {
        done.push_back(std::move(*it));
        it = draining_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Draining& d : done) {
    const bool lost = d.conn->closed();
    d.conn->close();
    if (d.reader.joinable()) d.reader.join();
    lose_connection(d.server);  // what it still held, if it was lost
    ctx_.log((lost ? "lost the connection to server " : "closed the connection to server ") + ctx_.sc.servers[static_cast<size_t>(d.server)].id +
             (lost ? "" : ": its requests there are over"));
  }
}

// The scheme moved this device (move_to_): registers at its new server (or takes back the
// connection it still drains there); `c` and `reader` become the new ones, the old pair drains.
// Returns false when the new server cannot be reached yet (tried again later). Throws Refused.
bool DeviceServerLink::carry_out_move(std::shared_ptr<Connection>& c, std::thread& reader) {
  std::pair<int, std::string> to;
  Draining again;
  {
    const auto held = ctx_.lock.hold();
    if (!move_to_) return true;
    to = *move_to_;
    for (auto it = draining_.begin(); it != draining_.end(); ++it)
      if (it->server == to.first) {
        again = std::move(*it);
        draining_.erase(it);
        break;
      }
  }
  std::shared_ptr<Connection> next = again.conn;
  std::thread next_reader = std::move(again.reader);
  if (!next) {
    try {
      const auto [host, port] = split_address(to.second, "scheduling");
      next = connect_and_register(host, port, true);
      move_redirects_.on_registered();
    } catch (const RegistrationRedirected& e) {
      // Bounded as the registration loop's (hw/registration.hpp RedirectGuard); the caller waits 0.2 s
      // between attempts and stops at the run's end.
      try {
        move_redirects_.on_redirect(e.address);
      } catch (const RedirectLoop& loop) {
        throw Refused(loop.what());
      }
      const auto held = ctx_.lock.hold();
      move_to_ = std::make_pair(ctx_.sc.server_index(e.server), e.address);
      return false;
    } catch (const Refused&) {
      throw;
    } catch (const std::exception& e) {
      ctx_.log("cannot register with server " + ctx_.sc.servers[static_cast<size_t>(to.first)].id + " at " + to.second + " yet (" + e.what() + ")");
      move_redirects_.on_unreachable();
      return false;
    }
    next_reader = std::thread([this, next] { read_loop(next, false); });
  }
  const auto held = ctx_.lock.hold();
  const int old = rooms_.work->server(held);
  draining_.push_back(Draining{old, c, std::move(reader)});
  c = next;
  reader = std::move(next_reader);
  conn_ = next;
  set_server_now(held, to.first, to.second);
  ctx_.log("registered with " + next->peer() + " (server " + ctx_.sc.servers[static_cast<size_t>(to.first)].id + ") as " + ctx_.opt.device_id +
           "; the connection to " + ctx_.sc.servers[static_cast<size_t>(old)].id + " stays until its requests there are over");
  return true;
}

void DeviceServerLink::close_draining() {
  std::vector<Draining> left;
  {
    const auto held = ctx_.lock.hold();
    left.swap(draining_);
  }
  for (Draining& d : left) {
    d.conn->close();
    if (d.reader.joinable()) d.reader.join();
  }
}

}  // namespace coinfer::hw
