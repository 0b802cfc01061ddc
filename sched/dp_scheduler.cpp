#include "sched/dp_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "sched/scheme_search.hpp"

namespace coinfer {

Scheme DpScheduler::decide(const SystemState& state) {
  Scheme out;
  last_objective_ = 0;
  std::map<std::string, std::vector<const DeviceState*>> by_server;
  for (const DeviceState* d : searched_devices(state)) by_server[d->server].push_back(d);
  for (const auto& [server_id, devices] : by_server) {
    const ServerState* sv = state.server(server_id);
    const int Q = resolution_;
    struct Item {
      Strategy s;
      double value;
      int weight;
    };
    std::vector<std::vector<Item>> items;
    for (const DeviceState* d : devices) {
      // The device alone: the state without the others (a prediction sees connected devices only).
      const SystemState alone = alone_in(state, *d);
      std::vector<Item> opts;
      std::vector<Scheme> schemes;
      for (const Strategy& o : device_options(est_, *d, &state)) {
        Scheme s;
        s.strategies[d->id] = o;
        schemes.push_back(s);
      }
      // Values: the analytic throughput, or the learned estimator's scores in one batched pass.
      const bool analytic_values = &rank_ == static_cast<const Estimator*>(&est_);
      const std::vector<double> learned = analytic_values ? std::vector<double>() : rank_.score_many(alone, schemes);
      for (size_t k = 0; k < schemes.size(); ++k) {
        const Prediction p = est_.predict(alone, schemes[k]);
        const double used = p.server_utilisation.at(server_id);  // fraction of the workers
        opts.push_back(
            {schemes[k].strategies.at(d->id), analytic_values ? p.throughput_rps : learned[k], static_cast<int>(std::ceil(used * Q - 1e-9))});
      }
      items.push_back(opts);
    }
    // best[i][q]: max value of devices [0,i) using q capacity units; choice table for the path back.
    const double kNone = -1;
    std::vector<std::vector<double>> best(items.size() + 1, std::vector<double>(Q + 1, kNone));
    std::vector<std::vector<int>> pick(items.size() + 1, std::vector<int>(Q + 1, -1));
    best[0][0] = 0;
    for (size_t i = 0; i < items.size(); ++i)
      for (int q = 0; q <= Q; ++q) {
        if (best[i][q] == kNone) continue;
        for (size_t o = 0; o < items[i].size(); ++o) {
          const int nq = q + items[i][o].weight;
          if (nq > Q) continue;
          const double v = best[i][q] + items[i][o].value;
          if (v > best[i + 1][nq] + 1e-12) {
            best[i + 1][nq] = v;
            pick[i + 1][nq] = static_cast<int>(o) * (Q + 1) + q;
          }
        }
      }
    int q_best = 0;
    for (int q = 0; q <= Q; ++q)
      if (best[items.size()][q] > best[items.size()][q_best]) q_best = q;
    last_objective_ += best[items.size()][q_best];
    for (size_t i = items.size(); i > 0; --i) {
      const int code = pick[i][q_best];
      const int o = code / (Q + 1);
      out.strategies[devices[i - 1]->id] = items[i - 1][o].s;
      q_best = code % (Q + 1);
    }
    (void)sv;
  }
  return out;
}

}  // namespace coinfer
