#include "hw/pending_request.hpp"

#include <limits>

#include "core/cloud_handoff.hpp"

namespace coinfer::hw {

Pending received_task(std::shared_ptr<Handler> origin, std::uint64_t task, const std::string& payload, bool at_cloud, TaskHeader& header) {
  Pending p;
  p.origin = std::move(origin);
  p.task = task;
  p.at_cloud = at_cloud;
  p.t_received = unix_now();
  header = unpack_task(payload, p.state_bytes);
  return p;
}

ServerRequestFacts request_facts(const Pending& p, double epoch_unix_s) {
  ServerRequestFacts f;
  f.device = p.device;
  f.binding = 0;
  f.begin = p.split;
  f.end = server_part(p.split, p.cloud_split, p.at_cloud, -1).end;
  f.device_split = p.split;
  f.may_forward = may_forward_to_helper(p.cloud_split) && !p.at_cloud;
  f.t_created_s = p.t_created > 0 ? p.t_created - epoch_unix_s : std::numeric_limits<double>::quiet_NaN();
  f.bytes = static_cast<double>(p.state_bytes.size());
  return f;
}

}  // namespace coinfer::hw
