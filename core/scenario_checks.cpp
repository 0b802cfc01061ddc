#include "core/scenario_checks.hpp"

#include "core/input_error.hpp"
#include "core/server_failures.hpp"
#include "core/text_util.hpp"

namespace coinfer {

void check_scenario(const Scenario& s) {
  for (int b : s.scheduler.batch_sizes)
    for (const auto& sv : s.servers)
      if (b > sv.batch.max_size)
        throw InputError(s.scheduler.batch_sizes_where, "scheduler.batch_sizes",
                         "size " + std::to_string(b) + " is larger than server " + sv.id + "'s batch.max_size " + std::to_string(sv.batch.max_size) +
                             " (the largest batch its LUTs are checked for; raise servers[].batch.max_size to allow it)");
  for (const EventSpec& e : s.events) {
    const int si = e.server().empty() ? -1 : s.server_index(e.server());
    if (si >= 0 && s.servers[static_cast<size_t>(si)].failures)
      throw InputError(
          e.where, "events.server",
          "server " + e.server() + " has a failure model (servers[].failures): its fail and recover events are drawn from it, give none by hand");
  }
  check_server_failures(s);
  for (const auto& d : s.devices)
    if (d.leave_at_s <= d.join_at_s)
      throw InputError(
          d.where, "events",
          "device '" + d.id + "' leaves at " + format_double(d.leave_at_s) + " s, not after it joins at " + format_double(d.join_at_s) + " s");
}

}  // namespace coinfer
