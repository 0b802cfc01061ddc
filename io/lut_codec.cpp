#include "io/lut_codec.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "core/byte_buffer.hpp"
#include "core/limits.hpp"

namespace coinfer {

namespace {

constexpr char kMagic[4] = {'C', 'L', 'U', 'T'};
constexpr char kKeysMagic[4] = {'C', 'L', 'U', 'K'};
constexpr std::uint32_t kVersion = 5;  // 4: the key's processor; 5: peak memory per batch, stage sparsity
constexpr std::uint32_t kMaxTables = 100000;
constexpr std::uint32_t kMaxStringBytes = 1 << 20;

class Writer {
 public:
  template <typename T>
  void put(T v) {
    put_bytes(out_, v);
  }
  void str(const std::string& s) {
    put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  void raw(const char* p, size_t n) { out_.append(p, n); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader : public ByteReader {
 public:
  explicit Reader(const std::string& in) : ByteReader(in, "LUT bytes") {}
  std::string str() {
    const auto n = get<std::uint32_t>();
    if (n > kMaxStringBytes) throw std::invalid_argument("LUT bytes: string of " + std::to_string(n) + " bytes");
    return std::string(take(n), n);
  }
  void expect(const char* p, size_t n) {
    if (std::memcmp(take(n), p, n) != 0) throw std::invalid_argument("LUT bytes: bad magic");
  }
};

// The four strings of a key, in the order both byte forms give them.
void write_key(Writer& w, const LutKey& k) {
  w.str(k.device_type);
  w.str(k.model);
  w.str(k.dataset);
  w.str(k.processor);
}

LutKey read_key(Reader& r) {
  LutKey key;
  key.device_type = r.str();
  key.model = r.str();
  key.dataset = r.str();
  key.processor = r.str();
  return key;
}

}  // namespace

std::string encode_lut_tables(const std::vector<LutTable>& tables) {
  Writer w;
  w.raw(kMagic, 4);
  w.put<std::uint32_t>(kVersion);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(tables.size()));
  for (const auto& t : tables) {
    write_key(w, t.key());
    const int n = t.num_stages(), B = t.max_batch();
    w.put<std::int32_t>(n);
    w.put<std::int32_t>(B);
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j)
        for (int b = 1; b <= B; ++b) {
          const bool has = i < j && t.has_latency(i, j, b);
          w.put<std::uint8_t>(has ? 1 : 0);
          if (!has) continue;
          const LatencyStats& s = t.latency(i, j, b);
          w.put<double>(s.mean_s);
          w.put<double>(s.p50_s);
          w.put<double>(s.p95_s);
          w.put<double>(s.std_s);
          w.put<std::int64_t>(s.count);
        }
    // Distributions: u32 level count (0 = none), the levels, then per present latency cell in index
    // order a presence byte and, if present, one f64 per level.
    const auto& levels = t.quantile_levels();
    w.put<std::uint32_t>(static_cast<std::uint32_t>(levels.size()));
    for (double l : levels) w.put<double>(l);
    if (!levels.empty())
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j <= n; ++j)
          for (int b = 1; b <= B; ++b) {
            if (!t.has_latency(i, j, b)) continue;
            const double* q = t.quantiles(i, j, b);
            w.put<std::uint8_t>(q ? 1 : 0);
            if (q)
              for (size_t k = 0; k < levels.size(); ++k) w.put<double>(q[k]);
          }
    // Wire bytes (needs the levels): a presence byte per split and, if present, K quantiles, the
    // compress and the decompress seconds.
    if (!levels.empty())
      for (int k = 0; k <= n; ++k) {
        const double* q = t.wire_bytes_quantiles(k);
        w.put<std::uint8_t>(q ? 1 : 0);
        if (!q) continue;
        for (size_t i = 0; i < levels.size(); ++i) w.put<double>(q[i]);
        w.put<double>(t.wire_compress_seconds(k));
        w.put<double>(t.wire_decompress_seconds(k));
      }
    for (double v : t.bytes_per_split()) w.put<double>(v);
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j)
        for (int b = 1; b <= B; ++b) {
          const auto m = i < j ? t.peak_memory(i, j, b) : std::nullopt;
          w.put<std::uint8_t>(m ? 1 : 0);
          if (m) w.put<double>(*m);
        }
    for (int k = 0; k < n; ++k) {
      const auto v = t.stage_output_sparsity(k);
      w.put<std::uint8_t>(v ? 1 : 0);
      if (v) w.put<double>(*v);
    }
    w.str(t.provenance().kind);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(t.provenance().attributes.size()));
    for (const auto& kv : t.provenance().attributes) {
      w.str(kv.first);
      w.str(kv.second);
    }
    // Estimated entries: u32 count, then per entry in index order i32 begin, end, batch, f64 error, method.
    const auto cells = t.estimated_cells();
    w.put<std::uint32_t>(static_cast<std::uint32_t>(cells.size()));
    for (const auto& [i, j, b] : cells) {
      const LutTable::Estimate* e = t.estimate(i, j, b);
      w.put<std::int32_t>(i);
      w.put<std::int32_t>(j);
      w.put<std::int32_t>(b);
      w.put<double>(e->relative_error);
      w.str(e->method);
    }
  }
  return w.take();
}

std::vector<LutTable> decode_lut_tables(const std::string& bytes) {
  Reader r(bytes);
  r.expect(kMagic, 4);
  if (r.get<std::uint32_t>() != kVersion) throw std::invalid_argument("LUT bytes: unknown version");
  const auto count = r.get<std::uint32_t>();
  if (count > kMaxTables) throw std::invalid_argument("LUT bytes: too many tables");
  std::vector<LutTable> out;
  for (std::uint32_t k = 0; k < count; ++k) {
    const LutKey key = read_key(r);
    const int n = r.get<std::int32_t>(), B = r.get<std::int32_t>();
    if (n < 1 || n > 1000 || B < 1 || B > limits::kMaxBatch || static_cast<long long>(n + 1) * (n + 1) * B > limits::kMaxLutCells)
      throw std::invalid_argument("LUT bytes: num_stages/max_batch out of range");
    // Every cell takes at least its presence byte: refuse before allocating for bytes that are not there.
    const size_t cells = static_cast<size_t>(n + 1) * (n + 1);
    if (r.remaining() < cells * B + cells + 8 * static_cast<size_t>(n + 1)) throw std::invalid_argument("LUT bytes: truncated");
    LutTable t(key, n, B);
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j)
        for (int b = 1; b <= B; ++b) {
          const auto has = r.get<std::uint8_t>();
          if (has > 1 || (has && i >= j)) throw std::invalid_argument("LUT bytes: bad latency presence flag");
          if (!has) continue;
          LatencyStats s;
          s.mean_s = r.get<double>();
          s.p50_s = r.get<double>();
          s.p95_s = r.get<double>();
          s.std_s = r.get<double>();
          s.count = r.get<std::int64_t>();
          t.set_latency(i, j, b, s);
        }
    const auto levels_count = r.get<std::uint32_t>();
    if (levels_count > static_cast<std::uint32_t>(limits::kMaxLutQuantileLevels) || r.remaining() < 8ULL * levels_count)
      throw std::invalid_argument("LUT bytes: bad quantile level count");
    if (levels_count > 0) {
      std::vector<double> levels(levels_count);
      for (auto& l : levels) l = r.get<double>();
      t.set_quantile_levels(levels);
      std::vector<double> q(levels_count);
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j <= n; ++j)
          for (int b = 1; b <= B; ++b) {
            if (!t.has_latency(i, j, b)) continue;
            const auto has = r.get<std::uint8_t>();
            if (has > 1) throw std::invalid_argument("LUT bytes: bad quantile presence flag");
            if (!has) continue;
            if (r.remaining() < 8ULL * levels_count) throw std::invalid_argument("LUT bytes: truncated");
            for (auto& v : q) v = r.get<double>();
            if (std::isnan(q[0])) throw std::invalid_argument("LUT bytes: NaN quantile");
            t.set_quantiles(i, j, b, q);
          }
      for (int k = 0; k <= n; ++k) {
        const auto has = r.get<std::uint8_t>();
        if (has > 1) throw std::invalid_argument("LUT bytes: bad wire presence flag");
        if (!has) continue;
        if (r.remaining() < 8ULL * (levels_count + 2)) throw std::invalid_argument("LUT bytes: truncated");
        for (auto& v : q) v = r.get<double>();
        if (std::isnan(q[0])) throw std::invalid_argument("LUT bytes: NaN wire bytes");
        const double c = r.get<double>(), d = r.get<double>();
        t.set_wire(k, q, c, d);
      }
    }
    for (auto& v : t.bytes_per_split()) v = r.get<double>();
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j)
        for (int b = 1; b <= B; ++b) {
          const auto has = r.get<std::uint8_t>();
          if (has > 1 || (has && i >= j)) throw std::invalid_argument("LUT bytes: bad memory presence flag");
          if (has) t.set_peak_memory(i, j, b, r.get<double>());
        }
    for (int k = 0; k < n; ++k) {
      const auto has = r.get<std::uint8_t>();
      if (has > 1) throw std::invalid_argument("LUT bytes: bad sparsity presence flag");
      if (has) t.set_stage_output_sparsity(k, r.get<double>());
    }
    t.provenance().kind = r.str();
    const auto attrs = r.get<std::uint32_t>();
    if (attrs > 10000) throw std::invalid_argument("LUT bytes: too many provenance attributes");
    for (std::uint32_t a = 0; a < attrs; ++a) {
      std::string name = r.str();
      // Canonical form: names strictly increasing (as the encoder writes a std::map).
      if (!t.provenance().attributes.empty() && !(t.provenance().attributes.rbegin()->first < name))
        throw std::invalid_argument("LUT bytes: provenance attributes out of order or given twice");
      t.provenance().attributes.emplace(name, r.str());
    }
    const auto estimates = r.get<std::uint32_t>();
    if (estimates > static_cast<std::uint64_t>(n + 1) * (n + 1) * B) throw std::invalid_argument("LUT bytes: more estimates than entries");
    for (std::uint32_t e = 0; e < estimates; ++e) {
      const int i = r.get<std::int32_t>(), j = r.get<std::int32_t>(), b = r.get<std::int32_t>();
      const double err = r.get<double>();
      std::string method = r.str();
      if (!t.has_latency(i, j, b) || i >= j || t.estimate(i, j, b))
        throw std::invalid_argument("LUT bytes: an estimate for a missing entry or given twice");
      t.set_estimate(i, j, b, {std::move(method), err});
    }
    t.check_values();
    out.push_back(std::move(t));
  }
  if (!r.done()) throw std::invalid_argument("LUT bytes: trailing data");
  return out;
}

std::string encode_lut_keys(const std::vector<LutKey>& keys) {
  Writer w;
  w.raw(kKeysMagic, 4);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(keys.size()));
  for (const auto& k : keys) {
    write_key(w, k);
  }
  return w.take();
}

bool is_encoded_lut_keys(const std::string& bytes) { return bytes.size() >= 4 && std::memcmp(bytes.data(), kKeysMagic, 4) == 0; }

std::vector<LutKey> decode_lut_keys(const std::string& bytes) {
  Reader r(bytes);
  r.expect(kKeysMagic, 4);
  const auto count = r.get<std::uint32_t>();
  // Each key takes at least its four length fields: refuse a count the bytes cannot hold before reserving.
  if (count > kMaxTables || r.remaining() < 16ULL * count) throw std::invalid_argument("LUT bytes: bad key count");
  std::vector<LutKey> out;
  out.reserve(count);
  for (std::uint32_t k = 0; k < count; ++k) {
    out.push_back(read_key(r));
  }
  if (!r.done()) throw std::invalid_argument("LUT bytes: trailing data");
  return out;
}

}  // namespace coinfer
