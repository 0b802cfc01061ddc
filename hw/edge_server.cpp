#include "hw/edge_server.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/mobility.hpp"
#include "hw/auth.hpp"
#include "hw/cloud_tier.hpp"
#include "hw/connection.hpp"
#include "hw/coordinator_link.hpp"
#include "hw/device_sessions.hpp"
#include "hw/peer_servers.hpp"
#include "hw/protocol.hpp"
#include "hw/registration.hpp"
#include "hw/runtime_scope.hpp"
#include "hw/server_context.hpp"
#include "hw/server_scheduling.hpp"
#include "hw/server_work.hpp"
#include "io/scenario_loader.hpp"
#include "models/model_runner.hpp"
#include "plumbing/atomic_dir.hpp"
#include "sched/scheduler_factory.hpp"

namespace coinfer::hw {

// The server: its common ground and its rooms (hw/server_context.hpp), the listener, and the
// handshakes that hand each new connection to the room it registers with.
struct EdgeServer::Impl {
  ServerContext ctx;
  ServerRooms rooms;
  std::unique_ptr<ServerWork> work;
  std::unique_ptr<DeviceSessions> sessions;
  std::unique_ptr<ServerScheduling> scheduling;
  std::unique_ptr<PeerServers> peers;
  std::unique_ptr<CoordinatorLink> link;
  std::unique_ptr<CloudTier> cloud;
  std::unique_ptr<Listener> listener;

  // Handshakes run on their own threads, detached; at most 32 at once, each bounded by its
  // registration deadline. When all 32 are taken, the oldest one silent for 1 s is closed to make room
  // (strangers cannot hold the bound: hw/registration.hpp HandshakeGate); only when none is silent is
  // a connection refused with an error frame. Each thread's resources are reclaimed when it ends, and
  // shutdown waits for the running ones.
  static constexpr double kRegistrationDeadlineS = 3;  // hello -> registration: milliseconds for a real device
  HandshakeGate handshakes{32, 1.0};

  void start_handshake(std::unique_ptr<Connection> conn);
  void handshake(std::unique_ptr<Connection> conn, HandshakeGate::Ticket ticket);
  void check_roles() const;
  void build_rooms();
};

void EdgeServer::Impl::start_handshake(std::unique_ptr<Connection> conn) {
  Connection* raw = conn.get();
  const HandshakeGate::Ticket ticket = handshakes.try_enter(unix_now(), [raw] { raw->close(); });
  if (ticket == 0) {
    const std::string peer = conn->peer();
    ctx.reject(*conn, peer, "too many registrations in progress (" + std::to_string(handshakes.limit()) + ", none silent); try again");
    return;
  }
  // The connection is handed over only once the thread exists: if it cannot be created, the
  // connection is still ours to refuse.
  auto slot = std::make_shared<std::unique_ptr<Connection>>(std::move(conn));
  try {
    std::thread([this, slot, ticket]() mutable {
      handshake(std::move(*slot), ticket);
      handshakes.leave(ticket);
    }).detach();
  } catch (const std::system_error& e) {
    handshakes.disarm(ticket);
    handshakes.leave(ticket);
    if (*slot) {
      const std::string peer = (*slot)->peer();
      ctx.reject(**slot, peer, std::string("server cannot take a connection now (") + e.what() + "); try again");
    }
  }
}

// The hello and its registration: a device's goes to DeviceSessions, a peer server's to PeerServers,
// an edge's (this server is its cloud) to CloudTier.
void EdgeServer::Impl::handshake(std::unique_ptr<Connection> conn, HandshakeGate::Ticket ticket) {
  const std::string peer = conn->peer();
  // The gate may close this connection (evicting a silent stranger) until the first frame arrives;
  // never once it is moved on or destroyed: disarmed before `conn` (a parameter) goes.
  struct Disarm {
    HandshakeGate& gate;
    HandshakeGate::Ticket t;
    ~Disarm() { gate.disarm(t); }
  } disarm{handshakes, ticket};
  try {
    const std::string nonce = random_nonce_hex();
    conn->send({MsgType::hello, 0, encode(Hello{kProtocolVersion, nonce})}, Seconds(5));
    auto f = conn->receive(Seconds(kRegistrationDeadlineS));
    handshakes.heard_from(ticket);  // it spoke (or the deadline passed): the gate leaves it alone from here
    handshakes.disarm(ticket);
    if (!f) throw ProtocolError("no registration within " + std::to_string(static_cast<int>(kRegistrationDeadlineS)) + " s");
    if (f->type != MsgType::register_ && f->type != MsgType::peer_register && f->type != MsgType::cloud_register)
      throw ProtocolError(std::string("expected register, got ") + to_string(f->type));
    if (f->type == MsgType::peer_register) return peers->accept(std::move(conn), decode_peer_registration(f->payload), nonce, peer);
    if (f->type == MsgType::cloud_register) return cloud->accept_edge(std::move(conn), decode_peer_registration(f->payload), nonce, peer);
    sessions->admit(conn, decode_registration(f->payload), nonce, peer);
  } catch (const ProtocolError& e) {
    // hw/README.md: a protocol error is answered with an error frame naming it, then the close.
    if (conn) ctx.reject(*conn, peer, std::string("registration protocol error: ") + e.what());
  } catch (const std::exception& e) {
    ctx.log("connection from " + peer + " closed during registration: " + e.what());
    if (conn) conn->close();
  }
}

// The first server coordinates unless told where the coordinator is (a coordinator that only
// coordinates runs beside it: --coordinate-only). Throws InputError for options that contradict it.
void EdgeServer::Impl::check_roles() const {
  const Scenario& sc = ctx.sc;
  const ServeOptions& opt = ctx.opt;
  const ServerSpec& me = sc.servers[static_cast<size_t>(ctx.server_index)];
  if (opt.coordinate_only && ctx.server_index != 0)
    throw InputError(SourceLocation{sc.file, 0, 0}, "--coordinate-only",
                     "a coordinator that only coordinates stands for the scenario's first server (" + sc.servers.front().id + "): drop --server");
  if (opt.coordinate_only && !opt.coordinator.empty())
    throw InputError(SourceLocation{sc.file, 0, 0}, "--coordinator", "a coordinator (--coordinate-only) has no coordinator of its own: drop one");
  if (!ctx.coordinator && opt.coordinator.empty())
    throw InputError(SourceLocation{sc.file, 0, 0}, "--coordinator",
                     "server " + me.id + " is not the scenario's first server: give --coordinator HOST:PORT, where " + sc.servers.front().id +
                         " (which holds the scheduler) listens");
  if (!ctx.coordinator) try {
      split_address(opt.coordinator, "--coordinator");
    } catch (const ProtocolError& e) {
      throw InputError(SourceLocation{sc.file, 0, 0}, "--coordinator", e.what());
    }
}

// The rooms, in the order they need each other at construction: the work (its LUTs), the scheduling
// (the scheduler, the coordinator, the scheme before the first decision), the devices (that scheme),
// the peers, the coordinator link and the cloud tier.
void EdgeServer::Impl::build_rooms() {
  work = std::make_unique<ServerWork>(ctx, rooms);
  scheduling = std::make_unique<ServerScheduling>(ctx, rooms);
  sessions = std::make_unique<DeviceSessions>(ctx, rooms, scheduling->initial_scheme());
  peers = std::make_unique<PeerServers>(ctx, rooms);
  link = std::make_unique<CoordinatorLink>(ctx, rooms);
  cloud = std::make_unique<CloudTier>(ctx, rooms);
  rooms = ServerRooms{work.get(), sessions.get(), scheduling.get(), peers.get(), link.get(), cloud.get()};
}

EdgeServer::EdgeServer(Scenario scenario, ModelCatalog catalog, LutSet luts, ServeOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  ServerContext& ctx = impl.ctx;
  ctx.sc = std::move(scenario);
  ctx.catalog = std::move(catalog);
  ctx.luts = std::move(luts);
  ctx.opt = std::move(options);
  const Scenario& sc = ctx.sc;
  if (ctx.opt.server_id.empty()) ctx.opt.server_id = sc.servers.at(0).id;
  ctx.server_index = sc.server_index(ctx.opt.server_id);
  if (ctx.server_index < 0) throw InputError(SourceLocation{sc.file, 0, 0}, "servers", "no server '" + ctx.opt.server_id + "' in the scenario");
  // Every LUT entry the scenario's scheduler and strategies may need, checked before serving: a gap
  // found later would stop the scheduler mid-run.
  check_scenario_against(sc, ctx.catalog, ctx.luts, scheduler_traits(sc.scheduler.name));
  check_real_runtime_scope(sc);
  for (const auto& e : sc.events)  // the testbed kills and restarts this process at their times
    if (e.is<event::ServerFail>()) {
      if (!ctx.opt.recovering)
        log::info("server",
                  "server failures: `coinfer testbed` kills this process at each fail event and starts it again (--recovering) "
                  "at the recover; under `coinfer serve` alone nothing fails by itself");
      break;
    }
  for (const auto& e : sc.events)  // the scheduler sees loads at their times; the testbed applies them
    if (e.is<event::Load>()) {
      log::info("server",
                "load events: the scheduler sees each at its time; `coinfer testbed` applies them to the device processes' CPU "
                "caps, real boards under `coinfer serve` must carry that load themselves");
      break;
    }
  const ServerSpec& me = sc.servers[static_cast<size_t>(ctx.server_index)];
  for (const auto& d : sc.devices) {
    ctx.specs.push_back(ctx.catalog.instantiate(d.model, d.dataset));
    ctx.schedules.emplace_back(d, sc.events);
    ctx.shared_schedules.push_back(std::make_shared<const BandwidthSchedule>(ctx.schedules.back()));
    if (d.server == me.id) models::check_realisable(ctx.specs.back());  // the server must be able to realise every model it serves
  }
  // Coordinated across processes: several servers, or one whose scheduler runs in a process of its own
  // (a coordinator with --coordinate-only, the server its peer with --coordinator; the testbed does so
  // when the server fails, so that the failure is decided on as in the simulator).
  ctx.several = sc.servers.size() > 1 || ctx.opt.coordinate_only || !ctx.opt.coordinator.empty();
  if (ctx.opt.epoch_unix_s <= 0) ctx.opt.epoch_unix_s = unix_now();
  ctx.coordinator = ctx.opt.coordinate_only || (ctx.server_index == 0 && ctx.opt.coordinator.empty());
  impl.build_rooms();
  impl.check_roles();
  impl.scheduling->open_journal();
  // Until a peer has authenticated, a frame may carry at most a registration (hw/README.md).
  impl.listener = std::make_unique<Listener>(ctx.opt.bind, ctx.opt.port, kMaxUnauthenticatedPayload);
  ctx.my_address = ctx.opt.advertise.empty() ? ctx.opt.bind + ":" + std::to_string(impl.listener->port()) : ctx.opt.advertise;
  if (ctx.several) {
    if (ctx.opt.advertise.empty() && ctx.opt.bind == "0.0.0.0" && !ctx.opt.coordinate_only)
      throw InputError(SourceLocation{sc.file, 0, 0}, "--advertise",
                       "the scenario has several servers: give --advertise HOST:PORT, where devices moved to this server reach it "
                       "(it listens on every address)");
    try {
      // A coordinator that only coordinates tells no device where it is (the first server's own process
      // does): its bind address, 0.0.0.0 in a namespace, is no address to check.
      if (!(ctx.opt.coordinate_only && ctx.opt.advertise.empty())) split_address(ctx.my_address, "--advertise");
    } catch (const ProtocolError& e) {
      throw InputError(SourceLocation{sc.file, 0, 0}, "--advertise", e.what());
    }
    if (!ctx.opt.coordinate_only) {  // else the first server's own process says
      const auto held = ctx.lock.hold();
      impl.sessions->learn_address(held, me.id, ctx.my_address);
    }
  }
  impl.cloud->start_link();
  if (!ctx.opt.port_file.empty()) write_text_atomic(ctx.opt.port_file, std::to_string(impl.listener->port()) + "\n");
}

EdgeServer::~EdgeServer() = default;

int EdgeServer::port() const { return impl_->listener->port(); }

void EdgeServer::run(const std::atomic<bool>& stop) {
  Impl& impl = *impl_;
  ServerContext& ctx = impl.ctx;
  ctx.stop = &stop;
  const std::string& me = ctx.sc.servers[static_cast<size_t>(ctx.server_index)].id;
  const int workers = ctx.sc.servers[static_cast<size_t>(ctx.server_index)].workers;
  if (ctx.opt.coordinate_only)
    ctx.log("coordinating the " + std::to_string(ctx.sc.servers.size()) + " servers of scenario " + ctx.sc.name + " on " + ctx.opt.bind + ":" +
            std::to_string(port()) + " (scheduler " + impl.scheduling->scheduler().name() + ")");
  else
    ctx.log("serving " + me + " of scenario " + ctx.sc.name + " on " + ctx.opt.bind + ":" + std::to_string(port()) + " (" + std::to_string(workers) +
            " workers, " +
            (ctx.coordinator ? "scheduler " + impl.scheduling->scheduler().name() : "the scheme of coordinator " + ctx.opt.coordinator) +
            (ctx.several ? ", devices reach it at " + ctx.my_address : std::string()) + ")");
  {
    const auto held = ctx.lock.hold();
    impl.scheduling->open_gate(held);  // no device to wait for
  }
  std::vector<std::thread> threads;
  if (!ctx.opt.coordinate_only)
    for (int w = 0; w < workers; ++w) threads.emplace_back([&impl, w] { impl.work->worker_loop(w); });
  if (ctx.coordinator)
    threads.emplace_back([&impl] { impl.scheduling->scheduler_loop(); });
  else
    threads.emplace_back([&impl] { impl.link->run(); });
  threads.emplace_back([&impl] { impl.work->batch_timer_loop(); });
  bool starved = false;  // out of descriptors: logged once per episode
  while (!stop) {
    std::unique_ptr<Connection> c;
    try {
      c = impl.listener->accept(Seconds(0.2));
    } catch (const std::exception& e) {
      ctx.log(std::string("accepting a connection failed: ") + e.what());
      std::this_thread::sleep_for(Seconds(0.2));
    }
    if (impl.listener->out_of_descriptors() != starved) {
      starved = !starved;
      ctx.log(starved ? "out of file descriptors: new connections wait until some close" : "file descriptors available again: accepting connections");
    }
    if (c) impl.start_handshake(std::move(c));
    const auto held = ctx.lock.hold();
    impl.sessions->reap_retired(held);
    impl.peers->reap(held);
  }
  impl.listener->close();
  impl.handshakes.wait_idle();
  {
    const auto held = ctx.lock.hold();
    impl.sessions->close_all(held);
    impl.cloud->close_all(held);
    impl.peers->close_all(held);
    impl.work->wake_all();
    impl.scheduling->wake_all();
  }
  for (auto& t : threads) t.join();
  impl.cloud->close_link();  // what the cloud still holds fails ("the edge server is stopping")
  std::set<std::shared_ptr<Handler>> all;
  {
    const auto held = ctx.lock.hold();
    for (auto& h : impl.sessions->every_handler(held)) all.insert(h);
    for (auto& h : impl.cloud->edges(held)) all.insert(h);
  }
  for (auto& h : all) {
    h->conn->close();
    if (h->reader.joinable()) h->reader.join();
  }
  impl.peers->join_all();
  ctx.log("stopped");
}

}  // namespace coinfer::hw
