#pragma once
// The server's side of a device registration (hw/README.md, "Wire protocol"), without sockets:
// whether a Registration answers the challenge and names a device this server serves, and how many
// handshakes may run at once. Torch-free (coinfer_net).
#include <condition_variable>
#include <mutex>
#include <string>

#include "core/scenario.hpp"
#include "hw/protocol.hpp"

namespace coinfer::hw {

struct RegistrationCheck {
  int device_index = -1;  // in the scenario's devices, when accepted
  std::string refusal;    // why not (sent to the device in an error frame); empty = accepted
  bool accepted() const { return refusal.empty(); }
};

// Accepted when the HMAC of (nonce + device id) under `secret` matches (compared in constant time),
// the device is in the scenario, belongs to server `server_index`, and registered with the type,
// model and dataset the scenario gives it.
RegistrationCheck check_registration(const Registration& r, const std::string& nonce, const std::string& secret, const Scenario& sc,
                                     int server_index);

// At most `limit` handshakes at once: a connection beyond that is refused (the caller answers it
// with an error frame); shutdown waits for the running ones. Thread-safe.
class HandshakeGate {
 public:
  explicit HandshakeGate(int limit) : limit_(limit) {}
  bool try_enter();
  void leave();
  void wait_idle();
  int limit() const { return limit_; }

 private:
  int limit_;
  int running_ = 0;
  std::mutex m_;
  std::condition_variable cv_;
};

}  // namespace coinfer::hw
