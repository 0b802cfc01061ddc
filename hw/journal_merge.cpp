#include "hw/journal_merge.hpp"

#include <algorithm>
#include <cmath>

#include "core/run_assembly.hpp"
#include "core/bandwidth_schedule.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/text_util.hpp"
#include "hw/record_journal.hpp"

namespace coinfer::hw {

std::vector<std::vector<RequestRecord>> read_journals_server_clock(const Scenario& sc, const std::vector<std::string>& paths,
                                                                   std::vector<ClockRecord>& clocks, double tolerance_s, const std::string& warn_as,
                                                                   std::vector<PowerReadings>* power) {
  std::vector<std::vector<RequestRecord>> journals(sc.devices.size());
  if (power) power->assign(sc.devices.size(), {});
  for (size_t i = 0; i < paths.size() && i < sc.devices.size(); ++i) {
    if (paths[i].empty()) continue;
    JournalClock c;
    journals[i] = read_journal_server_clock(paths[i], &c);
    if (power) {
      (*power)[i] = read_journal_power(paths[i]);
      for (auto& x : (*power)[i]) x.first += device_time_shift(c);
    }
    for (auto& r : journals[i]) r.device = static_cast<std::int32_t>(i);
    clocks.push_back({sc.devices[i].id, c.offset_s, c.uncertainty_s, c.samples});
    if (std::isnan(c.offset_s))
      log::warn(warn_as, "device " + sc.devices[i].id + ": no clock estimate in its journal; its times are on its own clock");
    else if (c.uncertainty_s > tolerance_s)
      log::warn(warn_as, "device " + sc.devices[i].id + ": clock offset " + strprintf("%.4f", c.offset_s) + " s known only to +-" +
                             strprintf("%.4f", c.uncertainty_s) + " s (more than " + strprintf("%.4f", tolerance_s) +
                             " s): its times relative to the server's are that uncertain");
  }
  return journals;
}

double energy_from_power(const PowerReadings& p, double from_s, double to_s, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return NAN;
  };
  if (p.empty()) return fail("no power readings");
  if (p.front().first > from_s + 2)
    return fail("the first power reading comes " + strprintf("%.1f", p.front().first - from_s) + " s after the window opens");
  if (p.back().first < to_s - 2)
    return fail("the last power reading comes " + strprintf("%.1f", to_s - p.back().first) + " s before the window closes");
  // Piecewise linear between readings, constant beyond the first and the last.
  auto at = [&](double t) {
    if (t <= p.front().first) return p.front().second;
    if (t >= p.back().first) return p.back().second;
    const auto it = std::lower_bound(p.begin(), p.end(), std::make_pair(t, -1e300));
    const auto& b = *it;
    const auto& a = *(it - 1);
    return b.first > a.first ? a.second + (b.second - a.second) * (t - a.first) / (b.first - a.first) : b.second;
  };
  std::vector<double> ts = {from_s};
  for (const auto& x : p) {
    if (x.first > from_s && x.first < to_s) ts.push_back(x.first);
  }
  ts.push_back(to_s);
  double joules = 0;
  for (size_t k = 1; k < ts.size(); ++k) {
    if (ts[k] - ts[k - 1] > 2) return fail("a gap of " + strprintf("%.1f", ts[k] - ts[k - 1]) + " s between power readings");
    joules += (at(ts[k - 1]) + at(ts[k])) / 2 * (ts[k] - ts[k - 1]);
  }
  if (why) why->clear();
  return joules;
}

RunResults merge_journals(const Scenario& sc, const std::vector<std::vector<RequestRecord>>& journals, std::vector<DecisionRecord> decisions,
                          double end_s, const std::vector<PowerReadings>* power) {
  RunResults r = run_results_of(sc);
  r.service_time = "measured";  // real executions: nothing sampled
  r.end_s = end_s;
  const size_t nd = sc.devices.size();
  for (size_t i = 0; i < nd; ++i) {
    const DeviceSpec& d = sc.devices[i];
    DeviceResult dr = device_result_of(d);
    dr.energy_compute_j = NAN;  // not measured on the testbed
    dr.energy_idle_j = NAN;
    dr.energy_radio_j = NAN;
    if (i < journals.size())
      for (const RequestRecord& rec : journals[i]) {
        dr.bytes_sent += rec.bytes_up;
        dr.bytes_received += rec.bytes_down;
        r.requests.push_back(rec);
      }
    r.devices.push_back(dr);
  }
  std::stable_sort(r.requests.begin(), r.requests.end(), [](const RequestRecord& a, const RequestRecord& b) {
    return a.t_created < b.t_created || (a.t_created == b.t_created && a.device < b.device);
  });
  for (size_t k = 0; k < r.requests.size(); ++k) r.requests[k].id = static_cast<std::int64_t>(k);
  // Events, bandwidth samples and each device's final strategy and server: the simulator's rules (core/run_assembly.hpp).
  r.decisions = std::move(decisions);
  r.events = scenario_event_records(sc);
  r.bandwidth = bandwidth_samples(sc, end_s);
  record_final_choices(sc, r);
  std::vector<double> energy(nd, NAN);
  for (size_t i = 0; power && i < nd && i < power->size(); ++i) {
    if ((*power)[i].empty()) continue;
    std::string why;
    energy[i] = energy_from_power((*power)[i], sc.warmup_s, sc.duration_s, &why);
    if (!why.empty()) log::warn("run", "device " + sc.devices[i].id + ": energy not measured: " + why);
    r.devices[i].energy_compute_j = energy[i];  // the whole board, radio included
    r.devices[i].energy_radio_j = std::isnan(energy[i]) ? NAN : 0;
    r.devices[i].energy_idle_j = NAN;  // not split: the meter measures the whole board
  }
  summarise_run(sc, r, energy);  // the simulator's rules, on the real batches' times (core/run_assembly.hpp)
  return r;
}

}  // namespace coinfer::hw
