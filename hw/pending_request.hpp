#pragma once
// A request the real server holds (its queue, its batches, a helper's work), as the server loop
// (core/server_loop.hpp) handles it, and its facts for the server's rules
// (core/server_request_rules.hpp, the simulator's too). Torch-free.
#include <cstdint>
#include <memory>
#include <string>

#include "core/server_request_rules.hpp"
#include "hw/protocol.hpp"

namespace coinfer::hw {

struct Handler;  // a connection to a device or an edge (hw/edge_server.cpp)

struct Pending {
  // Who gets the result: the device's handler, or at a cloud the edge's connection (hw/README.md "Cloud tier").
  std::shared_ptr<Handler> origin;
  std::uint64_t task = 0;
  int device = -1;  // the request's device (scenario index)
  int split = 0;
  // pp(k,m) (core/cloud_handoff.hpp): at its edge, m (its batch ends at m and goes on to the cloud);
  // 0 none. At the cloud: at_cloud, and split is m.
  int cloud_split = 0;
  bool at_cloud = false;
  std::string state_bytes;
  double t_received = 0, t_queued = 0;  // Unix s
  double t_created = 0;                 // Unix s (the device's clock); 0: not sent
};

// A task frame's payload received whole now from `origin` (a device, or at a cloud an edge): its state
// bytes unpacked (hw/protocol.hpp; throws ProtocolError for a malformed one), its header in `header`;
// the caller checks the header and fills in device, split and the rest. `at_cloud`: a cloud part.
Pending received_task(std::shared_ptr<Handler> origin, std::uint64_t task, const std::string& payload, bool at_cloud, TaskHeader& header);

// `p` as the server's rules see it, on the run's clock (`epoch_unix_s`: Unix time of run time 0). The
// testbed runs each device's model as named (binding 0); its part ends where core/cloud_handoff.hpp
// server_part says; a cloud part, or a cloud's request, stays on the server; a creation of 0 (not
// sent) is unknown (never dropped); its bytes are those received.
ServerRequestFacts request_facts(const Pending& p, double epoch_unix_s);

}  // namespace coinfer::hw
