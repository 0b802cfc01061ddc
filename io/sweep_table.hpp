#pragma once
// The merged table of a sweep: one row per point (grid values, seed, the run's total metrics).
// Written as sweep.h5 (schema "coinfer-sweep" version 3, documented in plots/README.md) and sweep.csv.
#include <cmath>
#include <string>
#include <vector>

#include "core/record_field.hpp"

namespace coinfer {

struct SweepRow {
  int point = 0;
  long long seed = 0;
  std::vector<std::string> values;  // one per grid axis, as given on the command line
  bool ok = false;                  // the point ran and produced a summary
  double throughput_rps = NAN, throughput_incl_drain_rps = NAN, offered_rps = NAN, latency_mean_ms = NAN, latency_p50_ms = NAN, latency_p95_ms = NAN,
         latency_p99_ms = NAN, energy_j_per_inference = NAN;
  long long completed = 0, failed = 0, decisions = 0;
  bool saturated = false;  // the point's run was saturated (summary.json total.saturated)
};

struct SweepTable {
  std::string scenario;
  std::vector<std::string> axes;  // grid axis names
  // What each axis varies, in words, for a figure's axis label (e.g. "devices of the first device
  // entry ('pi'; 2 other devices fixed)"); empty = the name says it. Attribute `axis_labels` in sweep.h5.
  std::vector<std::string> axis_labels;
  std::vector<SweepRow> rows;
};

// The row as field tables (core/record_field.hpp): sweep.h5's /point, /seed and /ok; its /metrics
// columns, which are also sweep.csv's columns after `ok`, in this order. (The grid values are one
// column per axis of the sweep: /grid/AXIS.)
const std::vector<RecordField<SweepRow>>& sweep_point_fields();
const std::vector<RecordField<SweepRow>>& sweep_metric_fields();

// Fills a row's metrics from a point's summary.json (ok = false if it is missing or unreadable).
void read_point_summary(const std::string& summary_json, SweepRow& row);
// Atomic writes. In sweep.h5 a grid axis whose values all parse as numbers is float64, else text.
void write_sweep_h5(const std::string& path, const SweepTable& t);
void write_sweep_csv(const std::string& path, const SweepTable& t);

}  // namespace coinfer
