#include "core/server_request_rules.hpp"

#include <cmath>
#include <limits>

#include "core/device_loop.hpp"

namespace coinfer {

double ServerRequestRules::expected_seconds(const ServerRequestFacts& first, int size) const {
  return timing_.batch_seconds(first.device, first.binding, first.begin, size, first.end);
}

double ServerRequestRules::seconds_alone(const ServerRequestFacts& r) const {
  return r.device >= 0 ? timing_.batch_seconds(r.device, r.binding, r.begin, 1, r.end) : 0;
}

int ServerRequestRules::batch_limit(const ServerRequestFacts& r) const {
  return r.device >= 0 ? timing_.batch_limit(r.device, r.binding, r.begin, r.end) : 0;
}

double ServerRequestRules::drop_after_s(const ServerRequestFacts& r) const {
  if (r.device < 0 || std::isnan(r.t_created_s)) return std::numeric_limits<double>::infinity();
  return r.t_created_s + s_.devices[static_cast<size_t>(r.device)].workload.drop_after_s();
}

int ServerRequestRules::priority(const ServerRequestFacts& r) const {
  return r.device >= 0 ? s_.devices[static_cast<size_t>(r.device)].workload.priority : 0;
}

double ServerRequestRules::helper_seconds(int helper, const ServerRequestFacts& first, int size, double bytes, double bytes_per_s) const {
  if (!first.may_forward) return std::numeric_limits<double>::infinity();
  return timing_.helper_seconds(helper, first.device, first.binding, first.device_split, size, bytes, bytes_per_s);
}

std::string ServerRequestRules::drop_reason(const ServerRequestFacts& r, double now_s) const {
  // The deadline in ms as the drop rule used it (drop_after_s, seconds).
  return server_drop_reason(s_.servers[static_cast<size_t>(server_)].id, now_s - r.t_created_s,
                            s_.devices[static_cast<size_t>(r.device)].workload.drop_after_s() * 1e3, seconds_alone(r));
}

}  // namespace coinfer
