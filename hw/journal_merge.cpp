#include "hw/journal_merge.hpp"

#include <algorithm>
#include <cmath>

#include "core/bandwidth_schedule.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/text_util.hpp"
#include "hw/record_journal.hpp"

namespace coinfer::hw {

std::vector<std::vector<RequestRecord>> read_journals_server_clock(const Scenario& sc, const std::vector<std::string>& paths,
                                                                   std::vector<ClockRecord>& clocks, double tolerance_s,
                                                                   const std::string& warn_as) {
  std::vector<std::vector<RequestRecord>> journals(sc.devices.size());
  for (size_t i = 0; i < paths.size() && i < sc.devices.size(); ++i) {
    if (paths[i].empty()) continue;
    JournalClock c;
    journals[i] = read_journal_server_clock(paths[i], &c);
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

RunResults merge_journals(const Scenario& sc, const std::vector<std::vector<RequestRecord>>& journals,
                          std::vector<DecisionRecord> decisions, double end_s) {
  RunResults r = run_results_of(sc);
  r.service_time = "measured";  // real executions: nothing sampled
  r.end_s = end_s;
  std::vector<std::string> ids;
  const size_t nd = sc.devices.size();
  for (size_t i = 0; i < nd; ++i) {
    const DeviceSpec& d = sc.devices[i];
    DeviceResult dr = device_result_of(d);
    dr.energy_compute_j = NAN;  // not measured on the testbed
    dr.energy_radio_j = NAN;
    if (i < journals.size())
      for (const RequestRecord& rec : journals[i]) {
        dr.bytes_sent += rec.bytes_up;
        dr.bytes_received += rec.bytes_down;
        if (!rec.strategy.empty()) dr.strategy = rec.strategy;  // the last strategy it ran
        r.requests.push_back(rec);
      }
    r.devices.push_back(dr);
    ids.push_back(d.id);
    for (const auto& p : BandwidthSchedule(d, sc.events).points()) r.bandwidth.push_back({p.t_s, static_cast<int>(i), p.mbps});
  }
  std::stable_sort(r.requests.begin(), r.requests.end(), [](const RequestRecord& a, const RequestRecord& b) {
    return a.t_created < b.t_created || (a.t_created == b.t_created && a.device < b.device);
  });
  for (size_t k = 0; k < r.requests.size(); ++k) r.requests[k].id = static_cast<std::int64_t>(k);
  for (const auto& e : sc.events) {
    EventRecord er;
    er.t_s = e.at_s;
    er.device = e.device;
    er.kind = e.kind == EventSpec::Kind::bandwidth ? "bandwidth" : e.kind == EventSpec::Kind::join ? "join" : "leave";
    er.value = e.bandwidth_mbps;
    r.events.push_back(er);
  }
  r.decisions = std::move(decisions);
  std::vector<double> energy(nd, NAN);
  r.summary = summarise(r.requests, ids, energy, sc.warmup_s, sc.duration_s - sc.warmup_s);
  return r;
}

}  // namespace coinfer::hw
