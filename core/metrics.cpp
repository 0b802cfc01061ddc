#include "core/metrics.hpp"

#include <algorithm>

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

namespace {
MetricsSummary make(const std::string& id, std::vector<double>& lat_ms, long long failed, double energy,
                    double window_s) {
  MetricsSummary m;
  m.id = id;
  m.completed = static_cast<long long>(lat_ms.size());
  m.failed = failed;
  m.throughput_rps = window_s > 0 ? m.completed / window_s : 0;
  if (!lat_ms.empty()) {
    double sum = 0;
    for (double x : lat_ms) sum += x;
    m.latency.mean_ms = sum / lat_ms.size();
    m.latency.p50_ms = percentile(lat_ms, 50);
    m.latency.p95_ms = percentile(lat_ms, 95);
    m.latency.p99_ms = percentile(lat_ms, 99);
  }
  m.energy_j = energy;
  m.energy_j_per_inference = m.completed ? energy / m.completed : NAN;
  return m;
}
}  // namespace

std::vector<MetricsSummary> summarise(const std::vector<RequestRecord>& records,
                                      const std::vector<std::string>& device_ids,
                                      const std::vector<double>& energy_j, double warmup_s, double window_s,
                                      const std::vector<double>& deadline_s) {
  const size_t n = device_ids.size();
  std::vector<std::vector<double>> lat(n);
  std::vector<long long> failed(n, 0), dropped(n, 0), met(n, 0);
  std::vector<double> all;
  long long all_failed = 0, all_dropped = 0, all_met = 0, with_deadline = 0;
  const auto deadline = [&deadline_s](size_t d) { return d < deadline_s.size() ? deadline_s[d] : 0.0; };
  for (const auto& r : records) {
    if (r.t_created < warmup_s || r.device < 0 || static_cast<size_t>(r.device) >= n) continue;
    const size_t d = static_cast<size_t>(r.device);
    if (r.status == RequestRecord::Status::ok && r.done()) {
      lat[d].push_back(r.latency_s() * 1e3);
      all.push_back(r.latency_s() * 1e3);
      if (deadline(d) > 0 && r.latency_s() <= deadline(d)) ++met[d], ++all_met;
    } else {
      ++failed[d];
      ++all_failed;
      if (r.status == RequestRecord::Status::dropped) ++dropped[d], ++all_dropped;
    }
    if (deadline(d) > 0) ++with_deadline;
  }
  std::vector<MetricsSummary> out;
  double total_energy = 0;
  for (size_t d = 0; d < n; ++d) {
    double e = d < energy_j.size() ? energy_j[d] : 0;
    total_energy += e;
    out.push_back(make(device_ids[d], lat[d], failed[d], e, window_s));
    out.back().dropped = dropped[d];
    if (deadline(d) > 0) {
      out.back().deadline_met = met[d];
      const long long ended = static_cast<long long>(lat[d].size()) + failed[d];
      out.back().slo_attainment = ended ? static_cast<double>(met[d]) / static_cast<double>(ended) : NAN;
    }
  }
  out.push_back(make("total", all, all_failed, total_energy, window_s));
  out.back().dropped = all_dropped;
  if (with_deadline > 0) {
    out.back().deadline_met = all_met;
    out.back().slo_attainment = static_cast<double>(all_met) / static_cast<double>(with_deadline);
  }
  return out;
}

}  // namespace coinfer
