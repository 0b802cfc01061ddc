#pragma once
// Summary metrics over request records (summary.json). Only requests created at or after warm-up count.
#include <string>
#include <vector>

#include "core/request_record.hpp"

namespace coinfer {

struct LatencySummary {
  double mean_ms = NAN, p50_ms = NAN, p95_ms = NAN, p99_ms = NAN;
};

struct MetricsSummary {
  std::string id;          // device id or "total"
  long long completed = 0; // finished OK, created after warm-up
  long long failed = 0;
  double throughput_rps = 0;  // completed / (measurement window)
  LatencySummary latency;
  double energy_j = 0;        // device energy over the window (compute + radio)
  double energy_j_per_inference = NAN;
};

// Percentile with linear interpolation between closest ranks (numpy's default). q in [0,100].
// Empty input -> NaN. `values` is sorted in place.
double percentile(std::vector<double>& values, double q);

// window_s: the measured span, from warm-up to the end of arrivals.
// energy_j[d]: energy of device d over that window. Per-device summaries first, then "total".
std::vector<MetricsSummary> summarise(const std::vector<RequestRecord>& records,
                                      const std::vector<std::string>& device_ids,
                                      const std::vector<double>& energy_j, double warmup_s, double window_s);

}  // namespace coinfer
