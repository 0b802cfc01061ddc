#pragma once
// What travels through the simulation's mailboxes (sim-internal). Payloads are pointers; the
// simulated size of each transfer is given separately (bytes on the wire).
//   uploads             device -> server:  a host-to-host transfer of bytes_up (Comm::sendto_async), then
//                                          the request joins the server's ArrivedUploads
//   "results:<device>"  server/helper -> device: SimRequest* (bytes_down), one at a time in order
//   "control:<device>"  monitor -> device: Strategy*  (scheduler.control_bytes)
//   "help:<device>"     server -> idle helper device: HelpTask* (the batch's input bytes)
#include <simgrid/s4u/Semaphore.hpp>

#include <deque>
#include <functional>
#include <vector>

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

// A sealed batch forwarded to an idle helper device, which runs its server part and sends each
// result straight to the request's device; then it calls done() (the server frees the helper).
struct HelpTask {
  std::vector<SimRequest*> batch;
  std::function<void()> done;
};

}  // namespace coinfer::sim
