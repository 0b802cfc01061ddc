#pragma once
// One TCP connection of the middleware. asio resolves, connects and accepts; the connection then owns
// the bare socket descriptor (one file descriptor per connection: no event loop of its own), and frames (hw/frame.hpp) move
// with blocking system calls under kernel timeouts (SO_RCVTIMEO/SO_SNDTIMEO): one recv for a small
// frame, header and payload written together with one sendmsg, large payloads read straight into
// their buffer. Thread safety: send() may be called from any thread (serialised by a mutex); one
// thread at a time calls receive(). close() may be called from any thread: it shuts the socket down,
// which wakes a blocked receive() or send() at once.
//
// Optional shaping (the testbed's fallback when it may not create network namespaces): sends are paced
// at the link's rate in chunks of at most 5 ms of it, and each frame is delivered `latency_s` after
// its last byte arrived.
#include <asio/ip/tcp.hpp>
#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <deque>
#include <string>

#include "core/bandwidth_schedule.hpp"
#include "hw/frame.hpp"

namespace coinfer::hw {

// The peer closed the connection, or it broke, or a send timed out.
struct ConnectionClosed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Emulated link on a connection (testbeds without tc netem, and loopback). The sender paces its bytes
// at the rate; the receiver delivers each frame `latency_s` after its last byte arrived, so consecutive
// frames overlap their latency as on a real link (while it waits to deliver one frame, the receiver
// keeps reading and time-stamping what arrives). Set the same latency on both ends: each end delays
// what it receives.
struct Shaping {
  double rate_bytes_per_s = 0;  // 0 = unshaped (sender)
  double latency_s = 0;         // one-way propagation delay (receiver)
  // When set, the sender's rate over time instead (BandwidthSchedule::bytes_per_s_at(t) at run time
  // t = Unix now - epoch_unix_s), read before each chunk it writes: a change of rate (a bandwidth
  // event, a handover's 1 kbit/s) reaches a frame already being sent, as tc's does.
  std::shared_ptr<const BandwidthSchedule> schedule;
  double epoch_unix_s = 0;
};

class Connection {
 public:
  using Seconds = std::chrono::duration<double>;
  // Connects within `timeout`; throws ConnectionClosed saying why.
  static std::unique_ptr<Connection> connect(const std::string& host, int port, Seconds timeout, std::uint32_t max_payload = kDefaultMaxPayload);
  // Takes ownership of a connected TCP socket descriptor (closed by the destructor).
  Connection(int fd, std::uint32_t max_payload);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void send(const Frame& f, Seconds timeout = Seconds(30));
  // The next frame, or nothing if none arrived within `timeout`. Throws ConnectionClosed when the peer
  // closed or the connection broke, ProtocolError on bad bytes (the caller closes the connection).
  std::optional<Frame> receive(Seconds timeout);
  void close();
  bool closed() const { return closed_; }
  void set_shaping(Shaping s);
  // The largest payload receive() accepts from now on (a frame announcing more is refused from its
  // header, before any allocation). The server keeps it small until a peer has authenticated.
  void set_max_payload(std::uint32_t max_payload) { max_payload_ = max_payload; }
  std::uint32_t max_payload() const { return max_payload_; }
  std::string peer() const { return peer_; }
  std::uint64_t bytes_sent() const { return sent_; }
  std::uint64_t bytes_received() const { return received_; }
  // When the last byte of the most recent frame returned by receive() arrived (steady clock).
  std::chrono::steady_clock::time_point last_frame_time() const { return last_frame_time_; }

 private:
  void write_parts(const std::string& header, const std::string& body, std::chrono::steady_clock::time_point deadline);
  // Reads at most n bytes into p, waiting until `deadline`; 0 when the deadline passed with nothing.
  std::size_t read_some(char* p, std::size_t n, std::chrono::steady_clock::time_point deadline);
  void set_timeout(int option, std::chrono::steady_clock::time_point deadline, long& cached_us);
  std::string peer_;
  std::string pending_;  // bytes received beyond the last frame returned
  std::uint32_t max_payload_;
  int fd_ = -1;
  long rcv_timeout_us_ = -1, snd_timeout_us_ = -1;
  int incompressible_streak_ = 0;  // guarded by send_mutex_
  unsigned skipped_probes_ = 0;
  std::mutex send_mutex_;
  std::atomic<bool> closed_{false};
  std::atomic<std::uint64_t> sent_{0}, received_{0};
  double send_rate_bytes_per_s();  // the rate to pace the next chunk at (0: unshaped)
  std::mutex shaping_mutex_;       // guards shaping_ (never held while sending)
  Shaping shaping_;
  std::atomic<double> rx_latency_s_{0};  // shaping_.latency_s, for the receiving thread
  // With a latency: (bytes received in all after a read, when that read returned), receiving thread only.
  std::deque<std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> rx_reads_;
  std::chrono::steady_clock::time_point pace_until_{};
  std::chrono::steady_clock::time_point last_frame_time_{};
};

// A listening socket. accept() returns nothing on timeout (so the caller can check for shutdown).
class Listener {
 public:
  // port 0 = an ephemeral port (see port()). bind_address "0.0.0.0" for all interfaces. Accepted
  // connections start with `max_payload` as their receive limit.
  Listener(const std::string& bind_address, int port, std::uint32_t max_payload = kDefaultMaxPayload);
  int port() const { return port_; }
  // The next connection, or nothing when `timeout` passed. When the process (or system) is out of
  // file descriptors or socket memory, it waits until the timeout and returns nothing, leaving the
  // pending connection queued (it never throws for that); `out_of_descriptors()` then says so.
  std::unique_ptr<Connection> accept(Connection::Seconds timeout);
  bool out_of_descriptors() const { return out_of_descriptors_; }
  void close();

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  std::uint32_t max_payload_;
  bool out_of_descriptors_ = false;
};

}  // namespace coinfer::hw
