#pragma once
// The real device's link to its server (a room of hw/device_context.hpp): registration (the
// challenge, redirects, the coordinator's word when its server is down), the scheduling messages it
// applies, the reader of each connection (results, a helper's forwarded tasks, clock probes, resend
// requests), heartbeats, and the moves the scheme makes (the old connection drains until its requests
// there are over). Owns: the connection now, where its server listens, a move to carry out, the
// draining connections, and the readers' own state (results a handover caught, the clock estimate).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hw/clock_sync.hpp"
#include "hw/connection.hpp"
#include "hw/device_context.hpp"
#include "hw/device_requests.hpp"
#include "hw/protocol.hpp"
#include "hw/registration.hpp"

namespace coinfer::hw {

class DeviceServerLink {
 public:
  DeviceServerLink(DeviceContext& ctx, const DeviceRooms& rooms);

  // --- the lock not held ---
  // Registers with its server and stays connected until the run is over (`hard_end`, run s) or
  // stopped: heartbeats, moves, reconnections with back-off. Returns why it gave up ("" when the run
  // ended): a refusal, or a redirect loop. Blocks (the run's own thread).
  std::string serve(double hard_end);
  // The connections it still drained at the run's end: closed, their readers joined.
  void close_draining();

  // --- the lock held ---
  bool connected(const DeviceLock::Held&) const { return conn_ != nullptr; }
  std::shared_ptr<Connection> current(const DeviceLock::Held&) const { return conn_; }
  // The connection request `id`'s upload (or its copy) goes on: to the server its record names, its
  // server now or one it moved away from (null: none).
  std::shared_ptr<Connection> connection_for(const DeviceLock::Held& held, std::int64_t id);

 private:
  struct Draining {
    int server = -1;
    std::shared_ptr<Connection> conn;
    std::thread reader;
  };
  // A forwarded batch whose tasks are still arriving (read_loop's own, per connection).
  struct Collecting {
    int size = 1, split = 0, origin = -1;
    std::vector<HelperPart> parts;
  };
  std::shared_ptr<Connection> connect_and_register(const std::string& host, int port, bool moved);
  void apply(const Assignment& a);
  void read_loop(std::shared_ptr<Connection> c, bool fresh);
  void on_task(const Frame& f, std::map<std::uint64_t, Collecting>& collecting);
  void on_result(Connection& c, Frame f, std::size_t frame_bytes);
  void set_server_now(const DeviceLock::Held& held, int server, const std::string& address);
  void lose_connection(int server);
  void close_drained();
  bool carry_out_move(std::shared_ptr<Connection>& c, std::thread& reader);
  void stay_connected(std::shared_ptr<Connection>& c, std::thread& reader, double hard_end, std::string& fatal);

  DeviceContext& ctx_;
  const DeviceRooms& rooms_;
  // The registration loop's own (its thread only).
  bool epochs_noted_ = false;  // the journal has both time zeros
  int beats_ = 0;
  RedirectGuard move_redirects_;  // redirects met while carrying out a move

  // The readers' own (a draining connection's reader runs beside the current one): guarded by reader_mutex_.
  std::mutex reader_mutex_;
  double last_result_arrival_ = -1e300;  // run s: a result starts crossing the link once the previous has arrived
  // Results a handover caught under resend, kept until their copy arrives; at most kMaxHeldResults,
  // then such a result fails, saying so.
  static constexpr size_t kMaxHeldResults = 4096;
  std::map<std::uint64_t, std::pair<Frame, std::size_t>> held_results_;
  ClockEstimate clock_;  // offset to the server's clock

  // Guarded by the lock.
  std::shared_ptr<Connection> conn_;  // to its server now
  // Several servers (hw/README.md "Several edge servers"): where its server now listens.
  std::string server_host_;
  int server_port_ = 0;
  // The scheme moved it (a scheduling message naming another server): where to, until it has
  // registered there.
  std::optional<std::pair<int, std::string>> move_to_;  // server index, "host:port"
  // The connections to servers it moved away from, kept until the requests that went there are over
  // ("in-flight requests finish where they started"); each with its own reader.
  std::vector<Draining> draining_;
};

}  // namespace coinfer::hw
