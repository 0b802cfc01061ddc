#pragma once
// Lookup tables of measured (or synthesised) per-stage-range latencies. One LutTable per
// (device type, model, dataset); a LutSet holds the tables a run may consult.
// Units: seconds, bytes. Ranges are [begin,end) over the model's stages; batch sizes count samples.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace coinfer {

struct LatencyStats {
  double mean_s = 0, p50_s = 0, p95_s = 0, std_s = 0;
  long long count = 0;  // timed runs behind the figures; 0 for synthesised entries
};

struct LutKey {
  LutKey() = default;
  LutKey(std::string type, std::string model_name, std::string dataset_name, std::string processor_name = "")
      : device_type(std::move(type)), model(std::move(model_name)), dataset(std::move(dataset_name)), processor(std::move(processor_name)) {}
  std::string device_type, model, dataset;
  // Which of the type's processors the table describes (traces/devices.yaml), e.g. "gpu"; "" = not
  // stated: the type's only processor (every table before LUT schema 5).
  std::string processor;
  // "TYPE/MODEL/DATASET", or "TYPE:PROCESSOR/MODEL/DATASET" when the processor is stated.
  std::string to_string() const { return device_type + (processor.empty() ? "" : ":" + processor) + "/" + model + "/" + dataset; }
  bool operator<(const LutKey& o) const {
    return std::tie(device_type, model, dataset, processor) < std::tie(o.device_type, o.model, o.dataset, o.processor);
  }
  bool operator==(const LutKey& o) const {
    return device_type == o.device_type && model == o.model && dataset == o.dataset && processor == o.processor;
  }
};

// Where the numbers came from. kind is "measured", "synthesised" or "imported" (a CSV a user brought).
struct Provenance {
  std::string kind;
  std::map<std::string, std::string> attributes;  // e.g. cpu, threads, formula, calibration, date, command
};

class LutTable {
 public:
  LutTable() = default;
  LutTable(LutKey key, int num_stages, int max_batch);

  const LutKey& key() const { return key_; }
  int num_stages() const { return num_stages_; }
  int max_batch() const { return max_batch_; }

  void set_latency(int begin, int end, int batch, const LatencyStats& s);
  bool has_latency(int begin, int end, int batch) const;
  // Latency of running stages [begin,end) on a batch. An empty range costs 0. Throws LutMissingError
  // naming the key, range and batch when absent.
  const LatencyStats& latency(int begin, int end, int batch) const;
  double mean_seconds(int begin, int end, int batch) const;

  std::vector<double>& bytes_per_split() { return bytes_per_split_; }  // size n+1, per sample
  const std::vector<double>& bytes_per_split() const { return bytes_per_split_; }
  // Peak memory of running [begin,end) on a batch (bytes above the input state, what coinfer profile
  // measures), per batch size; the forms without a batch are batch 1 (all a table had before).
  void set_peak_memory(int begin, int end, double bytes) { set_peak_memory(begin, end, 1, bytes); }
  std::optional<double> peak_memory(int begin, int end) const { return peak_memory(begin, end, 1); }
  void set_peak_memory(int begin, int end, int batch, double bytes);
  std::optional<double> peak_memory(int begin, int end, int batch) const;
  // Whether any peak memory is known at a batch size above 1.
  bool has_peak_memory_beyond_batch_one() const;

  // Activation sparsity (for SparOA's scheduler): the fraction of exact zeros in stage
  // s's output over the inputs the table was measured on; none for synthesised or older tables.
  // Throws std::invalid_argument for a stage outside 0..n-1 or a fraction outside [0, 1].
  void set_stage_output_sparsity(int stage, double fraction);
  std::optional<double> stage_output_sparsity(int stage) const;
  bool has_stage_output_sparsity() const;

  Provenance& provenance() { return provenance_; }
  const Provenance& provenance() const { return provenance_; }

  // Throws std::invalid_argument naming the first implausible value: a latency mean outside
  // [limits::kMinLutLatencyS, kMaxLutLatencyS], a NaN/infinite/negative p50, p95 or std, a negative
  // count, bytes per split or peak memory that are NaN, negative, infinite or beyond their bound, a
  // stage sparsity outside [0, 1].
  void check_values() const;

  // Every (begin,end,batch) with begin<end and batch in 1..max_batch that has no latency entry.
  std::vector<std::tuple<int, int, int>> latency_gaps() const;

  // Latency distributions. A table may carry, for each latency entry, its quantile function: the
  // latency (s) at each of the table's cumulative probabilities ("levels"). Levels are shared by all
  // entries, run from 0 to 1, never decrease, and may repeat a value to express a jump (an atom: a
  // two-point distribution is levels {0, p, p, 1} with values {a, a, b, b}). Between levels the
  // quantile function is linear, so an entry's distribution is that of the sorted timed runs as
  // core/metrics.hpp's percentile() interpolates them. Entries without quantiles have no distribution
  // (synthesised tables, files of schema 1): the simulator uses their mean.
  // set_quantile_levels() drops every entry's quantiles. Throws std::invalid_argument for levels out
  // of shape (2..limits::kMaxLutQuantileLevels values, from 0 to 1, nondecreasing) or beyond
  // limits::kMaxLutQuantileValues values in all.
  void set_quantile_levels(std::vector<double> levels);
  const std::vector<double>& quantile_levels() const { return quantile_levels_; }
  // values: one latency (s) per level. The entry must exist (set_latency first).
  void set_quantiles(int begin, int end, int batch, const std::vector<double>& values_s);
  // The entry's quantiles (quantile_levels().size() values), or nullptr when it has none.
  const double* quantiles(int begin, int end, int batch) const;
  bool has_distributions() const { return distributions_ > 0; }

  // Bytes on the wire. For one request crossing split k (batch 1): the bytes the middleware sends
  // (frame header, task header or, at k = n, result header, the serialised state or output,
  // zstd-compressed when that makes it smaller) as a distribution over inputs (quantiles at
  // quantile_levels(): compressibility depends on the input), and the mean seconds this hardware
  // takes to compress it before sending and to decompress it after receiving (0 when sent raw).
  // Absent for synthesised, imported and older tables: the simulator then sends the model spec's
  // tensor bytes. Requires the quantile levels; set_wire throws std::invalid_argument otherwise.
  void set_wire(int split, const std::vector<double>& bytes_quantiles, double compress_s, double decompress_s);
  const double* wire_bytes_quantiles(int split) const;  // nullptr when split k has none
  double wire_compress_seconds(int split) const;        // 0 when none
  double wire_decompress_seconds(int split) const;      // 0 when none
  bool has_wire_bytes() const { return wire_splits_ > 0; }

  // Estimated entries. An entry filled by a fitted regressor (coinfer lut fill, the MEDN paper's
  // per-module models) instead of a measurement carries how it was estimated (e.g. "sum of stages:
  // edgeconv=medn, linear=lr") and the estimate's relative error measured on held-out measured
  // samples (0.08 = 8 %). A run uses such entries only where its scenario says `luts_fill: allow`.
  // set_estimate throws std::invalid_argument for an entry without a latency, an empty method or an
  // error that is not a finite number >= 0; set_latency on the entry keeps the mark (clear_estimate).
  struct Estimate {
    std::string method;
    double relative_error = 0;
  };
  void set_estimate(int begin, int end, int batch, Estimate e);
  void clear_estimate(int begin, int end, int batch);
  const Estimate* estimate(int begin, int end, int batch) const;  // nullptr for a measured entry
  long long estimated_entries() const { return static_cast<long long>(estimates_.size()); }
  // Every estimated entry as (begin, end, batch), in index order.
  std::vector<std::tuple<int, int, int>> estimated_cells() const;

  // A copy covering batch sizes 1..max_batch (>= this table's): every entry, distribution, estimate,
  // wire figure, memory and provenance kept; the new batch sizes start empty.
  LutTable with_max_batch(int max_batch) const;

 private:
  size_t index(int begin, int end, int batch) const;
  void check_range(int begin, int end, int batch) const;
  LutKey key_;
  int num_stages_ = 0;
  int max_batch_ = 0;
  std::vector<std::optional<LatencyStats>> latency_;
  std::vector<double> bytes_per_split_;
  std::vector<std::optional<double>> peak_memory_;  // per latency cell (index())
  std::vector<double> stage_sparsity_;              // per stage; NaN = not measured
  std::vector<double> quantile_levels_;
  std::vector<double> quantiles_;                            // per latency cell, quantile_levels_.size() values; NaN first value = none
  long long distributions_ = 0;                              // entries with quantiles
  std::vector<double> wire_quantiles_;                       // per split, quantile_levels_.size() values; NaN first value = none
  std::vector<double> wire_compress_s_, wire_decompress_s_;  // per split
  int wire_splits_ = 0;
  std::map<size_t, Estimate> estimates_;  // by latency cell index
  Provenance provenance_;
};

// The levels coinfer profile records: 0, 0.01, 0.05, 0.10, ..., 0.90, 0.95, 0.99, 1 (23 values; the
// median and p95 among them, so the distribution reproduces the p50 and p95 columns exactly).
const std::vector<double>& standard_quantile_levels();

class LutMissingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LutSet {
 public:
  // Adds a table; a second table with the same key replaces nothing and throws (ambiguous source).
  void add(LutTable table, const std::string& origin);
  // Which table answers a key: the table of exactly that key; else, for a key naming a processor, the
  // type's table that names none (its only processor); else, for a key naming none, the type's table
  // if it has exactly one for that model and dataset (whatever processor it names). Several such
  // tables and no processor named: contains(), table() and origin() throw LutMissingError asking for one.
  bool contains(const LutKey& key) const;
  // Throws LutMissingError naming the key and the keys that do exist.
  const LutTable& table(const LutKey& key) const;
  const std::string& origin(const LutKey& key) const;
  std::vector<LutKey> keys() const;
  // A table a named LUT file holds but that was not read, its device type being none the run uses
  // (io/lut_repository.hpp): it answers no key, and is named in "no LUT" messages and the run's data
  // files. A key given twice (read or not) throws as add() does.
  void add_unread(const LutKey& key, const std::string& origin);
  // Unread keys and the file of each.
  const std::map<LutKey, std::string>& unread() const { return unread_; }

 private:
  // The table answering `key` (rules above); end() when none; throws LutMissingError when ambiguous.
  std::map<LutKey, LutTable>::const_iterator find(const LutKey& key) const;

  std::map<LutKey, LutTable> tables_;
  std::map<LutKey, std::string> origins_;
  std::map<LutKey, std::string> unread_;
};

}  // namespace coinfer
