#include "core/lut.hpp"

#include <cmath>
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
      peak_memory_(static_cast<size_t>(num_stages + 1) * (num_stages + 1)) {
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
        if (!in(e->p50_s, 0, limits::kMaxLutLatencyS)) bad("latency_p50_s" + at, e->p50_s, "a finite number in [0, " + format_double(limits::kMaxLutLatencyS) + "] s");
        if (!in(e->p95_s, 0, limits::kMaxLutLatencyS)) bad("latency_p95_s" + at, e->p95_s, "a finite number in [0, " + format_double(limits::kMaxLutLatencyS) + "] s");
        if (!in(e->std_s, 0, limits::kMaxLutLatencyS)) bad("latency_std_s" + at, e->std_s, "a finite number >= 0");
        if (e->count < 0) bad("latency_count" + at, static_cast<double>(e->count), ">= 0");
      }
      const auto& m = peak_memory_[static_cast<size_t>(i) * (num_stages_ + 1) + j];
      if (m && !in(*m, 0, limits::kMaxPeakMemoryBytes)) bad("peak_memory_bytes at " + range, *m, "a finite number of bytes in [0, 1e15]");
    }
  if (bytes_per_split_.size() != static_cast<size_t>(num_stages_ + 1))
    throw std::invalid_argument("bytes_per_split has " + std::to_string(bytes_per_split_.size()) + " values, not num_stages + 1 = " + std::to_string(num_stages_ + 1));
  for (size_t k = 0; k < bytes_per_split_.size(); ++k)
    if (!in(bytes_per_split_[k], 0, limits::kMaxSplitBytes))
      bad("bytes_per_split at split " + std::to_string(k), bytes_per_split_[k], "a finite number of bytes in [0, 1e12]");
}

void LutTable::check_range(int begin, int end, int batch) const {
  if (begin < 0 || end > num_stages_ || begin > end)
    throw LutMissingError("LUT " + key_.to_string() + ": stage range [" + std::to_string(begin) + "," +
                          std::to_string(end) + ") is outside 0.." + std::to_string(num_stages_));
  if (batch < 1 || batch > max_batch_)
    throw LutMissingError("LUT " + key_.to_string() + ": no entries for batch size " + std::to_string(batch) +
                          " (table covers 1.." + std::to_string(max_batch_) + ")");
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
    throw LutMissingError("LUT " + key_.to_string() + ": no latency entry for stages [" + std::to_string(begin) +
                          "," + std::to_string(end) + ") at batch size " + std::to_string(batch));
  return *e;
}

double LutTable::mean_seconds(int begin, int end, int batch) const { return latency(begin, end, batch).mean_s; }

void LutTable::set_peak_memory(int begin, int end, double bytes) {
  check_range(begin, end, 1);
  peak_memory_[static_cast<size_t>(begin) * (num_stages_ + 1) + end] = bytes;
}

std::optional<double> LutTable::peak_memory(int begin, int end) const {
  if (begin < 0 || end > num_stages_ || begin > end) return std::nullopt;
  return peak_memory_[static_cast<size_t>(begin) * (num_stages_ + 1) + end];
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
  if (tables_.count(key))
    throw std::invalid_argument("LUT " + key.to_string() + " is provided twice: by " + origins_[key] + " and by " +
                                origin);
  origins_[key] = origin;
  tables_.emplace(key, std::move(table));
}

const LutTable& LutSet::table(const LutKey& key) const {
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    std::vector<std::string> have;
    for (const auto& kv : tables_)
      if (kv.first.model == key.model && kv.first.dataset == key.dataset) have.push_back(kv.first.device_type);
    throw LutMissingError("no LUT for device type '" + key.device_type + "', model '" + key.model + "', dataset '" +
                          key.dataset + "'" +
                          (have.empty() ? std::string(" (no LUT has this model and dataset)")
                                        : " (device types with this model and dataset: " + join(have) + ")"));
  }
  return it->second;
}

const std::string& LutSet::origin(const LutKey& key) const { return origins_.at(key); }

std::vector<LutKey> LutSet::keys() const {
  std::vector<LutKey> k;
  for (const auto& kv : tables_) k.push_back(kv.first);
  return k;
}

}  // namespace coinfer
