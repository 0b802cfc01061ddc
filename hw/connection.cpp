#include "hw/connection.hpp"

#include <poll.h>

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

Clock::time_point deadline_after(Connection::Seconds t) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(t);
}
}  // namespace

std::unique_ptr<Connection> Connection::connect(const std::string& host, int port, Seconds timeout,
                                                std::uint32_t max_payload) {
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
      return std::make_unique<Connection>(std::move(io), std::move(socket), max_payload);
    }
    last = ec.message();
    socket.close();
  }
  throw ConnectionClosed("cannot connect to " + host + ":" + std::to_string(port) + ": " + last);
}

Connection::Connection(std::unique_ptr<asio::io_context> io, asio::ip::tcp::socket socket, std::uint32_t max_payload)
    : io_(std::move(io)), socket_(std::move(socket)), decoder_(max_payload), max_payload_(max_payload) {
  asio::error_code ec;
  socket_.non_blocking(true, ec);
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  auto ep = socket_.remote_endpoint(ec);
  peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
}

Connection::~Connection() { close(); }

void Connection::set_shaping(Shaping s) {
  std::lock_guard<std::mutex> lock(send_mutex_);
  shaping_ = s;
}

void Connection::close() {
  if (closed_.exchange(true)) return;
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  // The descriptor itself is closed by the destructor of socket_, once no thread can be using it.
}

void Connection::write_all(const char* p, std::size_t n, Clock::time_point deadline) {
  while (n > 0) {
    if (closed_) throw ConnectionClosed("connection to " + peer_ + " closed");
    std::size_t chunk = n;
    if (shaping_.rate_bytes_per_s > 0) {
      chunk = std::min<std::size_t>(n, 16384);
      std::this_thread::sleep_until(pace_until_);
    }
    asio::error_code ec;
    const std::size_t k = socket_.write_some(asio::buffer(p, chunk), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      if (!wait_fd(socket_.native_handle(), POLLOUT, deadline, closed_))
        throw ConnectionClosed("send to " + peer_ + (closed_ ? " interrupted: closed" : " timed out"));
      continue;
    }
    if (ec) throw ConnectionClosed("send to " + peer_ + " failed: " + ec.message());
    if (shaping_.rate_bytes_per_s > 0)
      pace_until_ = std::max(pace_until_, Clock::now()) +
                    std::chrono::duration_cast<Clock::duration>(Seconds(k / shaping_.rate_bytes_per_s));
    p += k;
    n -= k;
    sent_ += k;
  }
}

void Connection::send(const Frame& f, Seconds timeout) {
  const std::string bytes = encode_frame(f, max_payload_);
  std::lock_guard<std::mutex> lock(send_mutex_);
  if (shaping_.latency_s > 0) std::this_thread::sleep_for(Seconds(shaping_.latency_s));
  write_all(bytes.data(), bytes.size(), deadline_after(timeout));
}

std::optional<Frame> Connection::receive(Seconds timeout) {
  const auto deadline = deadline_after(timeout);
  char buf[65536];
  for (;;) {
    if (auto f = decoder_.next()) {
      last_frame_time_ = Clock::now();
      return f;
    }
    if (closed_) throw ConnectionClosed("connection to " + peer_ + " closed");
    asio::error_code ec;
    const std::size_t k = socket_.read_some(asio::buffer(buf), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      if (!wait_fd(socket_.native_handle(), POLLIN, deadline, closed_)) {
        if (closed_) throw ConnectionClosed("connection to " + peer_ + " closed");
        return std::nullopt;
      }
      continue;
    }
    if (ec == asio::error::eof) throw ConnectionClosed("peer " + peer_ + " closed the connection");
    if (ec) throw ConnectionClosed("receive from " + peer_ + " failed: " + ec.message());
    received_ += k;
    decoder_.feed(buf, k);
  }
}

Listener::Listener(const std::string& bind_address, int port, std::uint32_t max_payload)
    : acceptor_(io_), max_payload_(max_payload) {
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
    asio::error_code ec;
    auto io = std::make_unique<asio::io_context>();
    asio::ip::tcp::socket s(*io);
    acceptor_.accept(s, ec);
    if (!ec) return std::make_unique<Connection>(std::move(io), std::move(s), max_payload_);
    if (ec != asio::error::would_block && ec != asio::error::try_again) {
      if (!acceptor_.is_open()) return nullptr;
      throw ConnectionClosed("accept failed: " + ec.message());
    }
    if (!wait_fd(acceptor_.native_handle(), POLLIN, deadline, never)) return nullptr;
  }
}

void Listener::close() {
  asio::error_code ec;
  acceptor_.close(ec);
}

}  // namespace coinfer::hw
