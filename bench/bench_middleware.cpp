// Middleware benchmark (bench/middleware.py drives it; figures in bench/RESULTS.md).
//   bench_middleware rtt ROUNDS            round trips on loopback, 1 KB and 1 MB payloads: the middleware
//                                          (framed, compression attempted, mutexed sends, poll timeouts)
//                                          against a bare TCP ping-pong of the same bytes, alternating,
//                                          medians; prints JSON lines.
//   bench_middleware sink PORT MODE        receives one transfer (MODE frame|bare), answers with 1 byte
//   bench_middleware source HOST PORT MODE MB   sends MB MiB (frames of 1 MiB, or raw), waits for the
//                                          answer; prints JSON with the goodput in Mbit/s
// Payloads are random bytes: zstd cannot shrink them, as with float tensors.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hw/connection.hpp"

using namespace coinfer::hw;
using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;

namespace {

std::string random_bytes(std::size_t n) {
  std::string s(n, '\0');
  unsigned x = 2463534242u;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return s;
}

int listen_on(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4) != 0) {
    std::perror("bind/listen");
    std::exit(1);
  }
  return fd;
}

int connect_to(const char* host, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host, &a.sin_addr);
  for (int i = 0; i < 100; ++i) {
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) break;
    ::close(fd);
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    std::this_thread::sleep_for(Seconds(0.05));
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void write_all(int fd, const char* p, std::size_t n) {
  while (n) {
    ssize_t k = ::write(fd, p, n);
    if (k <= 0) std::exit(1);
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void read_all(int fd, char* p, std::size_t n) {
  while (n) {
    ssize_t k = ::read(fd, p, n);
    if (k <= 0) std::exit(1);
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int rtt(int rounds) {
  // Middleware pair and a bare pair on loopback; echo threads.
  Listener l("127.0.0.1", 0);
  std::unique_ptr<Connection> server;
  std::thread t([&] { server = l.accept(Seconds(5)); });
  auto client = Connection::connect("127.0.0.1", l.port(), Seconds(5));
  t.join();
  const int bare_listen = listen_on(0);
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(bare_listen, reinterpret_cast<sockaddr*>(&a), &len);
  int bare_server = -1;
  std::thread t2([&] { bare_server = ::accept(bare_listen, nullptr, nullptr); });
  const int bare_client = connect_to("127.0.0.1", ntohs(a.sin_port));
  t2.join();
  int one = 1;
  ::setsockopt(bare_server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  for (std::size_t size : {std::size_t(1024), std::size_t(1 << 20)}) {
    const std::string payload = random_bytes(size);
    std::string buf(size, '\0');
    const int n = size > 4096 ? std::max(20, rounds / 2) : rounds;
    std::vector<double> mw, bare;
    std::atomic<bool> done{false};
    std::thread echo([&] {
      for (int i = 0; i < n + 5; ++i) {
        auto f = server->receive(Seconds(10));
        server->send(*f);
      }
    });
    std::thread bare_echo([&] {
      std::string b(size, '\0');
      for (int i = 0; i < n + 5; ++i) {
        read_all(bare_server, b.data(), size);
        write_all(bare_server, b.data(), size);
      }
    });
    for (int i = 0; i < n + 5; ++i) {  // alternate; the first 5 of each are warm-up
      auto t0 = Clock::now();
      client->send({MsgType::task, static_cast<std::uint64_t>(i), payload});
      auto f = client->receive(Seconds(10));
      const double m = Seconds(Clock::now() - t0).count();
      if (!f || f->payload.size() != size) std::exit(1);
      t0 = Clock::now();
      write_all(bare_client, payload.data(), size);
      read_all(bare_client, buf.data(), size);
      const double b = Seconds(Clock::now() - t0).count();
      if (i >= 5) {
        mw.push_back(m);
        bare.push_back(b);
      }
    }
    echo.join();
    bare_echo.join();
    std::printf("{\"bench\": \"rtt\", \"payload_bytes\": %zu, \"rounds\": %d, \"middleware_us\": %.1f, \"bare_us\": %.1f, \"ratio\": %.3f}\n", size,
                n, median(mw) * 1e6, median(bare) * 1e6, median(mw) / median(bare));
    std::fflush(stdout);
    (void)done;
  }
  ::close(bare_client);
  ::close(bare_server);
  ::close(bare_listen);
  return 0;
}

int sink(int port, const std::string& mode) {
  if (mode == "frame") {
    Listener l("0.0.0.0", port);
    auto c = l.accept(Seconds(30));
    if (!c) return 1;
    for (;;) {
      auto f = c->receive(Seconds(60));
      if (!f) return 1;
      if (f->type == MsgType::heartbeat) {  // end marker
        c->send({MsgType::result, 0, "k"});
        std::this_thread::sleep_for(Seconds(0.2));
        return 0;
      }
    }
  }
  const int ls = listen_on(port);
  const int fd = ::accept(ls, nullptr, nullptr);
  std::uint64_t total = 0;
  read_all(fd, reinterpret_cast<char*>(&total), 8);
  std::string buf(1 << 20, '\0');
  while (total) {
    const std::size_t k = std::min<std::uint64_t>(total, buf.size());
    read_all(fd, buf.data(), k);
    total -= k;
  }
  write_all(fd, "k", 1);
  std::this_thread::sleep_for(Seconds(0.2));
  return 0;
}

int source(const char* host, int port, const std::string& mode, int mib) {
  const std::string chunk = random_bytes(1 << 20);
  const auto t0 = Clock::now();
  if (mode == "frame") {
    std::unique_ptr<Connection> c;
    for (int i = 0; i < 100 && !c; ++i) {
      try {
        c = Connection::connect(host, port, Seconds(2));
      } catch (const std::exception&) {
        std::this_thread::sleep_for(Seconds(0.05));
      }
    }
    if (!c) return 1;
    const auto start = Clock::now();
    for (int i = 0; i < mib; ++i) c->send({MsgType::task, static_cast<std::uint64_t>(i), chunk}, Seconds(120));
    c->send({MsgType::heartbeat, 0, ""});
    auto ack = c->receive(Seconds(120));
    const double s = Seconds(Clock::now() - start).count();
    std::printf("{\"bench\": \"goodput\", \"mode\": \"frame\", \"mib\": %d, \"seconds\": %.3f, \"mbps\": %.2f}\n", mib, s,
                mib * 1048576.0 * 8 / s / 1e6);
    return ack ? 0 : 1;
  }
  const int fd = connect_to(host, port);
  const auto start = Clock::now();
  std::uint64_t total = static_cast<std::uint64_t>(mib) << 20;
  write_all(fd, reinterpret_cast<const char*>(&total), 8);
  for (int i = 0; i < mib; ++i) write_all(fd, chunk.data(), chunk.size());
  char k;
  read_all(fd, &k, 1);
  const double s = Seconds(Clock::now() - start).count();
  std::printf("{\"bench\": \"goodput\", \"mode\": \"bare\", \"mib\": %d, \"seconds\": %.3f, \"mbps\": %.2f}\n", mib, s,
              mib * 1048576.0 * 8 / s / 1e6);
  (void)t0;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "rtt" && argc == 3) return rtt(std::atoi(argv[2]));
  if (cmd == "sink" && argc == 4) return sink(std::atoi(argv[2]), argv[3]);
  if (cmd == "source" && argc == 6) return source(argv[2], std::atoi(argv[3]), argv[4], std::atoi(argv[5]));
  std::fprintf(stderr, "usage: %s rtt ROUNDS | sink PORT frame|bare | source HOST PORT frame|bare MIB\n", argv[0]);
  return 2;
}
