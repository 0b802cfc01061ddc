#pragma once
// What travels through the simulation's mailboxes (sim-internal). Payloads are pointers; the
// simulated size of each transfer is given separately (bytes on the wire).
//   "uploads:<server>"  device -> server:  SimRequest*  (bytes_up; an eager mailbox: every upload
//                                          flows as soon as it is posted)
//   "results:<device>"  server/helper -> device: SimRequest* (bytes_down), one at a time in order
//   "control:<device>"  monitor -> device: Strategy*  (scheduler.control_bytes)
//   "help:<device>"     server -> idle helper device: HelpTask* (the batch's input bytes)
#include <functional>
#include <vector>

#include "sim/request_ledger.hpp"

namespace coinfer::sim {

// A sealed batch forwarded to an idle helper device, which runs its server part and sends each
// result straight to the request's device; then it calls done() (the server frees the helper).
struct HelpTask {
  std::vector<SimRequest*> batch;
  std::function<void()> done;
};

}  // namespace coinfer::sim
