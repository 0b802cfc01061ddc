#include "core/metrics.hpp"

#include <algorithm>
#include <utility>

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

using Tally = MetricsTally::Tally;

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

MetricsTally::MetricsTally(size_t devices, double warmup_s, double window_s, std::vector<double> deadline_s)
    : t0_(warmup_s), t1_(warmup_s + window_s), window_s_(window_s), deadline_s_(std::move(deadline_s)), per_(devices) {
  deadline_s_.resize(devices, 0.0);
}

void MetricsTally::add(const RequestRecord& r) {
  if (r.device < 0 || static_cast<size_t>(r.device) >= per_.size()) return;
  const size_t d = static_cast<size_t>(r.device);
  Tally& t = per_[d];
  const bool ok = r.status == RequestRecord::Status::ok && r.done();
  // When it ended: its result; a failure or drop when it was created (its time is not recorded),
  // except a failure at the drain's end, which never ended.
  const double ended = ok ? r.t_result : (is_drain_failure(r.failure) ? INFINITY : r.t_created);
  for (Tally* x : {&t, &all_}) {
    if (ok && r.t_result >= t0_ && r.t_result <= t1_) ++x->delivered;
    if (r.t_created < t0_ && ended > t0_) ++x->backlog_start;
    if (r.t_created <= t1_ && ended > t1_) ++x->backlog_end;
  }
  if (r.t_created < t0_) return;
  for (Tally* x : {&t, &all_}) ++x->created;
  const double deadline = deadline_s_[d];
  if (ok) {
    const double ms = r.latency_s() * 1e3;
    t.lat_ms.push_back(ms);
    all_.lat_ms.push_back(ms);
    if (r.t_result > t1_) ++t.in_drain, ++all_.in_drain;
    if (deadline > 0 && r.latency_s() <= deadline) ++t.met, ++all_.met;
  } else {
    ++t.failed, ++all_.failed;
    if (r.status == RequestRecord::Status::dropped) ++t.dropped, ++all_.dropped;
  }
  if (deadline > 0) ++with_deadline_;
}

std::vector<MetricsSummary> MetricsTally::finish(const std::vector<std::string>& device_ids, const std::vector<double>& energy_j) {
  const double window_s = window_s_;
  std::vector<MetricsSummary> out;
  out.reserve(std::min(per_.size(), device_ids.size()) + 1);  // each device's, then the total
  int saturated = 0;
  for (size_t d = 0; d < per_.size() && d < device_ids.size(); ++d) {
    per_[d].energy = d < energy_j.size() ? energy_j[d] : 0;
    all_.energy += per_[d].energy;
    out.push_back(make(device_ids[d], per_[d], window_s));
    saturated += out.back().saturated ? 1 : 0;
    if (deadline_s_[d] > 0) {
      out.back().deadline_met = per_[d].met;
      const long long ended = static_cast<long long>(per_[d].lat_ms.size()) + per_[d].failed;
      out.back().slo_attainment = ended ? static_cast<double>(per_[d].met) / static_cast<double>(ended) : NAN;
    }
    per_[d].lat_ms = {};
  }
  out.push_back(make("total", all_, window_s));
  out.back().saturated = out.back().saturated || saturated > 0;
  out.back().saturated_devices = saturated;
  if (with_deadline_ > 0) {
    out.back().deadline_met = all_.met;
    out.back().slo_attainment = static_cast<double>(all_.met) / static_cast<double>(with_deadline_);
  }
  all_.lat_ms = {};
  return out;
}

std::vector<MetricsSummary> summarise(const std::vector<RequestRecord>& records, const std::vector<std::string>& device_ids,
                                      const std::vector<double>& energy_j, double warmup_s, double window_s, const std::vector<double>& deadline_s) {
  MetricsTally tally(device_ids.size(), warmup_s, window_s, deadline_s);
  for (const RequestRecord& r : records) tally.add(r);
  return tally.finish(device_ids, energy_j);
}

}  // namespace coinfer
