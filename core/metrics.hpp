#pragma once
// Summary metrics over request records (summary.json). Only requests created at or after warm-up count.
#include <cmath>
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
  long long failed = 0;     // failed or dropped
  long long dropped = 0;    // of which dropped past their deadline (workload.drop_late)
  // Deadlines (workload.deadline_ms): requests created in the window that completed within it, and
  // their share of those that completed, failed or were dropped; NaN without a deadline.
  long long deadline_met = 0;
  double slo_attainment = NAN;
  double throughput_rps = 0;  // completed / (measurement window)
  LatencySummary latency;
  double energy_j = 0;        // device energy over the window (compute + radio)
  double energy_j_per_inference = NAN;
};

// Percentile with linear interpolation between closest ranks (numpy's default). q in [0,100].
// Empty input -> NaN. `values` is sorted in place.
double percentile(std::vector<double>& values, double q);

// window_s: the measured span, from warm-up to the end of arrivals.
// energy_j[d]: energy of device d over that window. deadline_s[d]: its requests' deadline (0 or absent:
// none); the total's attainment is over the devices with one. Per-device summaries first, then "total".
std::vector<MetricsSummary> summarise(const std::vector<RequestRecord>& records,
                                      const std::vector<std::string>& device_ids,
                                      const std::vector<double>& energy_j, double warmup_s, double window_s,
                                      const std::vector<double>& deadline_s = {});

}  // namespace coinfer
