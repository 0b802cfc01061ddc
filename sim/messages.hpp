#pragma once
// What travels between the simulation's components (sim-internal). Payloads are pointers; the
// simulated size of each transfer is given separately (bytes on the wire). Every transfer goes between
// two Endpoints on the platform's routes (a SimGrid communication between their hosts, or coinfer's
// FlowShares on the same links: sim/device_transfers.hpp):
//   upload    device -> server: bytes_up (Comm::sendto), then the request joins the server's ArrivedUploads
//   result    server/helper -> device: SimRequest* (bytes_down), one at a time in the order sent
//   control   monitor -> device: ControlMessage* (scheduler.control_bytes), one at a time in the order sent
//   help      server -> idle helper device: HelpTask* (the batch's input bytes), one at a time
//   to cloud  edge server -> its cloud (pp(k,m)): bytes_to_cloud, a transfer per request from the end of
//             its edge batch (they share the links), then the request joins the cloud's ArrivedUploads
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/strategy.hpp"
#include "sim/platform_builder.hpp"
#include "sim/request_ledger.hpp"

namespace coinfer::sim {

// Uploads that have arrived at a server, in the order their transfers completed: the device whose
// transfer just ended appends its request and releases `arrived`; the server's dispatcher takes them
// in that order. (Through a mailbox, get() returned uploads in the order they were *posted*, so one
// slow upload posted first held back every faster one behind it — a 21 s transfer on a 1.6 Mbit/s
// link kept three other devices' requests from the server for 21 s. The real server reads each
// connection on its own thread: no such head-of-line blocking.)
struct ArrivedUploads {
  std::deque<SimRequest*> queue;
  simgrid::s4u::SemaphorePtr arrived;
};

// What the scheduler tells a device after a decision: its strategy and the server its new requests
// go to (scenario index; Scheme::servers).
struct ControlMessage {
  Strategy strategy;
  int server = -1;
};

// A server's availability as the simulation tells its devices (core/server_failures.hpp): up or not,
// how many times it failed so far (an upload compares the count at its start and at its end), and
// the reasons requests fail with: held by it when it failed, reaching their upload while it is down.
struct ServerStatus {
  bool up = true;
  std::uint64_t failures = 0;
  std::string why_failed, why_down;
};

// A sealed batch forwarded to an idle helper device, which runs its server part and sends each
// result straight to the request's device; then it calls done() (the server frees the helper).
struct HelpTask {
  std::vector<SimRequest*> batch;
  std::function<void()> done;
};

// What a device receives. Each kind travels one transfer at a time, in the order sent: the next one
// starts when the device has taken the previous one (as a mailbox with one posted receive did). Callable
// from an actor or from kernel context; the pointers must stay valid until the device has taken them.
class DeviceInbox {
 public:
  virtual ~DeviceInbox() = default;
  virtual void send_result(SimRequest* r, Endpoint from) = 0;  // r->rec.bytes_down on the wire
  // The server gave `r` up past its deadline: its notice travels as a result does, and the device
  // records it dropped with `why` when it arrives (the text waits at the device, not in every request).
  virtual void send_dropped(SimRequest* r, Endpoint from, std::string why) = 0;
  virtual void send_control(const ControlMessage* m, Endpoint from, double bytes) = 0;
  virtual void send_help(HelpTask* t, Endpoint from, double bytes) = 0;
  // `r` failed where it is now (an edge found its cloud down when passing it on): the device records
  // the failure with `why` now. Nothing when it already finished.
  virtual void fail_request(SimRequest* r, const std::string& why) = 0;
};

}  // namespace coinfer::sim
