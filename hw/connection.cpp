#include "hw/connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <thread>

namespace coinfer::hw {

namespace {
using Clock = std::chrono::steady_clock;
constexpr int kPollSliceMs = 100;

// Waits until the socket is readable/writable, the deadline passes (false) or `stop` is set (false).
bool wait_fd(int fd, short events, Clock::time_point deadline, const std::atomic<bool>& stop) {
  while (!stop) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, kPollSliceMs)));
    if (r > 0) return true;  // readable, writable, or an error/hang-up the next call will report
    if (r < 0 && errno != EINTR) return true;
  }
  return false;
}

Clock::time_point deadline_after(Connection::Seconds t) { return Clock::now() + std::chrono::duration_cast<Clock::duration>(t); }
}  // namespace

std::unique_ptr<Connection> Connection::connect(const std::string& host, int port, Seconds timeout, std::uint32_t max_payload) {
  auto io = std::make_unique<asio::io_context>();
  asio::ip::tcp::socket socket(*io);
  asio::error_code ec;
  asio::ip::tcp::resolver resolver(*io);
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) throw ConnectionClosed("cannot resolve " + host + ": " + ec.message());
  // Non-blocking connect with a deadline.
  const auto deadline = deadline_after(timeout);
  std::string last = "no address";
  for (const auto& ep : endpoints) {
    socket.open(ep.endpoint().protocol(), ec);
    if (ec) continue;
    socket.non_blocking(true);
    socket.connect(ep.endpoint(), ec);
    if (ec == asio::error::in_progress || ec == asio::error::would_block) {
      std::atomic<bool> never{false};
      if (!wait_fd(socket.native_handle(), POLLOUT, deadline, never)) {
        last = "timed out";
        socket.close();
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(socket.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len);
      ec = asio::error_code(err, asio::system_category());
    }
    if (!ec) {
      const int fd = socket.release(ec);  // the descriptor alone: the io_context and its own descriptors go
      if (!ec) return std::make_unique<Connection>(fd, max_payload);
    }
    last = ec.message();
    socket.close();
  }
  throw ConnectionClosed("cannot connect to " + host + ":" + std::to_string(port) + ": " + last);
}

Connection::Connection(int fd, std::uint32_t max_payload) : max_payload_(max_payload), fd_(fd) {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    if (addr.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
      ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
      ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
      port = ntohs(a->sin6_port);
    }
  }
  peer_ = std::string(host) + ":" + std::to_string(port);
}

Connection::~Connection() {
  close();
  ::close(fd_);  // no thread can be using it any more
}

void Connection::set_shaping(Shaping s) {
  std::lock_guard<std::mutex> lock(shaping_mutex_);
  rx_latency_s_ = s.latency_s;
  shaping_ = std::move(s);
}

double Connection::send_rate_bytes_per_s() {
  std::lock_guard<std::mutex> lock(shaping_mutex_);
  if (!shaping_.schedule) return shaping_.rate_bytes_per_s;
  const double t = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() - shaping_.epoch_unix_s;
  return shaping_.schedule->bytes_per_s_at(t);
}

void Connection::close() {
  if (closed_.exchange(true)) return;
  // Wakes any thread blocked in recv/send on this socket; the descriptor itself is closed by the
  // destructor, once no thread can be using it.
  ::shutdown(fd_, SHUT_RDWR);
}

void Connection::set_timeout(int option, Clock::time_point deadline, long& cached_us) {
  long us = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
  us = std::max(1000L, us);
  if (cached_us >= 0 && std::labs(cached_us - us) < 2000) return;  // close enough: save a syscall
  timeval tv{us / 1000000, us % 1000000};
  ::setsockopt(fd_, SOL_SOCKET, option, &tv, sizeof tv);
  cached_us = us;
}

void Connection::write_parts(const std::string& header, const std::string& body, Clock::time_point deadline) {
  std::size_t done = 0;
  const std::size_t total = header.size() + body.size();
  while (done < total) {
    if (closed_) throw ConnectionClosed("connection to " + peer_ + " closed");
    if (Clock::now() >= deadline) throw ConnectionClosed("send to " + peer_ + " timed out");
    std::size_t limit = total - done;
    std::this_thread::sleep_until(pace_until_);  // the previous chunk's time on the link (none unshaped)
    // A chunk of at most 5 ms at the rate now (1 byte at a handover's 125 B/s, 16 KiB at 40 Mbit/s):
    // a change of rate applies within 5 ms of the link's time, not after a whole chunk at the old rate.
    const double rate = send_rate_bytes_per_s();
    if (rate > 0) limit = std::min<std::size_t>(limit, static_cast<std::size_t>(std::clamp(rate * 0.005, 1.0, 16384.0)));
    iovec iov[2];
    int n = 0;
    std::size_t left = limit;
    if (done < header.size()) {
      const std::size_t k = std::min(left, header.size() - done);
      iov[n++] = {const_cast<char*>(header.data() + done), k};
      left -= k;
    }
    const std::size_t body_off = done > header.size() ? done - header.size() : 0;
    if (left > 0 && body_off < body.size()) iov[n++] = {const_cast<char*>(body.data() + body_off), std::min(left, body.size() - body_off)};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    set_timeout(SO_SNDTIMEO, deadline, snd_timeout_us_);
    const ssize_t k = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;  // the deadline check decides
      throw ConnectionClosed("send to " + peer_ + " failed: " + std::strerror(errno));
    }
    if (rate > 0) pace_until_ = std::max(pace_until_, Clock::now()) + std::chrono::duration_cast<Clock::duration>(Seconds(k / rate));
    done += static_cast<std::size_t>(k);
    sent_ += static_cast<std::uint64_t>(k);
  }
}

void Connection::send(const Frame& f, Seconds timeout) {
  if (f.payload.size() > max_payload_)
    throw ProtocolError("payload of " + std::to_string(f.payload.size()) + " bytes exceeds the maximum of " + std::to_string(max_payload_));
  std::unique_lock<std::mutex> lock(send_mutex_);
  // After 8 payloads in a row that would not compress, try only every 16th (dense tensors stay dense).
  std::optional<std::string> z;
  if (f.payload.size() >= kCompressThreshold && (incompressible_streak_ < 8 || ++skipped_probes_ % 16 == 0)) {
    z = compress_payload(f.payload);
    incompressible_streak_ = z ? 0 : incompressible_streak_ + 1;
  }
  const std::string& body = z ? *z : f.payload;
  const std::string header = encode_header(f.type, f.task_id, z.has_value(), body.size(), f.payload.size());
  write_parts(header, body, deadline_after(timeout));
}

std::size_t Connection::read_some(char* p, std::size_t n, Clock::time_point deadline) {
  for (;;) {
    if (closed_) throw ConnectionClosed("connection to " + peer_ + " closed");
    if (Clock::now() >= deadline) return 0;
    set_timeout(SO_RCVTIMEO, deadline, rcv_timeout_us_);
    const ssize_t k = ::recv(fd_, p, n, 0);
    if (k > 0) {
      received_ += static_cast<std::uint64_t>(k);
      if (rx_latency_s_ > 0) rx_reads_.emplace_back(received_.load(), Clock::now());
      return static_cast<std::size_t>(k);
    }
    if (k == 0) {
      if (closed_) throw ConnectionClosed("connection to " + peer_ + " closed");
      throw ConnectionClosed("peer " + peer_ + " closed the connection");
    }
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    throw ConnectionClosed("receive from " + peer_ + " failed: " + std::strerror(errno));
  }
}

std::optional<Frame> Connection::receive(Seconds timeout) {
  auto deadline = deadline_after(timeout);
  char scratch[65536];
  // The header: what is pending, then one recv at a time (a small frame usually arrives whole).
  while (pending_.size() < kHeaderBytes) {
    const std::size_t k = read_some(scratch, sizeof scratch, deadline);
    if (k == 0) {
      if (pending_.empty()) return std::nullopt;
      // A frame has begun: wait for the rest, calling the connection stalled after 30 s without a byte.
      deadline = Clock::now() + std::chrono::seconds(30);
      const std::size_t more = read_some(scratch, sizeof scratch, deadline);
      if (more == 0) throw ConnectionClosed("peer " + peer_ + " stalled in the middle of a frame");
      pending_.append(scratch, more);
      continue;
    }
    pending_.append(scratch, k);
  }
  const FrameHeader h = parse_header(reinterpret_cast<const unsigned char*>(pending_.data()), max_payload_);
  // The buffer grows with the bytes that actually arrive (at most twice what arrived, at least
  // kGrowBytes), so a header that announces a large payload commits no memory by itself.
  constexpr std::size_t kGrowBytes = 1u << 20;
  std::string wire;
  std::size_t have = std::min<std::size_t>(pending_.size() - kHeaderBytes, h.wire_size);
  wire.resize(std::min<std::size_t>(h.wire_size, std::max(kGrowBytes, have)));
  std::memcpy(wire.data(), pending_.data() + kHeaderBytes, have);
  pending_.erase(0, kHeaderBytes + have);
  // The rest of the payload straight into its buffer; progress extends the deadline.
  while (have < h.wire_size) {
    if (have == wire.size()) wire.resize(std::min<std::size_t>(h.wire_size, std::max(kGrowBytes, 2 * have)));
    const std::size_t k = read_some(wire.data() + have, wire.size() - have, Clock::now() + std::chrono::seconds(30));
    if (k == 0) throw ConnectionClosed("peer " + peer_ + " stalled in the middle of a frame");
    have += k;
  }
  Frame f;
  f.type = h.type;
  f.task_id = h.task_id;
  f.payload = decode_payload(h, std::move(wire));
  last_frame_time_ = Clock::now();
  const double latency = rx_latency_s_;
  if (latency > 0) {
    // The frame's last byte arrived with the first read that reached its end in the byte stream.
    const std::uint64_t end = received_ - pending_.size();
    while (!rx_reads_.empty() && rx_reads_.front().first < end) rx_reads_.pop_front();
    const Clock::time_point arrived = rx_reads_.empty() ? last_frame_time_ : rx_reads_.front().second;
    const Clock::time_point deliver = arrived + std::chrono::duration_cast<Clock::duration>(Seconds(latency));
    // Until then, keep reading (and stamping) what arrives, so that the next frames' latency overlaps.
    char scratch[65536];
    for (Clock::time_point now = Clock::now(); now < deliver; now = Clock::now()) {
      const auto left_us = std::chrono::duration_cast<std::chrono::microseconds>(deliver - now).count();
      pollfd pf{fd_, POLLIN, 0};
      const int r = ::poll(&pf, 1, static_cast<int>((left_us + 999) / 1000));
      if (r <= 0 || closed_) {
        if (r < 0 && errno == EINTR) continue;
        std::this_thread::sleep_until(deliver);  // nothing to read (or an error the next receive reports)
        break;
      }
      const ssize_t k = ::recv(fd_, scratch, sizeof scratch, MSG_DONTWAIT);
      if (k <= 0) {
        std::this_thread::sleep_until(deliver);
        break;
      }
      pending_.append(scratch, static_cast<std::size_t>(k));
      received_ += static_cast<std::uint64_t>(k);
      rx_reads_.emplace_back(received_.load(), Clock::now());
    }
    last_frame_time_ = std::max(deliver, arrived);
  }
  return f;
}

Listener::Listener(const std::string& bind_address, int port, std::uint32_t max_payload) : acceptor_(io_), max_payload_(max_payload) {
  asio::ip::tcp::endpoint ep(asio::ip::make_address(bind_address), static_cast<unsigned short>(port));
  acceptor_.open(ep.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(ep);
  acceptor_.listen();
  acceptor_.non_blocking(true);
  port_ = acceptor_.local_endpoint().port();
}

std::unique_ptr<Connection> Listener::accept(Connection::Seconds timeout) {
  const auto deadline = deadline_after(timeout);
  std::atomic<bool> never{false};
  for (;;) {
    if (!acceptor_.is_open()) return nullptr;
    const int fd = ::accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      out_of_descriptors_ = false;
      return std::make_unique<Connection>(fd, max_payload_);
    }
    const int err = errno;
    if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
      // Out of descriptors or socket memory: the connection stays queued until some close.
      out_of_descriptors_ = true;
      std::this_thread::sleep_until(deadline);
      return nullptr;
    }
    if (err == ECONNABORTED || err == EPROTO || err == EINTR || err == EPERM) continue;  // that peer gave up
    if (err != EAGAIN && err != EWOULDBLOCK) {
      if (!acceptor_.is_open()) return nullptr;
      throw ConnectionClosed(std::string("accept failed: ") + std::strerror(err));
    }
    if (!wait_fd(acceptor_.native_handle(), POLLIN, deadline, never)) return nullptr;
  }
}

void Listener::close() {
  asio::error_code ec;
  acceptor_.close(ec);
}

}  // namespace coinfer::hw
