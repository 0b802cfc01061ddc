#pragma once
// Summary metrics over request records (summary.json, results.h5 /devices, sweeps, validation).
//
// The measurement window is [warmup_s, warmup_s + window_s] (warm-up to the end of arrivals). Which
// requests each figure counts (plots/README.md and sim/README.md "Metrics" say the same):
//   throughput_rps            results delivered (status ok) INSIDE the window, whenever the request was
//                             created, per second of window: what the system delivers. It cannot exceed
//                             what the links and processors carry, however long the drain.
//   throughput_incl_drain_rps requests created in the window that completed, drain included, per second
//                             of window: what the window's requests achieved in the end.
//   offered_rps               requests created in the window per second (the arrivals).
//   latency, SLO attainment   over requests created in the window (drain included: every fate counts).
//   energy per inference      the window's energy over the results delivered in the window.
// A run is `saturated` when its queues grew over the window: the backlog (requests created but not yet
// ended) at the window's end exceeds the backlog at its start by at least kSaturationShare of the
// window's arrivals and at least kSaturationMinRequests requests -- arrivals above what it delivers, or
// a drain left to finish a large share of the window's requests. Failed and dropped requests count as
// ended when created (their end time is not recorded), except those failed at the drain's end
// ("not finished ... (drain_s)"), which never ended.
#include <cmath>
#include <string>
#include <vector>

#include "core/request_record.hpp"

namespace coinfer {

// Names the rules above; a sweep point made under other rules is made again (io/input_fingerprint.hpp).
constexpr const char* kMetricsRules = "metrics: throughput delivered in the window, saturation by backlog growth";
constexpr double kSaturationShare = 0.10;
constexpr long long kSaturationMinRequests = 10;

struct LatencySummary {
  double mean_ms = NAN, p50_ms = NAN, p95_ms = NAN, p99_ms = NAN;
};

struct MetricsSummary {
  std::string id;                    // device id or "total"
  long long created = 0;             // requests created in the window (every status)
  long long completed = 0;           // created in the window, finished OK (drain included)
  long long delivered = 0;           // results (status ok) delivered inside the window, whenever created
  long long completed_in_drain = 0;  // created in the window, finished OK after the window's end
  long long failed = 0;              // created in the window, failed or dropped
  long long dropped = 0;             // of which dropped past their deadline (workload.drop_late)
  // Deadlines (workload.deadline_ms): requests created in the window that completed within it, and
  // their share of those that completed, failed or were dropped; NaN without a deadline.
  long long deadline_met = 0;
  double slo_attainment = NAN;
  double throughput_rps = 0;             // delivered / window
  double throughput_incl_drain_rps = 0;  // completed / window
  double offered_rps = 0;                // created / window
  // Saturation evidence: requests created and not ended at the window's start and at its end.
  long long backlog_start = 0, backlog_end = 0;
  bool saturated = false;     // the total: any device saturated (or the total's own backlog grew)
  int saturated_devices = 0;  // the total only: how many devices are saturated
  LatencySummary latency;
  double energy_j = 0;                  // device energy over the window (compute + radio)
  double energy_j_per_inference = NAN;  // energy_j / delivered
};

// Percentile with linear interpolation between closest ranks (numpy's default). q in [0,100].
// Empty input -> NaN. `values` is sorted in place.
double percentile(std::vector<double>& values, double q);

// Whether a backlog growing from `backlog_start` to `backlog_end` over a window with `created`
// arrivals is saturation (the rule above).
bool is_saturated(long long backlog_start, long long backlog_end, long long created);

// The summary of a run's requests taken one at a time, in id order (the order fixes the floating-point
// sums: the same records in the same order give the same bits), so that the records need not be held:
// a run that writes its requests out as they finish (sim/README.md "Results written as requests finish")
// keeps only each completed request's latency here (16 bytes: the device's and the total's list, for the
// percentiles). window_s: the measured span, from warm-up to the end of arrivals. deadline_s[d]: device
// d's requests' deadline (0 or absent: none); the total's attainment is over the devices with one.
class MetricsTally {
 public:
  MetricsTally(size_t devices, double warmup_s, double window_s, std::vector<double> deadline_s = {});
  // One request; a device index outside [0, devices) is ignored.
  void add(const RequestRecord& r);
  // Per-device summaries first, then "total". energy_j[d]: energy of device d over the window. Leaves
  // the tally empty (its latency lists are moved into the percentiles).
  std::vector<MetricsSummary> finish(const std::vector<std::string>& device_ids, const std::vector<double>& energy_j);

  // What one device's (or the total's) records add up to, before the rates.
  struct Tally {
    std::vector<double> lat_ms;  // created in the window, completed
    long long created = 0, delivered = 0, in_drain = 0, failed = 0, dropped = 0, met = 0;
    long long backlog_start = 0, backlog_end = 0;
    double energy = 0;
  };

 private:
  double t0_, t1_, window_s_;
  std::vector<double> deadline_s_;
  std::vector<Tally> per_;
  Tally all_;
  long long with_deadline_ = 0;
};

// The same over a list of records (MetricsTally, each record added in turn).
std::vector<MetricsSummary> summarise(const std::vector<RequestRecord>& records, const std::vector<std::string>& device_ids,
                                      const std::vector<double>& energy_j, double warmup_s, double window_s,
                                      const std::vector<double>& deadline_s = {});

}  // namespace coinfer
