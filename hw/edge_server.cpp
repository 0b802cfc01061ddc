#include "hw/edge_server.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/bandwidth_schedule.hpp"
#include "core/input_error.hpp"
#include "core/system_state.hpp"
#include "hw/auth.hpp"
#include "hw/compute_threads.hpp"
#include "hw/connection.hpp"
#include "hw/protocol.hpp"
#include "io/atomic_dir.hpp"
#include "models/gnn_model.hpp"
#include "sched/scheduler_factory.hpp"

namespace coinfer::hw {

namespace {
using Seconds = std::chrono::duration<double>;

// One connected device (ACE-GNN Fig. 9's per-device handler).
struct Handler {
  int index = -1;  // in the scenario's devices
  std::string id;
  std::unique_ptr<Connection> conn;
  std::thread reader;
  std::atomic<bool> alive{true};
  bool generates = true;
  DeviceStatus status;
  bool helper_busy = false;  // a helper running forwarded work
};

struct Pending {
  std::shared_ptr<Handler> origin;
  std::uint64_t task = 0;
  int split = 0;
  std::string state_bytes;
  double t_received = 0, t_queued = 0;
  int group = 0;  // (model, dataset, split) id: only equal groups batch together
};

// Requests forwarded to a helper, awaiting its result (keyed by the helper's task id).
struct Forwarded {
  std::shared_ptr<Handler> origin;
  std::uint64_t origin_task = 0;
  double t_received = 0, t_queued = 0;
  std::string helper;
};
}  // namespace

struct EdgeServer::Impl {
  Scenario sc;
  ModelCatalog catalog;
  LutSet luts;
  ServeOptions opt;
  int server_index = 0;
  std::vector<ModelSpec> specs;              // per scenario device
  std::vector<BandwidthSchedule> schedules;  // per scenario device
  std::unique_ptr<AnalyticEstimator> estimator;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Listener> listener;

  std::mutex m;
  std::condition_variable work_cv, sched_cv;
  std::map<int, std::shared_ptr<Handler>> handlers;  // by device index (live registrations)
  std::vector<std::shared_ptr<Handler>> retired;     // closed handlers whose reader may still run
  std::deque<Pending> queue;
  std::map<std::uint64_t, Forwarded> forwarded;
  std::uint64_t next_forward_id = 1;
  int busy_workers = 0;
  std::map<std::string, int> groups;
  std::vector<Strategy> strategy;        // per scenario device: current
  std::vector<double> bw_at_decision;    // per scenario device
  std::vector<std::string> helpers;      // current scheme's helpers
  std::string pending_triggers;
  std::ofstream decisions;
  const std::atomic<bool>* stop = nullptr;

  double now() const { return unix_now() - opt.epoch_unix_s; }
  void log(const std::string& line) const {
    if (opt.log) opt.log(line);
    else std::cerr << "[serve] " << line << std::endl;
  }
  int group_of(int device, int split) {
    const std::string key = sc.devices[device].model + "/" + sc.devices[device].dataset + "/" + std::to_string(split);
    auto it = groups.find(key);
    if (it != groups.end()) return it->second;
    const int id = static_cast<int>(groups.size());
    groups[key] = id;
    return id;
  }
  void trigger(const std::string& why) {  // m held
    pending_triggers += (pending_triggers.empty() ? "" : "+") + why;
    sched_cv.notify_all();
  }

  // --- connections -------------------------------------------------------------------------------
  void handshake(std::unique_ptr<Connection> conn) {
    const std::string peer = conn->peer();
    try {
      const std::string nonce = random_nonce_hex();
      conn->send({MsgType::hello, 0, encode(Hello{kProtocolVersion, nonce})}, Seconds(5));
      auto f = conn->receive(Seconds(10));
      if (!f) throw ProtocolError("no registration within 10 s");
      if (f->type != MsgType::register_) throw ProtocolError(std::string("expected register, got ") + to_string(f->type));
      Registration r = decode_registration(f->payload);
      if (!constant_time_equal(r.hmac, hmac_sha256_hex(opt.secret, nonce + r.device_id)))
        return reject(*conn, peer, "authentication failed for device '" + r.device_id + "' (wrong secret)");
      const int index = sc.device_index(r.device_id);
      if (index < 0) return reject(*conn, peer, "unknown device '" + r.device_id + "' (not in scenario " + sc.name + ")");
      const DeviceSpec& d = sc.devices[index];
      if (d.server != sc.servers[server_index].id)
        return reject(*conn, peer, "device '" + r.device_id + "' belongs to server '" + d.server + "'");
      if (r.type != d.type)
        return reject(*conn, peer, "device '" + r.device_id + "' registered as type '" + r.type + "', the scenario says '" + d.type + "'");
      if (r.model != d.model || r.dataset != d.dataset)
        return reject(*conn, peer, "this server does not have model " + r.model + "/" + r.dataset + " for device '" + r.device_id +
                                       "' (it serves " + d.model + "/" + d.dataset + ")");
      auto h = std::make_shared<Handler>();
      h->index = index;
      h->id = r.device_id;
      h->generates = r.generates;
      h->conn = std::move(conn);
      apply_shaping(*h);
      Assignment a;
      {
        std::lock_guard<std::mutex> lock(m);
        if (auto old = handlers.find(index); old != handlers.end()) {  // a reconnection replaces the old one
          old->second->alive = false;
          old->second->conn->close();
          retired.push_back(old->second);
        }
        handlers[index] = h;
        a.strategy = strategy[index].to_string();
        for (const auto& x : helpers) a.helper = a.helper || x == h->id;
        h->conn->send({MsgType::registered, 0, encode(a)}, Seconds(5));
        trigger("join:" + h->id);
      }
      log("device " + h->id + " registered from " + peer + " (" + a.strategy + ")");
      h->reader = std::thread([this, h] { read_loop(h); });
    } catch (const ProtocolError& e) {
      // hw/README.md: a protocol error is answered with an error frame naming it, then the close.
      if (conn) reject(*conn, peer, std::string("registration protocol error: ") + e.what());
    } catch (const std::exception& e) {
      log("connection from " + peer + " closed during registration: " + e.what());
      if (conn) conn->close();
    }
  }

  // Handshakes run on their own threads, detached; at most kMaxHandshakes at once (a connection
  // beyond that is refused with an error frame), each thread's resources are reclaimed when it ends,
  // and shutdown waits for the running ones (each is bounded by its 10 s registration timeout).
  static constexpr int kMaxHandshakes = 32;
  std::mutex hs_m;
  std::condition_variable hs_cv;
  int handshakes_running = 0;
  void start_handshake(std::unique_ptr<Connection> conn) {
    {
      std::lock_guard<std::mutex> lock(hs_m);
      if (handshakes_running >= kMaxHandshakes) {
        const std::string peer = conn->peer();
        reject(*conn, peer, "too many registrations in progress (" + std::to_string(kMaxHandshakes) + "); try again");
        return;
      }
      ++handshakes_running;
    }
    std::thread([this, c = std::move(conn)]() mutable {
      handshake(std::move(c));
      std::lock_guard<std::mutex> lock(hs_m);
      --handshakes_running;
      hs_cv.notify_all();
    }).detach();
  }
  void wait_for_handshakes() {
    std::unique_lock<std::mutex> lock(hs_m);
    hs_cv.wait(lock, [this] { return handshakes_running == 0; });
  }

  void apply_shaping(Handler& h) const {
    const double latency = (sc.devices[h.index].link.latency_ms + sc.access_point.latency_ms) * 1e-3;
    if (opt.shape) h.conn->set_shaping({schedules[h.index].bytes_per_s_at(now()), latency});
    else if (opt.shape_latency) h.conn->set_shaping({0, latency});
  }

  void reject(Connection& c, const std::string& peer, const std::string& why) {
    log("rejected " + peer + ": " + why);
    try {
      c.send({MsgType::error, 0, encode_error(why)}, Seconds(2));
    } catch (const std::exception&) {
    }
    c.close();
  }

  void read_loop(std::shared_ptr<Handler> h) {
    double last_heard = now();
    std::string why = "closed";
    try {
      while (!*stop && h->alive) {
        apply_shaping(*h);
        auto f = h->conn->receive(Seconds(opt.heartbeat_s));
        if (!f) {
          if (now() - last_heard > 5 * opt.heartbeat_s) throw ConnectionClosed("silent for " + std::to_string(5 * opt.heartbeat_s) + " s");
          continue;
        }
        last_heard = now();
        switch (f->type) {
          case MsgType::task: on_task(h, *f); break;
          case MsgType::result: on_helper_result(h, *f); break;
          case MsgType::heartbeat: on_status(h, decode_status(f->payload)); break;
          case MsgType::error: throw ConnectionClosed("device said: " + decode_error(f->payload));
          default: throw ProtocolError(std::string("unexpected ") + to_string(f->type) + " message from a device");
        }
      }
    } catch (const ProtocolError& e) {
      why = std::string("protocol error: ") + e.what();
      try {
        h->conn->send({MsgType::error, 0, encode_error(e.what())}, Seconds(1));
      } catch (const std::exception&) {
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    h->conn->close();
    std::lock_guard<std::mutex> lock(m);
    h->alive = false;
    retired.push_back(h);  // joined at shutdown
    // Work forwarded to this device as a helper is reported failed to its origin.
    for (auto f = forwarded.begin(); f != forwarded.end();)
      if (f->second.helper == h->id) {
        ResultHeader r;
        r.ok = false;
        r.error = "helper " + h->id + " disconnected";
        reply(f->second.origin, f->second.origin_task, r, "");
        f = forwarded.erase(f);
      } else {
        ++f;
      }
    auto it = handlers.find(h->index);
    if (it != handlers.end() && it->second == h) {
      handlers.erase(it);
      if (!*stop) {
        log("device " + h->id + " disconnected: " + why);
        trigger("leave:" + h->id);
      }
      // Its queued tasks cannot be answered any more: the device records them failed itself.
      size_t dropped = 0;
      for (auto q = queue.begin(); q != queue.end();)
        if (q->origin == h) {
          q = queue.erase(q);
          ++dropped;
        } else {
          ++q;
        }
      if (dropped) log("dropped " + std::to_string(dropped) + " queued tasks of " + h->id);
    }
  }

  void on_task(const std::shared_ptr<Handler>& h, const Frame& f) {
    Pending p;
    p.origin = h;
    p.task = f.task_id;
    p.t_received = unix_now();
    TaskHeader th = unpack_task(f.payload, p.state_bytes);
    const int n = specs[h->index].num_stages();
    if (th.split < 0 || th.split >= n) throw ProtocolError("task split " + std::to_string(th.split) + " out of range 0.." + std::to_string(n - 1));
    p.split = th.split;
    p.t_queued = unix_now();
    std::lock_guard<std::mutex> lock(m);
    p.group = group_of(h->index, p.split);
    queue.push_back(std::move(p));
    work_cv.notify_one();
    forward_waiting();
  }

  void on_status(const std::shared_ptr<Handler>& h, const DeviceStatus& s) {
    std::lock_guard<std::mutex> lock(m);
    h->status = s;
    const double before = bw_at_decision[h->index];
    if (s.bandwidth_mbps > 0 && before > 0 &&
        std::fabs(s.bandwidth_mbps - before) / before > sc.scheduler.bandwidth_threshold_pct / 100) {
      bw_at_decision[h->index] = s.bandwidth_mbps;  // one trigger per change
      trigger("bandwidth:" + h->id);
    }
  }

  void on_helper_result(const std::shared_ptr<Handler>& helper, const Frame& f) {
    Forwarded fw;
    {
      std::lock_guard<std::mutex> lock(m);
      auto it = forwarded.find(f.task_id);
      if (it == forwarded.end()) throw ProtocolError("result for a task that was not forwarded to this device");
      fw = it->second;
      forwarded.erase(it);
      helper->helper_busy = false;
      work_cv.notify_all();
    }
    std::string out;
    ResultHeader r = unpack_result(f.payload, out);
    r.helper = helper->id;
    r.t_received = fw.t_received;
    r.t_queued = fw.t_queued;
    reply(fw.origin, fw.origin_task, r, out);
  }

  void reply(const std::shared_ptr<Handler>& h, std::uint64_t task, const ResultHeader& r, const std::string& out) {
    if (!h->alive) return;
    try {
      h->conn->send({MsgType::result, task, pack_result(r, out)});
    } catch (const std::exception& e) {
      log("result for " + h->id + " task " + std::to_string(task) + " not delivered: " + e.what());
    }
  }

  // --- batching and workers ----------------------------------------------------------------------
  // Picks the next batch (m held): the group of the oldest queued task, once it is full or its window
  // has passed. Returns false and sets `wake` to the earliest window end otherwise.
  bool take_batch(std::vector<Pending>& batch, double& wake) {
    const ServerSpec& sv = sc.servers[server_index];
    wake = 1e300;
    std::map<int, int> count;
    for (const auto& p : queue) ++count[p.group];
    std::map<int, bool> seen;
    for (const auto& p : queue) {
      if (seen[p.group]) continue;
      seen[p.group] = true;
      const double due = p.t_queued + sv.batch.window_ms * 1e-3;
      if (count[p.group] >= sv.batch.max_size || unix_now() >= due) {
        const int g = p.group;
        for (auto q = queue.begin(); q != queue.end() && static_cast<int>(batch.size()) < sv.batch.max_size;) {
          if (q->group == g) {
            batch.push_back(std::move(*q));
            q = queue.erase(q);
          } else {
            ++q;
          }
        }
        return true;
      }
      wake = std::min(wake, due);
    }
    return false;
  }

  // A helper idle now, if the scheme names one (m held).
  std::shared_ptr<Handler> idle_helper() {
    for (const auto& id : helpers) {
      const int i = sc.device_index(id);
      auto it = handlers.find(i);
      if (it != handlers.end() && it->second->alive && !it->second->helper_busy && !it->second->status.busy) return it->second;
    }
    return nullptr;
  }

  void worker_loop(int worker) {
    set_compute_threads(opt.threads_per_worker);
    torch::NoGradGuard no_grad;
    std::map<std::string, std::unique_ptr<models::GnnModel>> models_by_pair;  // a worker's own copies
    while (!*stop) {
      std::vector<Pending> batch;
      {
        std::unique_lock<std::mutex> lock(m);
        double wake = 0;
        if (!take_batch(batch, wake)) {
          const double wait = std::min(0.1, std::max(0.0, wake - unix_now()));
          work_cv.wait_for(lock, Seconds(wait));
          continue;
        }
        ++busy_workers;
        forward_waiting();
      }
      run_batch(batch, models_by_pair);
      std::lock_guard<std::mutex> lock(m);
      --busy_workers;
      forward_waiting();
    }
  }

  // When every worker is busy, pending single tasks go to idle helpers (m held).
  void forward_waiting() {
    while (!queue.empty() && busy_workers >= sc.servers[server_index].workers) {
      auto helper = idle_helper();
      if (!helper) return;
      Pending p = std::move(queue.front());
      queue.pop_front();
      const std::uint64_t id = next_forward_id++;
      forwarded[id] = {p.origin, p.task, p.t_received, p.t_queued, helper->id};
      helper->helper_busy = true;
      TaskHeader th{p.split, p.origin->id, unix_now()};
      try {
        helper->conn->send({MsgType::task, id, pack_task(th, p.state_bytes)});
      } catch (const std::exception& e) {
        forwarded.erase(id);
        ResultHeader r;
        r.ok = false;
        r.error = "forwarding to helper " + helper->id + " failed: " + e.what();
        reply(p.origin, p.task, r, "");
      }
    }
  }

  void run_batch(std::vector<Pending>& batch, std::map<std::string, std::unique_ptr<models::GnnModel>>& cache) {
    const int device = batch.front().origin->index;
    const ModelSpec& spec = specs[device];
    const std::string key = spec.name + "/" + spec.dataset.name;
    auto& model = cache[key];
    if (!model) model = std::make_unique<models::GnnModel>(spec, 1);
    ResultHeader r;
    r.batch_size = static_cast<int>(batch.size());
    r.t_batch_start = unix_now();
    std::vector<std::string> outputs(batch.size());
    std::string error;
    try {
      std::vector<models::SplitState> states;
      for (auto& p : batch) states.push_back(models::deserialize(p.state_bytes));
      // Point-cloud states (every tensor [1, ...], no graph) run as one batch along dimension 0;
      // graph states run one after another in this worker (a disjoint union would pool across graphs).
      bool stackable = batch.size() > 1;
      for (auto& s : states) {
        if (s.edge_index.defined()) stackable = false;
        for (auto& [id, t] : s.tensors)
          if (t.dim() == 0 || t.size(0) != 1) stackable = false;
      }
      if (stackable) {
        models::SplitState all;
        all.next_stage = states[0].next_stage;
        for (auto& [id, t] : states[0].tensors) {
          std::vector<torch::Tensor> parts;
          for (auto& s : states) parts.push_back(s.tensors.at(id));
          all.tensors[id] = torch::cat(parts, 0);
        }
        model->run(all, spec.num_stages());
        torch::Tensor out = model->output(all);
        for (size_t i = 0; i < batch.size(); ++i) {
          models::SplitState o;
          o.next_stage = spec.num_stages();
          o.tensors[spec.num_stages() - 1] = out.narrow(0, static_cast<int64_t>(i), 1).contiguous();
          outputs[i] = models::serialize(o);
        }
      } else {
        for (size_t i = 0; i < batch.size(); ++i) {
          model->run(states[i], spec.num_stages());
          models::SplitState o;
          o.next_stage = spec.num_stages();
          o.tensors[spec.num_stages() - 1] = model->output(states[i]).contiguous();
          outputs[i] = models::serialize(o);
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
      log("batch of " + std::to_string(batch.size()) + " for " + key + " failed: " + error);
    }
    r.t_batch_end = unix_now();
    for (size_t i = 0; i < batch.size(); ++i) {
      ResultHeader ri = r;
      ri.t_received = batch[i].t_received;
      ri.t_queued = batch[i].t_queued;
      ri.ok = error.empty();
      ri.error = error;
      reply(batch[i].origin, batch[i].task, ri, outputs[i]);
    }
  }

  // --- scheduling --------------------------------------------------------------------------------
  SystemState snapshot() {  // m held
    SystemState st = scenario_state(sc, now());
    for (size_t i = 0; i < st.devices.size(); ++i) {
      auto it = handlers.find(static_cast<int>(i));
      DeviceState& d = st.devices[i];
      d.connected = it != handlers.end() && it->second->alive;
      d.strategy = strategy[i];
      if (!d.connected) continue;
      const DeviceStatus& s = it->second->status;
      if (s.bandwidth_mbps > 0) d.link_bandwidth_mbps = s.bandwidth_mbps;
      d.queue_length = s.queue_length;
      d.unfinished = s.unfinished;
      d.busy = s.busy;
      d.generates = it->second->generates;
    }
    for (auto& s : st.servers)
      if (s.id == sc.servers[server_index].id) {
        s.queue_length = static_cast<int>(queue.size());
        s.busy_workers = busy_workers;
      }
    return st;
  }

  void decide(const std::string& why) {  // m held
    SystemState state = snapshot();
    const auto t0 = std::chrono::steady_clock::now();
    Scheme scheme = scheduler->decide(state);
    const double wall = Seconds(std::chrono::steady_clock::now() - t0).count();
    const Prediction p = estimator->predict(state, scheme);
    int switched = 0;
    helpers = scheme.helpers;
    for (auto& [index, h] : handlers) {
      auto it = scheme.strategies.find(h->id);
      bool is_helper = false;
      for (const auto& x : helpers) is_helper = is_helper || x == h->id;
      if (it == scheme.strategies.end()) continue;
      if (it->second == strategy[index] && !is_helper) continue;
      const bool changed = it->second != strategy[index];
      strategy[index] = it->second;
      switched += changed;
      try {
        h->conn->send({MsgType::scheduling, 0, encode(Assignment{it->second.to_string(), is_helper})}, Seconds(2));
      } catch (const std::exception& e) {
        log("scheduling message to " + h->id + " failed: " + e.what());
      }
    }
    for (size_t i = 0; i < state.devices.size(); ++i) bw_at_decision[i] = state.devices[i].link_bandwidth_mbps;
    log("decision (" + why + "): " + scheme.to_string() + ", " + std::to_string(switched) + " switched");
    if (decisions.is_open()) {
      decisions << nlohmann::json{{"t_s", state.time_s},
                                  {"trigger", why},
                                  {"scheme", scheme.to_string()},
                                  {"predicted_throughput_rps", p.throughput_rps},
                                  {"predicted_latency_ms", p.mean_latency_s * 1e3},
                                  {"switched", switched},
                                  {"wall_s", wall}}
                       .dump()
                << "\n";
      decisions.flush();
    }
  }

  void scheduler_loop() {
    const double period = sc.scheduler.period_s;
    double next_period = period > 0 ? now() + period : 1e300;
    std::unique_lock<std::mutex> lock(m);
    while (!*stop) {
      if (pending_triggers.empty()) {
        sched_cv.wait_for(lock, Seconds(std::min(0.2, std::max(0.0, next_period - now()))));
        if (now() >= next_period) {
          pending_triggers += (pending_triggers.empty() ? "" : "+") + std::string("period");
          next_period += period;
        }
        continue;
      }
      // Gather triggers arriving together (e.g. several devices registering) into one decision.
      lock.unlock();
      std::this_thread::sleep_for(Seconds(0.02));
      lock.lock();
      std::string why;
      std::swap(why, pending_triggers);
      decide(why);
    }
  }
};

EdgeServer::EdgeServer(Scenario scenario, ModelCatalog catalog, LutSet luts, ServeOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  I.sc = std::move(scenario);
  I.catalog = std::move(catalog);
  I.luts = std::move(luts);
  I.opt = std::move(options);
  if (I.opt.server_id.empty()) I.opt.server_id = I.sc.servers.at(0).id;
  I.server_index = I.sc.server_index(I.opt.server_id);
  if (I.server_index < 0)
    throw InputError(SourceLocation{I.sc.file, 0, 0}, "servers", "no server '" + I.opt.server_id + "' in the scenario");
  ModelSpecs specs;
  for (const auto& d : I.sc.devices) {
    I.specs.push_back(I.catalog.instantiate(d.model, d.dataset));
    specs.emplace(d.model + "/" + d.dataset, I.specs.back());
    I.schedules.emplace_back(d, I.sc.events);
    I.strategy.push_back(d.strategy);
    I.bw_at_decision.push_back(d.link.bandwidth_mbps);
    models::GnnModel check(I.specs.back(), 1);  // the server must be able to realise every model it serves
  }
  I.estimator = make_estimator(I.sc, I.luts, std::move(specs));
  I.scheduler = make_scheduler(I.sc, *I.estimator);
  if (I.opt.epoch_unix_s <= 0) I.opt.epoch_unix_s = unix_now();
  if (!I.opt.decisions_out.empty()) {
    I.decisions.open(I.opt.decisions_out, std::ios::trunc);
    if (!I.decisions) throw InputError(SourceLocation{I.opt.decisions_out, 0, 0}, "--decisions-out", "cannot write this file");
  }
  I.listener = std::make_unique<Listener>(I.opt.bind, I.opt.port);
  if (!I.opt.port_file.empty()) write_text_atomic(I.opt.port_file, std::to_string(I.listener->port()) + "\n");
}

EdgeServer::~EdgeServer() = default;

int EdgeServer::port() const { return impl_->listener->port(); }

void EdgeServer::run(const std::atomic<bool>& stop) {
  Impl& I = *impl_;
  I.stop = &stop;
  I.log("serving " + I.sc.servers[I.server_index].id + " of scenario " + I.sc.name + " on " + I.opt.bind + ":" +
        std::to_string(port()) + " (" + std::to_string(I.sc.servers[I.server_index].workers) + " workers, scheduler " +
        I.scheduler->name() + ")");
  {
    std::lock_guard<std::mutex> lock(I.m);
    I.trigger("start");
  }
  std::vector<std::thread> threads;
  for (int w = 0; w < I.sc.servers[I.server_index].workers; ++w) threads.emplace_back([&I, w] { I.worker_loop(w); });
  threads.emplace_back([&I] { I.scheduler_loop(); });
  while (!stop) {
    auto c = I.listener->accept(Seconds(0.2));
    if (c) I.start_handshake(std::move(c));
  }
  I.listener->close();
  I.wait_for_handshakes();
  {
    std::lock_guard<std::mutex> lock(I.m);
    for (auto& [i, h] : I.handlers) h->conn->close();
    I.work_cv.notify_all();
    I.sched_cv.notify_all();
  }
  for (auto& t : threads) t.join();
  std::set<std::shared_ptr<Handler>> all;
  {
    std::lock_guard<std::mutex> lock(I.m);
    for (auto& [i, h] : I.handlers) all.insert(h);
    for (auto& h : I.retired) all.insert(h);
  }
  for (auto& h : all) {
    h->conn->close();
    if (h->reader.joinable()) h->reader.join();
  }
  I.log("stopped");
}

}  // namespace coinfer::hw
