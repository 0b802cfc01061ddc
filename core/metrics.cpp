#include "core/metrics.hpp"

#include <algorithm>

#include "core/run_assembly.hpp"

namespace coinfer {

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  double pos = q / 100.0 * (v.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - lo;
  return v[lo] + (v[hi] - v[lo]) * frac;
}

bool is_saturated(long long backlog_start, long long backlog_end, long long created) {
  const long long growth = backlog_end - backlog_start;
  return growth >= kSaturationMinRequests && static_cast<double>(growth) >= kSaturationShare * static_cast<double>(created);
}

namespace {

// What one device's (or the total's) records add up to, before the rates.
struct Tally {
  std::vector<double> lat_ms;  // created in the window, completed
  long long created = 0, delivered = 0, in_drain = 0, failed = 0, dropped = 0, met = 0;
  long long backlog_start = 0, backlog_end = 0;
  double energy = 0;
};

MetricsSummary make(const std::string& id, Tally& t, double window_s) {
  MetricsSummary m;
  m.id = id;
  m.created = t.created;
  m.completed = static_cast<long long>(t.lat_ms.size());
  m.delivered = t.delivered;
  m.completed_in_drain = t.in_drain;
  m.failed = t.failed;
  m.dropped = t.dropped;
  const auto rate = [window_s](long long n) { return window_s > 0 ? static_cast<double>(n) / window_s : 0.0; };
  m.throughput_rps = rate(t.delivered);
  m.throughput_incl_drain_rps = rate(m.completed);
  m.offered_rps = rate(t.created);
  m.backlog_start = t.backlog_start;
  m.backlog_end = t.backlog_end;
  m.saturated = is_saturated(t.backlog_start, t.backlog_end, t.created);
  if (!t.lat_ms.empty()) {
    double sum = 0;
    for (double x : t.lat_ms) sum += x;
    m.latency.mean_ms = sum / t.lat_ms.size();
    m.latency.p50_ms = percentile(t.lat_ms, 50);
    m.latency.p95_ms = percentile(t.lat_ms, 95);
    m.latency.p99_ms = percentile(t.lat_ms, 99);
  }
  m.energy_j = t.energy;
  m.energy_j_per_inference = t.delivered ? t.energy / static_cast<double>(t.delivered) : NAN;
  return m;
}
}  // namespace

std::vector<MetricsSummary> summarise(const std::vector<RequestRecord>& records, const std::vector<std::string>& device_ids,
                                      const std::vector<double>& energy_j, double warmup_s, double window_s, const std::vector<double>& deadline_s) {
  const size_t n = device_ids.size();
  const double t0 = warmup_s, t1 = warmup_s + window_s;
  std::vector<Tally> per(n);
  Tally all;
  long long with_deadline = 0;
  const auto deadline = [&deadline_s](size_t d) { return d < deadline_s.size() ? deadline_s[d] : 0.0; };
  for (const auto& r : records) {
    if (r.device < 0 || static_cast<size_t>(r.device) >= n) continue;
    const size_t d = static_cast<size_t>(r.device);
    Tally& t = per[d];
    const bool ok = r.status == RequestRecord::Status::ok && r.done();
    // When it ended: its result; a failure or drop when it was created (its time is not recorded),
    // except a failure at the drain's end, which never ended.
    const double ended = ok ? r.t_result : (is_drain_failure(r.failure) ? INFINITY : r.t_created);
    for (Tally* x : {&t, &all}) {
      if (ok && r.t_result >= t0 && r.t_result <= t1) ++x->delivered;
      if (r.t_created < t0 && ended > t0) ++x->backlog_start;
      if (r.t_created <= t1 && ended > t1) ++x->backlog_end;
    }
    if (r.t_created < warmup_s) continue;
    for (Tally* x : {&t, &all}) ++x->created;
    if (ok) {
      const double ms = r.latency_s() * 1e3;
      t.lat_ms.push_back(ms);
      all.lat_ms.push_back(ms);
      if (r.t_result > t1) ++t.in_drain, ++all.in_drain;
      if (deadline(d) > 0 && r.latency_s() <= deadline(d)) ++t.met, ++all.met;
    } else {
      ++t.failed, ++all.failed;
      if (r.status == RequestRecord::Status::dropped) ++t.dropped, ++all.dropped;
    }
    if (deadline(d) > 0) ++with_deadline;
  }
  std::vector<MetricsSummary> out;
  int saturated = 0;
  for (size_t d = 0; d < n; ++d) {
    per[d].energy = d < energy_j.size() ? energy_j[d] : 0;
    all.energy += per[d].energy;
    out.push_back(make(device_ids[d], per[d], window_s));
    saturated += out.back().saturated ? 1 : 0;
    if (deadline(d) > 0) {
      out.back().deadline_met = per[d].met;
      const long long ended = static_cast<long long>(per[d].lat_ms.size()) + per[d].failed;
      out.back().slo_attainment = ended ? static_cast<double>(per[d].met) / static_cast<double>(ended) : NAN;
    }
  }
  out.push_back(make("total", all, window_s));
  out.back().saturated = out.back().saturated || saturated > 0;
  out.back().saturated_devices = saturated;
  if (with_deadline > 0) {
    out.back().deadline_met = all.met;
    out.back().slo_attainment = static_cast<double>(all.met) / static_cast<double>(with_deadline);
  }
  return out;
}

}  // namespace coinfer
