#include "sched/greedy_scheduler.hpp"

#include <unordered_map>

#include "sched/scheme_search.hpp"

namespace coinfer {

double greedy_work(const AnalyticEstimator& est, const SystemState& state) {
  // The i-th device's step predicts on a new state (the devices decided so far): its first option solves
  // every server (i devices), each other option re-solves only the device's own server (k devices).
  double work = 0, decided = 0;
  std::unordered_map<std::string, double> at_server;
  for (const DeviceState* d : searched_devices(state)) {
    decided += 1;
    const double k = at_server[d->server] += 1;
    work += decided + (static_cast<double>(device_options(est, *d, &state).size()) - 1) * k;
  }
  return work;
}

Scheme GreedyScheduler::decide(const SystemState& state) {
  Scheme chosen;
  SystemState partial = state;
  for (auto& d : partial.devices) d.connected = false;
  for (size_t i = 0; i < state.devices.size(); ++i) {
    const DeviceState& d = state.devices[i];
    if (!d.connected || !d.generates) continue;
    partial.devices[i].connected = true;
    // Each option as an edit of the devices decided so far; the first stands until a later one is
    // predicted better.
    std::vector<SchemeEdit> candidates;
    for (const Strategy& o : device_options(est_, d, &state)) candidates.push_back(SchemeEdit{{{d.id, o}}});
    const SchemeEdit first = candidates.front();
    candidates.erase(candidates.begin());
    const int k = rank_.best_of_edits(partial, chosen, first, candidates);
    (k < 0 ? first : candidates[static_cast<size_t>(k)]).apply_to(chosen);
  }
  return chosen;
}

}  // namespace coinfer
