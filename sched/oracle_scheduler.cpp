#include "sched/oracle_scheduler.hpp"

#include <cmath>
#include <stdexcept>

#include "core/text_util.hpp"
#include "sched/scheme_search.hpp"

namespace coinfer {

Scheme OracleScheduler::decide(const SystemState& state) {
  auto devs = searched_devices(state);
  std::vector<std::vector<Strategy>> opts;
  long double combos = 1;
  for (const DeviceState* d : devs) {
    opts.push_back(device_options(est_, *d, &state));
    combos *= opts.back().size();
  }
  if (combos > max_schemes_)
    throw std::invalid_argument("oracle: " + std::to_string(devs.size()) + " devices give " + format_double(static_cast<double>(combos)) +
                                " schemes, more than max_schemes = " + std::to_string(max_schemes_) +
                                " (raise scheduler.max_schemes or use hierarchical)");
  std::vector<size_t> idx(devs.size(), 0);
  Scheme best;
  bool have = false;
  while (true) {
    Scheme s;
    for (size_t i = 0; i < devs.size(); ++i) s.strategies[devs[i]->id] = opts[i][idx[i]];
    if (!have || better(est_, state, s, best)) {
      best = s;
      have = true;
    }
    size_t i = 0;
    while (i < devs.size() && ++idx[i] == opts[i].size()) idx[i++] = 0;
    if (i == devs.size()) break;
  }
  return best;
}

}  // namespace coinfer
