// Soak test of the real edge server: `coinfer-rt serve` runs as its own process;
// this program is N devices speaking the wire protocol (registration with the shared secret, real
// GCN tasks the server runs with LibTorch, heartbeats) that register, run, disconnect -- gracefully
// or abruptly with a task in flight -- and reconnect, for a given time, while peers that never
// authenticate send garbage in parallel. Every `--sample-every` seconds it records the server's open
// descriptors, threads, resident and virtual memory (/proc/PID) in a CSV. At the end it checks:
//   - every task sent on a session the device ended gracefully got exactly one result, and every
//     failed result says why (no request lost silently);
//   - no session was dropped by the server;
//   - once idle again, the server holds as many descriptors and threads as before the load (+2),
//     and its memory is flat: resident growth from the first sample under load to the idle end at
//     most 64 MiB, virtual growth at most glibc's malloc-arena budget + 128 MiB.
// Exit 0 when all hold, 1 otherwise (the reasons on stderr), 2 on bad arguments.
#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/write.hpp>

#include "core/random_stream.hpp"
#include "hw/auth.hpp"
#include "hw/connection.hpp"
#include "hw/protocol.hpp"
#include "io/model_spec_loader.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"
#include "models/split_state.hpp"

using namespace coinfer;
using namespace coinfer::hw;
using Seconds = std::chrono::duration<double>;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int port = 0;
  std::string secret, id_prefix = "dev", root, csv;
  int devices = 50, garbage_peers = 2;
  long pid = 0;
  double seconds = 60, sample_every = 10;
  std::uint64_t seed = 1;
};

struct Totals {
  std::atomic<long long> sessions{0}, registrations_refused_busy{0}, tasks_sent{0}, results_ok{0}, results_failed{0}, failed_without_reason{0},
      missing{0}, abandoned{0}, dropped_sessions{0}, duplicate_results{0}, garbage{0};
  std::mutex m;
  std::set<std::string> failure_reasons, drop_reasons;
};

struct ProcSample {
  long fds = -1, threads = -1, rss_kb = -1, vm_kb = -1;
};

ProcSample sample_process(long pid) {
  ProcSample s;
  const std::string base = "/proc/" + std::to_string(pid);
  std::ifstream in(base + "/status");
  for (std::string line; std::getline(in, line);) {
    auto field = [&](const char* name, long& out) {
      const std::string key = std::string(name) + ":";
      if (line.rfind(key, 0) == 0) out = std::stol(line.substr(key.size()));
    };
    field("Threads", s.threads);
    field("VmRSS", s.rss_kb);
    field("VmSize", s.vm_kb);
  }
  if (DIR* d = ::opendir((base + "/fd").c_str())) {
    s.fds = 0;
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++s.fds;
    ::closedir(d);
  }
  return s;
}

double elapsed_s(Clock::time_point t0) { return Seconds(Clock::now() - t0).count(); }

// One simulated device: sessions of 0.5-3 s of closed-loop tasks until `end`.
void device_loop(const Options& o, int index, const std::string& state_bytes, Clock::time_point end, Totals& t) {
  RandomStream rng(o.seed, StreamPurpose::soak_load, static_cast<std::uint64_t>(index));
  const std::string id = o.id_prefix + std::to_string(index);
  std::uint64_t next_task = 1;
  while (Clock::now() < end) {
    std::unique_ptr<Connection> c;
    std::set<std::uint64_t> outstanding;
    bool graceful = true;
    try {
      c = Connection::connect("127.0.0.1", o.port, Seconds(5));
      auto hello = c->receive(Seconds(10));
      if (hello && hello->type == MsgType::error && decode_error(hello->payload).find("too many registrations in progress") != std::string::npos) {
        ++t.registrations_refused_busy;  // the server's handshake gate was full: it said so, try again
        c.reset();
        std::this_thread::sleep_for(Seconds(0.1));
        continue;
      }
      if (!hello) throw ConnectionClosed("no hello within 10 s");
      if (hello->type != MsgType::hello)
        throw ConnectionClosed(std::string("expected hello, got ") + to_string(hello->type) +
                               (hello->type == MsgType::error ? ": " + decode_error(hello->payload) : std::string()));
      c->send({MsgType::register_, 0,
               encode(Registration{id, "rpi4b", "gcn", "mr", true, hmac_sha256_hex(o.secret, decode_hello(hello->payload).nonce + id)})});
      auto answer = c->receive(Seconds(10));
      if (!answer) throw ConnectionClosed("no answer to the registration");
      if (answer->type == MsgType::error) {
        const std::string why = decode_error(answer->payload);
        if (why.find("too many registrations in progress") != std::string::npos) {
          ++t.registrations_refused_busy;  // the handshake gate, full of garbage peers: try again
          std::this_thread::sleep_for(Seconds(0.1));
          continue;
        }
        throw ConnectionClosed("registration refused: " + why);
      }
      if (answer->type != MsgType::registered) throw ConnectionClosed(std::string("expected registered, got ") + to_string(answer->type));
      ++t.sessions;
      const auto session_end = Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(0.5 + 2.5 * rng.next_unit()));
      graceful = rng.next_unit() >= 0.2;
      auto last_sent = Clock::now();
      while (Clock::now() < session_end && Clock::now() < end) {
        const std::uint64_t task = next_task++;
        c->send({MsgType::task, task, pack_task(TaskHeader{0, id, unix_now()}, state_bytes)});
        last_sent = Clock::now();
        outstanding.insert(task);
        ++t.tasks_sent;
        const auto give_up = Clock::now() + std::chrono::seconds(30);
        while (outstanding.count(task) && Clock::now() < give_up) {
          auto f = c->receive(Seconds(0.5));
          if (Clock::now() - last_sent > std::chrono::seconds(1)) {
            c->send({MsgType::heartbeat, 0, encode(DeviceStatus{20, 0, 1, true})});
            last_sent = Clock::now();
          }
          if (!f || f->type != MsgType::result) continue;  // scheduling messages, heartbeats
          if (!outstanding.erase(f->task_id)) {
            ++t.duplicate_results;
            continue;
          }
          std::string out;
          const ResultHeader r = unpack_result(f->payload, out);
          if (r.ok) {
            ++t.results_ok;
          } else {
            ++t.results_failed;
            if (r.error.empty()) ++t.failed_without_reason;
            std::lock_guard<std::mutex> lock(t.m);
            t.failure_reasons.insert(r.error);
          }
        }
        if (outstanding.count(task)) {  // 30 s without an answer: lost by the server
          t.missing += static_cast<long long>(outstanding.size());
          outstanding.clear();
          break;
        }
      }
      if (!graceful) {  // hang up with a task in flight: the device's own choice, not a loss
        c->send({MsgType::task, next_task++, pack_task(TaskHeader{0, id, unix_now()}, state_bytes)});
        ++t.tasks_sent;
        ++t.abandoned;
      }
      c->close();
    } catch (const std::exception& e) {
      ++t.dropped_sessions;
      t.missing += static_cast<long long>(outstanding.size());
      std::lock_guard<std::mutex> lock(t.m);
      t.drop_reasons.insert(e.what());
    }
    c.reset();
    std::this_thread::sleep_for(Seconds(0.3 * rng.next_unit()));
  }
}

// A peer that never authenticates: random bytes, a header announcing 64 MiB, a task before
// registering, half a header, or a silent connection held 1-3 s.
void garbage_loop(const Options& o, int index, Clock::time_point end, Totals& t) {
  RandomStream rng(o.seed, StreamPurpose::soak_load, 1000 + static_cast<std::uint64_t>(index));
  asio::io_context io;
  while (Clock::now() < end) {
    asio::ip::tcp::socket s(io);
    asio::error_code ec;
    s.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(o.port)}, ec);
    if (ec) {
      std::this_thread::sleep_for(Seconds(0.1));
      continue;
    }
    std::string bytes;
    const int kind = static_cast<int>(rng.next_unit() * 5);
    if (kind == 0) {
      bytes.resize(1 + static_cast<size_t>(rng.next_unit() * 2000));
      for (char& ch : bytes) ch = static_cast<char>(rng.next_u64());
    } else if (kind == 1) {
      bytes = encode_frame({MsgType::register_, 0, ""});
      for (int i = 0; i < 4; ++i) bytes[16 + i] = bytes[20 + i] = static_cast<char>(((64u << 20) >> (8 * i)) & 0xff);
      bytes += std::string(500, 'x');
    } else if (kind == 2) {
      bytes = encode_frame({MsgType::task, 1, pack_task({0, "x", 0}, std::string(100, 'y'))});
    } else if (kind == 3) {
      bytes = encode_frame({MsgType::register_, 0, "{}"}).substr(0, 11);
    }
    if (!bytes.empty())
      asio::write(s, asio::buffer(bytes), ec);
    else
      std::this_thread::sleep_for(Seconds(1 + 2 * rng.next_unit()));
    s.close(ec);
    ++t.garbage;
    std::this_thread::sleep_for(Seconds(0.02));
  }
}

int usage(const char* why) {
  std::fprintf(stderr,
               "serve_soak: %s\nusage: serve_soak --port P --secret-file F --server-pid PID --root SOURCE_DIR [--devices 50] "
               "[--garbage-peers 2] [--seconds 60] [--sample-every 10] [--csv FILE] [--id-prefix dev] [--seed 1]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string secret_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(("missing value after " + a).c_str());
    const std::string v = argv[++i];
    try {
      if (a == "--port")
        o.port = std::stoi(v);
      else if (a == "--secret-file")
        secret_file = v;
      else if (a == "--server-pid")
        o.pid = std::stol(v);
      else if (a == "--root")
        o.root = v;
      else if (a == "--devices")
        o.devices = std::stoi(v);
      else if (a == "--garbage-peers")
        o.garbage_peers = std::stoi(v);
      else if (a == "--seconds")
        o.seconds = std::stod(v);
      else if (a == "--sample-every")
        o.sample_every = std::stod(v);
      else if (a == "--csv")
        o.csv = v;
      else if (a == "--id-prefix")
        o.id_prefix = v;
      else if (a == "--seed")
        o.seed = std::stoull(v);
      else
        return usage(("unknown option " + a).c_str());
    } catch (const std::exception&) {
      return usage(("bad value for " + a + ": " + v).c_str());
    }
  }
  if (o.port <= 0 || o.pid <= 0 || o.root.empty() || secret_file.empty()) return usage("--port, --server-pid, --root and --secret-file are required");
  if (o.devices < 1 || o.devices > 1000 || o.garbage_peers < 0 || o.garbage_peers > 32 || o.seconds <= 0 || o.sample_every <= 0)
    return usage("out of range: 1 <= devices <= 1000, 0 <= garbage peers <= 32, seconds and sample-every > 0");
  {
    std::ifstream in(secret_file);
    std::getline(in, o.secret);
    if (!in && o.secret.empty()) return usage(("cannot read " + secret_file).c_str());
  }
  // The state a device that offloads sends: GCN on an MR-like graph, before stage 0.
  const ModelSpec spec = ModelCatalog::load(o.root + "/models").instantiate("gcn", "mr");
  models::GnnModel model(spec, 1);
  const std::string state = models::serialize(model.start(models::generate_sample(spec.dataset, o.seed, 0).sample));

  const ProcSample idle0 = sample_process(o.pid);
  if (idle0.fds < 0) return usage(("no process " + std::to_string(o.pid)).c_str());
  std::ofstream csv;
  if (!o.csv.empty()) {
    csv.open(o.csv, std::ios::trunc);
    csv << "# serve_soak: " << o.devices << " devices, " << o.garbage_peers << " garbage peers, " << o.seconds << " s; server pid " << o.pid
        << " (/proc/PID: fd count, Threads, VmRSS, VmSize)\n"
        << "t_s,phase,fds,threads,rss_kb,vm_kb,sessions,tasks_sent,results_ok,results_failed,garbage\n";
  }
  Totals t;
  const auto t0 = Clock::now();
  std::mutex rows_m;
  std::vector<std::pair<double, ProcSample>> rows;
  auto record = [&](const char* phase, const ProcSample& s) {
    const double at = elapsed_s(t0);
    std::lock_guard<std::mutex> lock(rows_m);
    rows.emplace_back(at, s);
    char line[512];
    std::snprintf(line, sizeof line, "%.1f,%s,%ld,%ld,%ld,%ld,%lld,%lld,%lld,%lld,%lld", at, phase, s.fds, s.threads, s.rss_kb, s.vm_kb,
                  t.sessions.load(), t.tasks_sent.load(), t.results_ok.load(), t.results_failed.load(), t.garbage.load());
    if (csv.is_open()) csv << line << "\n" << std::flush;
    std::fprintf(stderr, "serve_soak %s\n", line);
  };
  record("idle", idle0);
  const auto end = t0 + std::chrono::duration_cast<Clock::duration>(Seconds(o.seconds));
  std::vector<std::thread> threads;
  for (int i = 0; i < o.devices; ++i) threads.emplace_back([&, i] { device_loop(o, i, state, end, t); });
  for (int i = 0; i < o.garbage_peers; ++i) threads.emplace_back([&, i] { garbage_loop(o, i, end, t); });
  ProcSample first_loaded;
  for (int k = 1; Clock::now() < end; ++k) {
    const auto due = t0 + std::chrono::duration_cast<Clock::duration>(Seconds(k * o.sample_every));
    while (Clock::now() < due && Clock::now() < end) std::this_thread::sleep_for(Seconds(0.1));
    if (Clock::now() >= end) break;
    const ProcSample s = sample_process(o.pid);
    if (first_loaded.rss_kb < 0) first_loaded = s;
    record("load", s);
  }
  for (auto& th : threads) th.join();
  // Idle again: the server notices hang-ups at once and reaps within its 0.2 s accept slice;
  // handshake threads of garbage peers end within their 10 s registration timeout.
  ProcSample idle1 = sample_process(o.pid);
  for (int i = 0; i < 150 && (idle1.fds > idle0.fds + 2 || idle1.threads > idle0.threads + 2); ++i) {
    std::this_thread::sleep_for(Seconds(0.1));
    idle1 = sample_process(o.pid);
  }
  record("idle", idle1);
  if (first_loaded.rss_kb < 0) first_loaded = idle1;

  std::vector<std::string> failures;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) failures.push_back(what);
  };
  const long long answered = t.results_ok + t.results_failed;
  check(t.missing == 0, std::to_string(t.missing.load()) + " tasks got no result (lost silently)");
  check(t.dropped_sessions == 0, std::to_string(t.dropped_sessions.load()) + " sessions dropped by the server");
  check(t.failed_without_reason == 0, std::to_string(t.failed_without_reason.load()) + " failed results without a reason");
  check(t.duplicate_results == 0, std::to_string(t.duplicate_results.load()) + " results for tasks not outstanding");
  check(answered + t.abandoned == t.tasks_sent, "tasks sent " + std::to_string(t.tasks_sent.load()) + " != answered " + std::to_string(answered) +
                                                    " + abandoned " + std::to_string(t.abandoned.load()));
  check(t.sessions >= o.devices, "only " + std::to_string(t.sessions.load()) + " sessions");
  check(idle1.fds <= idle0.fds + 2, "descriptors " + std::to_string(idle0.fds) + " idle before -> " + std::to_string(idle1.fds) + " idle after");
  check(idle1.threads <= idle0.threads + 2,
        "threads " + std::to_string(idle0.threads) + " idle before -> " + std::to_string(idle1.threads) + " idle after");
  // Under qemu-user emulation (scripts/board.sh test sets COINFER_EMULATED) the server's memory
  // includes the emulator's translation cache, which grows as new code runs: not checked there.
  const char* emulated = std::getenv("COINFER_EMULATED");
  if (emulated && *emulated) {
    std::fprintf(stderr, "serve_soak: under %s emulation the server's memory includes the emulator's: not checked\n", emulated);
  } else {
    check(idle1.rss_kb - first_loaded.rss_kb <= 64 * 1024,
          "resident memory " + std::to_string(first_loaded.rss_kb) + " kB under load at first -> " + std::to_string(idle1.rss_kb) + " kB at the end");
    const long cores = std::max(1u, std::thread::hardware_concurrency());
    const long arena_budget_kb = 8 * cores * 64 * 1024;
    check(idle1.vm_kb - first_loaded.vm_kb <= arena_budget_kb + 128 * 1024,
          "virtual memory " + std::to_string(first_loaded.vm_kb) + " -> " + std::to_string(idle1.vm_kb) + " kB");
  }
  std::fprintf(stderr,
               "serve_soak: %.0f s, %d devices: %lld sessions (%lld busy refusals retried), %lld tasks sent, %lld ok, %lld failed, "
               "%lld abandoned by a hang-up, %lld missing; %lld garbage connections; descriptors %ld -> %ld, threads %ld -> %ld, "
               "RSS %ld -> %ld kB (first loaded sample %ld kB), VmSize %ld -> %ld kB\n",
               o.seconds, o.devices, t.sessions.load(), t.registrations_refused_busy.load(), t.tasks_sent.load(), t.results_ok.load(),
               t.results_failed.load(), t.abandoned.load(), t.missing.load(), t.garbage.load(), idle0.fds, idle1.fds, idle0.threads, idle1.threads,
               idle0.rss_kb, idle1.rss_kb, first_loaded.rss_kb, idle0.vm_kb, idle1.vm_kb);
  for (const auto& r : t.failure_reasons) std::fprintf(stderr, "serve_soak: a failure reason: %s\n", r.c_str());
  for (const auto& r : t.drop_reasons) std::fprintf(stderr, "serve_soak: a dropped session: %s\n", r.c_str());
  for (const auto& f : failures) std::fprintf(stderr, "serve_soak FAIL: %s\n", f.c_str());
  return failures.empty() ? 0 : 1;
}
