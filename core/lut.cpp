#include "core/lut.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "core/limits.hpp"
#include "core/text_util.hpp"

namespace coinfer {

LutTable::LutTable(LutKey key, int num_stages, int max_batch)
    : key_(std::move(key)),
      num_stages_(num_stages),
      max_batch_(max_batch),
      latency_(static_cast<size_t>(num_stages + 1) * (num_stages + 1) * max_batch),
      bytes_per_split_(num_stages + 1, 0.0),
      peak_memory_(static_cast<size_t>(num_stages + 1) * (num_stages + 1) * max_batch),
      stage_sparsity_(static_cast<size_t>(std::max(num_stages, 0)), std::nan("")) {
  if (num_stages < 1 || max_batch < 1) throw std::invalid_argument("LUT needs >= 1 stage and batch size >= 1");
}

void LutTable::check_values() const {
  auto bad = [&](const std::string& what, double v, const std::string& allowed) {
    throw std::invalid_argument(what + " is " + format_double(v) + " (allowed: " + allowed + ")");
  };
  auto in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  const std::string lat_range = "[" + format_double(limits::kMinLutLatencyS) + ", " + format_double(limits::kMaxLutLatencyS) + "] s";
  for (int i = 0; i < num_stages_; ++i)
    for (int j = i + 1; j <= num_stages_; ++j) {
      const std::string range = "[" + std::to_string(i) + "," + std::to_string(j) + ")";
      for (int b = 1; b <= max_batch_; ++b) {
        const auto& e = latency_[index(i, j, b)];
        if (!e) continue;
        const std::string at = " at " + range + " batch " + std::to_string(b);
        if (!in(e->mean_s, limits::kMinLutLatencyS, limits::kMaxLutLatencyS)) bad("latency_mean_s" + at, e->mean_s, lat_range);
        if (!in(e->p50_s, 0, limits::kMaxLutLatencyS))
          bad("latency_p50_s" + at, e->p50_s, "a finite number in [0, " + format_double(limits::kMaxLutLatencyS) + "] s");
        if (!in(e->p95_s, 0, limits::kMaxLutLatencyS))
          bad("latency_p95_s" + at, e->p95_s, "a finite number in [0, " + format_double(limits::kMaxLutLatencyS) + "] s");
        if (!in(e->std_s, 0, limits::kMaxLutLatencyS)) bad("latency_std_s" + at, e->std_s, "a finite number >= 0");
        if (e->count < 0) bad("latency_count" + at, static_cast<double>(e->count), ">= 0");
        if (const double* q = quantiles(i, j, b))
          for (size_t k = 0; k < quantile_levels_.size(); ++k) {
            const std::string qat =
                "latency_quantiles_s at " + range + " batch " + std::to_string(b) + " level " + format_double(quantile_levels_[k]);
            if (!in(q[k], 0, limits::kMaxLutLatencyS)) bad(qat, q[k], "a finite number in [0, " + format_double(limits::kMaxLutLatencyS) + "] s");
            if (k > 0 && q[k] < q[k - 1])
              bad(qat, q[k], "not below the previous level's " + format_double(q[k - 1]) + " s (quantiles never decrease)");
          }
      }
      for (int b = 1; b <= max_batch_; ++b) {
        const auto& m = peak_memory_[index(i, j, b)];
        if (m && !in(*m, 0, limits::kMaxPeakMemoryBytes))
          bad("peak_memory_bytes at " + range + (b > 1 ? " batch " + std::to_string(b) : std::string()), *m, "a finite number of bytes in [0, 1e15]");
      }
    }
  for (int s = 0; s < num_stages_; ++s) {
    const double v = stage_sparsity_[static_cast<size_t>(s)];
    if (!std::isnan(v) && !in(v, 0, 1)) bad("stage_output_sparsity at stage " + std::to_string(s), v, "a fraction in [0, 1]");
  }
  if (bytes_per_split_.size() != static_cast<size_t>(num_stages_ + 1))
    throw std::invalid_argument("bytes_per_split has " + std::to_string(bytes_per_split_.size()) +
                                " values, not num_stages + 1 = " + std::to_string(num_stages_ + 1));
  for (size_t k = 0; k < bytes_per_split_.size(); ++k)
    if (!in(bytes_per_split_[k], 0, limits::kMaxSplitBytes))
      bad("bytes_per_split at split " + std::to_string(k), bytes_per_split_[k], "a finite number of bytes in [0, 1e12]");
  for (int k = 0; k <= num_stages_; ++k) {
    const double* q = wire_bytes_quantiles(k);
    if (!q) continue;
    const std::string at = " at split " + std::to_string(k);
    for (size_t i = 0; i < quantile_levels_.size(); ++i) {
      if (!in(q[i], 0, limits::kMaxSplitBytes)) bad("wire_bytes_quantiles" + at, q[i], "a finite number of bytes in [0, 1e12]");
      if (i > 0 && q[i] < q[i - 1])
        bad("wire_bytes_quantiles" + at, q[i], "not below the previous level's " + format_double(q[i - 1]) + " (quantiles never decrease)");
    }
    if (!in(wire_compress_s_[k], 0, limits::kMaxLutLatencyS)) bad("wire_compress_s" + at, wire_compress_s_[k], "a finite number in [0, 86400] s");
    if (!in(wire_decompress_s_[k], 0, limits::kMaxLutLatencyS))
      bad("wire_decompress_s" + at, wire_decompress_s_[k], "a finite number in [0, 86400] s");
  }
}

const std::vector<double>& standard_quantile_levels() {
  static const std::vector<double> levels = [] {
    std::vector<double> l{0, 0.01};
    for (int k = 1; k <= 19; ++k) l.push_back(k / 20.0);
    l.push_back(0.99);
    l.push_back(1);
    return l;
  }();
  return levels;
}

void LutTable::set_quantile_levels(std::vector<double> levels) {
  const size_t k = levels.size();
  if (k < 2 || static_cast<long long>(k) > limits::kMaxLutQuantileLevels)
    throw std::invalid_argument("quantile levels: " + std::to_string(k) + " given (allowed: 2.." + std::to_string(limits::kMaxLutQuantileLevels) +
                                ")");
  if (static_cast<double>(latency_.size()) * static_cast<double>(k) > static_cast<double>(limits::kMaxLutQuantileValues))
    throw std::invalid_argument("quantile levels: " + std::to_string(k) + " levels x " + std::to_string(latency_.size()) +
                                " latency cells is more than " + std::to_string(limits::kMaxLutQuantileValues) + " values");
  if (levels.front() != 0.0 || levels.back() != 1.0)
    throw std::invalid_argument("quantile levels must start at 0 and end at 1 (given " + format_double(levels.front()) + " .. " +
                                format_double(levels.back()) + ")");
  for (size_t i = 1; i < k; ++i)
    if (!(levels[i] >= levels[i - 1]) || !std::isfinite(levels[i]))
      throw std::invalid_argument("quantile level " + std::to_string(i) + " is " + format_double(levels[i]) + " (levels never decrease)");
  quantile_levels_ = std::move(levels);
  quantiles_.clear();
  distributions_ = 0;
  wire_quantiles_.clear();
  wire_compress_s_.clear();
  wire_decompress_s_.clear();
  wire_splits_ = 0;
}

void LutTable::set_wire(int split, const std::vector<double>& bytes_quantiles, double compress_s, double decompress_s) {
  if (split < 0 || split > num_stages_)
    throw std::invalid_argument("LUT " + key_.to_string() + ": wire bytes for split " + std::to_string(split) + " outside 0.." +
                                std::to_string(num_stages_));
  if (quantile_levels_.empty()) throw std::invalid_argument("LUT " + key_.to_string() + ": set the quantile levels before wire bytes");
  const size_t K = quantile_levels_.size();
  if (bytes_quantiles.size() != K)
    throw std::invalid_argument("LUT " + key_.to_string() + ": " + std::to_string(bytes_quantiles.size()) + " wire byte quantiles for " +
                                std::to_string(K) + " levels");
  const size_t N1 = static_cast<size_t>(num_stages_ + 1);
  if (wire_quantiles_.empty()) {
    wire_quantiles_.assign(N1 * K, NAN);
    wire_compress_s_.assign(N1, NAN);
    wire_decompress_s_.assign(N1, NAN);
  }
  double* q = &wire_quantiles_[static_cast<size_t>(split) * K];
  if (std::isnan(q[0])) ++wire_splits_;
  std::copy(bytes_quantiles.begin(), bytes_quantiles.end(), q);
  wire_compress_s_[split] = compress_s;
  wire_decompress_s_[split] = decompress_s;
  if (std::isnan(q[0])) --wire_splits_;
}

const double* LutTable::wire_bytes_quantiles(int split) const {
  if (wire_quantiles_.empty() || split < 0 || split > num_stages_) return nullptr;
  const double* q = &wire_quantiles_[static_cast<size_t>(split) * quantile_levels_.size()];
  return std::isnan(q[0]) ? nullptr : q;
}

double LutTable::wire_compress_seconds(int split) const { return wire_bytes_quantiles(split) ? wire_compress_s_[split] : 0; }
double LutTable::wire_decompress_seconds(int split) const { return wire_bytes_quantiles(split) ? wire_decompress_s_[split] : 0; }

void LutTable::set_quantiles(int begin, int end, int batch, const std::vector<double>& values_s) {
  check_range(begin, end, batch);
  if (quantile_levels_.empty()) throw std::invalid_argument("LUT " + key_.to_string() + ": set the quantile levels before quantiles");
  if (values_s.size() != quantile_levels_.size())
    throw std::invalid_argument("LUT " + key_.to_string() + ": " + std::to_string(values_s.size()) + " quantiles for " +
                                std::to_string(quantile_levels_.size()) + " levels");
  if (begin >= end || !latency_[index(begin, end, batch)])
    throw std::invalid_argument("LUT " + key_.to_string() + ": quantiles for an entry without a latency");
  const size_t K = quantile_levels_.size();
  if (quantiles_.empty()) quantiles_.assign(latency_.size() * K, NAN);
  double* q = &quantiles_[index(begin, end, batch) * K];
  if (std::isnan(q[0])) ++distributions_;
  std::copy(values_s.begin(), values_s.end(), q);
  if (std::isnan(q[0])) --distributions_;  // NaN given: the entry has no distribution
}

const double* LutTable::quantiles(int begin, int end, int batch) const {
  if (quantiles_.empty() || begin < 0 || end > num_stages_ || begin >= end || batch < 1 || batch > max_batch_) return nullptr;
  const double* q = &quantiles_[index(begin, end, batch) * quantile_levels_.size()];
  return std::isnan(q[0]) ? nullptr : q;
}

void LutTable::check_range(int begin, int end, int batch) const {
  if (begin < 0 || end > num_stages_ || begin > end)
    throw LutMissingError("LUT " + key_.to_string() + ": stage range [" + std::to_string(begin) + "," + std::to_string(end) + ") is outside 0.." +
                          std::to_string(num_stages_));
  if (batch < 1 || batch > max_batch_)
    throw LutMissingError("LUT " + key_.to_string() + ": no entries for batch size " + std::to_string(batch) + " (table covers 1.." +
                          std::to_string(max_batch_) + ")");
}

size_t LutTable::index(int begin, int end, int batch) const {
  return (static_cast<size_t>(begin) * (num_stages_ + 1) + end) * max_batch_ + (batch - 1);
}

void LutTable::set_latency(int begin, int end, int batch, const LatencyStats& s) {
  check_range(begin, end, batch);
  latency_[index(begin, end, batch)] = s;
}

bool LutTable::has_latency(int begin, int end, int batch) const {
  if (begin < 0 || end > num_stages_ || begin > end || batch < 1 || batch > max_batch_) return false;
  return begin == end || latency_[index(begin, end, batch)].has_value();
}

const LatencyStats& LutTable::latency(int begin, int end, int batch) const {
  static const LatencyStats kZero{};
  check_range(begin, end, batch);
  if (begin == end) return kZero;
  const auto& e = latency_[index(begin, end, batch)];
  if (!e)
    throw LutMissingError("LUT " + key_.to_string() + ": no latency entry for stages [" + std::to_string(begin) + "," + std::to_string(end) +
                          ") at batch size " + std::to_string(batch));
  return *e;
}

double LutTable::mean_seconds(int begin, int end, int batch) const { return latency(begin, end, batch).mean_s; }

void LutTable::set_peak_memory(int begin, int end, int batch, double bytes) {
  check_range(begin, end, batch);
  peak_memory_[index(begin, end, batch)] = bytes;
}

std::optional<double> LutTable::peak_memory(int begin, int end, int batch) const {
  if (begin < 0 || end > num_stages_ || begin > end || batch < 1 || batch > max_batch_) return std::nullopt;
  return peak_memory_[index(begin, end, batch)];
}

bool LutTable::has_peak_memory_beyond_batch_one() const {
  for (int i = 0; i < num_stages_; ++i)
    for (int j = i + 1; j <= num_stages_; ++j)
      for (int b = 2; b <= max_batch_; ++b)
        if (peak_memory_[index(i, j, b)]) return true;
  return false;
}

void LutTable::set_stage_output_sparsity(int stage, double fraction) {
  if (stage < 0 || stage >= num_stages_)
    throw std::invalid_argument("LUT " + key_.to_string() + ": no stage " + std::to_string(stage) + " (0.." + std::to_string(num_stages_ - 1) + ")");
  if (!(fraction >= 0 && fraction <= 1))
    throw std::invalid_argument("LUT " + key_.to_string() + ": stage output sparsity " + format_double(fraction) +
                                " (allowed: a fraction in [0, 1])");
  stage_sparsity_[static_cast<size_t>(stage)] = fraction;
}

std::optional<double> LutTable::stage_output_sparsity(int stage) const {
  if (stage < 0 || stage >= num_stages_ || std::isnan(stage_sparsity_[static_cast<size_t>(stage)])) return std::nullopt;
  return stage_sparsity_[static_cast<size_t>(stage)];
}

bool LutTable::has_stage_output_sparsity() const {
  for (double v : stage_sparsity_)
    if (!std::isnan(v)) return true;
  return false;
}

void LutTable::set_estimate(int begin, int end, int batch, Estimate e) {
  check_range(begin, end, batch);
  if (begin >= end || !latency_[index(begin, end, batch)])
    throw std::invalid_argument("LUT " + key_.to_string() + ": an estimate mark for an entry without a latency");
  if (e.method.empty()) throw std::invalid_argument("LUT " + key_.to_string() + ": an estimate needs its method");
  if (!std::isfinite(e.relative_error) || e.relative_error < 0)
    throw std::invalid_argument("LUT " + key_.to_string() + ": estimate relative error " + format_double(e.relative_error) +
                                " (allowed: a finite number >= 0)");
  estimates_[index(begin, end, batch)] = std::move(e);
}

void LutTable::clear_estimate(int begin, int end, int batch) {
  if (has_latency(begin, end, batch) && begin < end) estimates_.erase(index(begin, end, batch));
}

const LutTable::Estimate* LutTable::estimate(int begin, int end, int batch) const {
  if (estimates_.empty() || begin < 0 || end > num_stages_ || begin >= end || batch < 1 || batch > max_batch_) return nullptr;
  auto it = estimates_.find(index(begin, end, batch));
  return it == estimates_.end() ? nullptr : &it->second;
}

std::vector<std::tuple<int, int, int>> LutTable::estimated_cells() const {
  std::vector<std::tuple<int, int, int>> out;
  const size_t N1 = static_cast<size_t>(num_stages_ + 1), B = static_cast<size_t>(max_batch_);
  for (const auto& kv : estimates_) {
    const size_t i = kv.first / (N1 * B), j = (kv.first / B) % N1, b = kv.first % B + 1;
    out.emplace_back(static_cast<int>(i), static_cast<int>(j), static_cast<int>(b));
  }
  return out;
}

LutTable LutTable::with_max_batch(int max_batch) const {
  if (max_batch < max_batch_) throw std::invalid_argument("with_max_batch: cannot drop batch sizes");
  LutTable t(key_, num_stages_, max_batch);
  if (!quantile_levels_.empty()) t.set_quantile_levels(quantile_levels_);
  for (int i = 0; i < num_stages_; ++i)
    for (int j = i + 1; j <= num_stages_; ++j) {
      for (int b = 1; b <= max_batch_; ++b) {
        if (auto m = peak_memory(i, j, b)) t.set_peak_memory(i, j, b, *m);
        if (!has_latency(i, j, b)) continue;
        t.set_latency(i, j, b, latency(i, j, b));
        if (const double* q = quantiles(i, j, b)) t.set_quantiles(i, j, b, std::vector<double>(q, q + quantile_levels_.size()));
        if (const Estimate* e = estimate(i, j, b)) t.set_estimate(i, j, b, *e);
      }
    }
  t.bytes_per_split() = bytes_per_split_;
  t.stage_sparsity_ = stage_sparsity_;
  for (int k = 0; k <= num_stages_; ++k)
    if (const double* q = wire_bytes_quantiles(k))
      t.set_wire(k, std::vector<double>(q, q + quantile_levels_.size()), wire_compress_s_[k], wire_decompress_s_[k]);
  t.provenance() = provenance_;
  return t;
}

std::vector<std::tuple<int, int, int>> LutTable::latency_gaps() const {
  std::vector<std::tuple<int, int, int>> gaps;
  for (int i = 0; i < num_stages_; ++i)
    for (int j = i + 1; j <= num_stages_; ++j)
      for (int b = 1; b <= max_batch_; ++b)
        if (!latency_[index(i, j, b)]) gaps.emplace_back(i, j, b);
  return gaps;
}

void LutSet::add(LutTable table, const std::string& origin) {
  LutKey key = table.key();
  if (tables_.count(key)) throw std::invalid_argument("LUT " + key.to_string() + " is provided twice: by " + origins_[key] + " and by " + origin);
  if (unread_.count(key)) throw std::invalid_argument("LUT " + key.to_string() + " is provided twice: by " + unread_[key] + " and by " + origin);
  origins_[key] = origin;
  tables_.emplace(key, std::move(table));
}

void LutSet::add_unread(const LutKey& key, const std::string& origin) {
  const auto read = origins_.find(key);
  if (read != origins_.end()) throw std::invalid_argument("LUT " + key.to_string() + " is provided twice: by " + read->second + " and by " + origin);
  const auto [it, added] = unread_.emplace(key, origin);
  if (!added) throw std::invalid_argument("LUT " + key.to_string() + " is provided twice: by " + it->second + " and by " + origin);
}

std::map<LutKey, LutTable>::const_iterator LutSet::find(const LutKey& key) const {
  auto it = tables_.find(key);
  if (it != tables_.end()) return it;
  LutKey plain = key;
  plain.processor.clear();
  if (!key.processor.empty()) return tables_.find(plain);  // a table naming no processor: the type's only one
  // No processor named: the one table of this type, model and dataset, whatever processor it names.
  std::vector<std::map<LutKey, LutTable>::const_iterator> same;
  for (auto t = tables_.lower_bound(plain);
       t != tables_.end() && t->first.device_type == key.device_type && t->first.model == key.model && t->first.dataset == key.dataset; ++t)
    same.push_back(t);
  if (same.size() == 1) return same.front();
  if (same.empty()) return tables_.end();
  std::vector<std::string> names;
  for (const auto& t : same) names.push_back(t->first.processor);
  throw LutMissingError("LUTs for several processors of device type '" + key.device_type + "' (" + join(names) + "), model '" + key.model +
                        "', dataset '" + key.dataset + "': say which the device runs on (devices[].processor)");
}

bool LutSet::contains(const LutKey& key) const { return find(key) != tables_.end(); }

const LutTable& LutSet::table(const LutKey& key) const {
  auto it = find(key);
  if (it == tables_.end()) {
    std::set<LutKey> named;  // read or not: the message is the same whichever types the run read
    for (const auto& kv : tables_) named.insert(kv.first);
    for (const auto& kv : unread_) named.insert(kv.first);
    std::vector<std::string> have;
    for (const auto& k : named)
      if (k.model == key.model && k.dataset == key.dataset) have.push_back(k.device_type + (k.processor.empty() ? "" : ":" + k.processor));
    throw LutMissingError(
        "no LUT for device type '" + key.device_type + "'" + (key.processor.empty() ? "" : ", processor '" + key.processor + "'") + ", model '" +
        key.model + "', dataset '" + key.dataset + "'" +
        (have.empty() ? std::string(" (no LUT has this model and dataset)") : " (device types with this model and dataset: " + join(have) + ")"));
  }
  return it->second;
}

const std::string& LutSet::origin(const LutKey& key) const {
  const auto it = find(key);
  if (it == tables_.end()) throw LutMissingError("no LUT " + key.to_string());
  return origins_.at(it->first);
}

std::vector<LutKey> LutSet::keys() const {
  std::vector<LutKey> k;
  for (const auto& kv : tables_) k.push_back(kv.first);
  return k;
}

}  // namespace coinfer
