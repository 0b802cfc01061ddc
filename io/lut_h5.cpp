#include "io/lut_h5.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/byte_buffer.hpp"
#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/h5_file.hpp"
#include "io/input_file.hpp"
#include "plumbing/isolated_reader.hpp"
#include "io/lut_codec.hpp"

namespace coinfer {

int lut_schema_version_for(const std::vector<LutTable>& tables) {
  // Version 4 only where the tables name their processor, version 3 only where a table has estimated
  // entries: an older reader then refuses the file instead of taking a CPU's table for the board's
  // only processor, or estimates for measurements.
  if (!tables.empty() && !tables.front().key().processor.empty()) return 4;
  for (const auto& t : tables)
    if (t.estimated_entries() > 0) return 3;
  return 2;
}

void write_lut_file(const std::string& path, const std::vector<LutTable>& tables) {
  if (tables.empty()) throw InputError(SourceLocation{path, 0, 0}, "", "no LUT tables to write");
  const std::string device_type = tables.front().key().device_type;
  const std::string processor = tables.front().key().processor;
  for (const auto& t : tables) {
    if (t.key().device_type != device_type)
      throw InputError(SourceLocation{path, 0, 0}, "",
                       "one LUT file holds one device type (" + device_type + " and " + t.key().device_type + " given)");
    if (t.key().processor != processor)
      throw InputError(SourceLocation{path, 0, 0}, "",
                       "one LUT file holds one processor of its device type ('" + processor + "' and '" + t.key().processor + "' given)");
  }
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_attr("/", "format", std::string("coinfer-lut"));
    f.write_attr("/", "schema_version", static_cast<std::int64_t>(lut_schema_version_for(tables)));
    f.write_attr("/", "device_type", device_type);
    if (!processor.empty()) f.write_attr("/", "processor", processor);
    for (const auto& t : tables) {
      const std::string g = "/" + t.key().model + "/" + t.key().dataset;
      const int n = t.num_stages(), B = t.max_batch();
      const hsize_t N1 = static_cast<hsize_t>(n + 1);
      std::vector<double> mean(N1 * N1 * B, NAN), p50 = mean, p95 = mean, sd = mean;
      std::vector<std::int64_t> count(N1 * N1 * B, -1);
      std::vector<double> mem(N1 * N1, NAN);
      for (int i = 0; i <= n; ++i)
        for (int j = i + 1; j <= n; ++j) {
          if (auto m = t.peak_memory(i, j)) mem[i * N1 + j] = *m;
          for (int b = 1; b <= B; ++b) {
            if (!t.has_latency(i, j, b)) continue;
            const LatencyStats& s = t.latency(i, j, b);
            size_t idx = (i * N1 + j) * B + (b - 1);
            mean[idx] = s.mean_s;
            p50[idx] = s.p50_s;
            p95[idx] = s.p95_s;
            sd[idx] = s.std_s;
            count[idx] = s.count;
          }
        }
      std::vector<hsize_t> d3 = {N1, N1, static_cast<hsize_t>(B)};
      f.write(g + "/latency_mean_s", mean, d3, "s");
      f.write(g + "/latency_p50_s", p50, d3, "s");
      f.write(g + "/latency_p95_s", p95, d3, "s");
      f.write(g + "/latency_std_s", sd, d3, "s");
      f.write(g + "/latency_count", count, d3, "runs");
      if (t.has_distributions()) {
        const auto& levels = t.quantile_levels();
        const hsize_t K = levels.size();
        std::vector<double> q(N1 * N1 * B * K, NAN);
        for (int i = 0; i < n; ++i)
          for (int j = i + 1; j <= n; ++j)
            for (int b = 1; b <= B; ++b)
              if (const double* v = t.quantiles(i, j, b)) std::copy(v, v + K, q.begin() + ((i * N1 + j) * B + (b - 1)) * K);
        f.write(g + "/latency_quantile_levels", levels, {K}, "cumulative probability");
        f.write(g + "/latency_quantiles_s", q, {N1, N1, static_cast<hsize_t>(B), K}, "s");
      }
      if (t.has_wire_bytes()) {
        const hsize_t K = t.quantile_levels().size();
        std::vector<double> wq(N1 * K, NAN), wc(N1, NAN), wd(N1, NAN);
        for (int k = 0; k <= n; ++k)
          if (const double* v = t.wire_bytes_quantiles(k)) {
            std::copy(v, v + K, wq.begin() + k * K);
            wc[k] = t.wire_compress_seconds(k);
            wd[k] = t.wire_decompress_seconds(k);
          }
        if (!t.has_distributions()) f.write(g + "/latency_quantile_levels", t.quantile_levels(), {K}, "cumulative probability");
        f.write(g + "/wire_bytes_quantiles", wq, {N1, K}, "bytes per request (batch 1) on the wire");
        f.write(g + "/wire_compress_s", wc, {N1}, "s");
        f.write(g + "/wire_decompress_s", wd, {N1}, "s");
      }
      if (t.estimated_entries() > 0) {
        std::vector<double> err(N1 * N1 * B, NAN);
        std::vector<std::int32_t> method(N1 * N1 * B, -1);
        std::vector<std::string> methods;
        for (const auto& [i, j, b] : t.estimated_cells()) {
          const LutTable::Estimate* e = t.estimate(i, j, b);
          const size_t idx = (i * N1 + j) * B + (b - 1);
          err[idx] = e->relative_error;
          auto it = std::find(methods.begin(), methods.end(), e->method);
          method[idx] = static_cast<std::int32_t>(it - methods.begin());
          if (it == methods.end()) methods.push_back(e->method);
        }
        f.write(g + "/latency_estimate_error", err, d3, "relative error of the estimate on held-out measured samples (NaN: measured)");
        f.write(g + "/latency_estimate_method", method, d3, "index into latency_estimate_methods (-1: measured)");
        f.write(g + "/latency_estimate_methods", methods);
      }
      f.write(g + "/bytes_per_split", t.bytes_per_split(), {N1}, "bytes per sample");
      f.write(g + "/peak_memory_bytes", mem, {N1, N1}, "bytes");
      // Optional additions (readers that do not know them see batch 1 as before).
      if (t.has_peak_memory_beyond_batch_one()) {
        std::vector<double> memb(N1 * N1 * B, NAN);
        for (int i = 0; i <= n; ++i)
          for (int j = i + 1; j <= n; ++j)
            for (int b = 1; b <= B; ++b)
              if (auto m = t.peak_memory(i, j, b)) memb[(i * N1 + j) * B + (b - 1)] = *m;
        f.write(g + "/peak_memory_bytes_by_batch", memb, d3, "bytes");
      }
      if (t.has_stage_output_sparsity()) {
        std::vector<double> sp(static_cast<size_t>(n), NAN);
        for (int k = 0; k < n; ++k)
          if (auto v = t.stage_output_sparsity(k)) sp[static_cast<size_t>(k)] = *v;
        f.write(g + "/stage_output_sparsity", sp, {static_cast<hsize_t>(n)}, "fraction of exact zeros in each stage's output (NaN: not measured)");
      }
      f.write_attr(g, "model", t.key().model);
      f.write_attr(g, "dataset", t.key().dataset);
      f.write_attr(g, "num_stages", static_cast<std::int64_t>(n));
      f.write_attr(g, "max_batch", static_cast<std::int64_t>(B));
      f.write_attr(g, "provenance", t.provenance().kind);
      for (const auto& kv : t.provenance().attributes) f.write_attr(g, "provenance:" + kv.first, kv.second);
    }
  }
  out.commit();
}

std::vector<LutTable> read_lut_file_in_process(const std::string& path) { return read_lut_tables(h5::File::open_read(path)); }

namespace {

// One table's group being read: its file, path, shape, and the error that names both.
struct GroupReader {
  const h5::Reader& f;
  std::string g;  // "/model/dataset"
  int n = 0, B = 0;
  hsize_t N1 = 0;
  std::int64_t version = 0;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const { throw InputError(SourceLocation{f.path(), 0, 0}, key, what); }
  void read_memory_by_batch(LutTable& t) const;  // optional: the peak memory per batch size
  void read_sparsity(LutTable& t) const;         // optional: the share of zeros in each stage's output
  void read_distributions(LutTable& t) const;    // optional (schema 2): latency quantiles, wire bytes
  void read_estimates(LutTable& t) const;        // optional (schema 3): estimated entries, method and error
};

// Optional: the peak memory per batch size.
void GroupReader::read_memory_by_batch(LutTable& t) const {
  std::vector<hsize_t> dims;
  if (!f.exists(g + "/peak_memory_bytes_by_batch")) return;
  auto memb = f.read_double(g + "/peak_memory_bytes_by_batch", &dims);
  if (dims != std::vector<hsize_t>{N1, N1, static_cast<hsize_t>(B)})
    fail(g + "/peak_memory_bytes_by_batch", "shape differs from (num_stages+1, num_stages+1, max_batch)");
  for (int i = 0; i <= n; ++i)
    for (int j = i + 1; j <= n; ++j)
      for (int b = 1; b <= B; ++b)
        if (const double m = memb[(i * N1 + j) * B + (b - 1)]; !std::isnan(m)) t.set_peak_memory(i, j, b, m);
}

// Optional: the share of zeros in each stage's output.
void GroupReader::read_sparsity(LutTable& t) const {
  std::vector<hsize_t> dims;
  if (!f.exists(g + "/stage_output_sparsity")) return;
  auto sp = f.read_double(g + "/stage_output_sparsity", &dims);
  if (dims != std::vector<hsize_t>{static_cast<hsize_t>(n)}) fail(g + "/stage_output_sparsity", "shape must be (num_stages)");
  for (int k = 0; k < n; ++k) {
    if (std::isnan(sp[static_cast<size_t>(k)])) continue;
    try {
      t.set_stage_output_sparsity(k, sp[static_cast<size_t>(k)]);
    } catch (const std::invalid_argument& e) {
      fail(g + "/stage_output_sparsity", e.what());
    }
  }
}

// Optional (schema 2): latency distributions as quantiles, and wire bytes with their compression times.
void GroupReader::read_distributions(LutTable& t) const {
  std::vector<hsize_t> dims;
  const bool has_levels = f.exists(g + "/latency_quantile_levels"), has_q = f.exists(g + "/latency_quantiles_s");
  const bool has_wire = f.exists(g + "/wire_bytes_quantiles");
  if (version < 2 && (has_levels || has_q || has_wire))
    fail(g + "/latency_quantiles_s", "distributions in a schema 1 file (they came with schema 2)");
  if (has_q && !has_levels) fail(g + "/latency_quantile_levels", "missing: latency_quantiles_s needs latency_quantile_levels");
  if (has_wire && !has_levels) fail(g + "/latency_quantile_levels", "missing: wire_bytes_quantiles needs latency_quantile_levels");
  if (has_levels && !has_q && !has_wire)
    fail(g + "/latency_quantiles_s", "missing: latency_quantile_levels without latency_quantiles_s or wire_bytes_quantiles");
  if (has_levels) {
    auto levels = f.read_double(g + "/latency_quantile_levels", &dims);
    if (dims.size() != 1) fail(g + "/latency_quantile_levels", "must be one-dimensional");
    try {
      t.set_quantile_levels(levels);
    } catch (const std::invalid_argument& e) {
      fail(g + "/latency_quantile_levels", e.what());
    }
  }
  if (has_q) {
    const hsize_t K = t.quantile_levels().size();
    auto q = f.read_double(g + "/latency_quantiles_s", &dims);
    if (dims != std::vector<hsize_t>{N1, N1, static_cast<hsize_t>(B), K})
      fail(g + "/latency_quantiles_s", "shape differs from (num_stages+1, num_stages+1, max_batch, levels)");
    std::vector<double> v(K);
    for (int i = 0; i <= n; ++i)
      for (int j = i + 1; j <= n; ++j)
        for (int b = 1; b <= B; ++b) {
          const size_t at = ((i * N1 + j) * B + (b - 1)) * K;
          bool any = false, all = true;
          for (hsize_t k = 0; k < K; ++k) {
            v[k] = q[at + k];
            any = any || !std::isnan(v[k]);
            all = all && !std::isnan(v[k]);
          }
          if (!any) continue;
          const std::string where = " at [" + std::to_string(i) + "," + std::to_string(j) + ") batch " + std::to_string(b);
          if (!all) fail(g + "/latency_quantiles_s", "some but not all quantiles given" + where);
          if (!t.has_latency(i, j, b)) fail(g + "/latency_quantiles_s", "quantiles for an entry without a mean" + where);
          t.set_quantiles(i, j, b, v);
        }
  }
  if (has_wire) {
    const hsize_t K = t.quantile_levels().size();
    auto wq = f.read_double(g + "/wire_bytes_quantiles", &dims);
    if (dims != std::vector<hsize_t>{N1, K}) fail(g + "/wire_bytes_quantiles", "shape differs from (num_stages+1, levels)");
    auto wc = f.read_double(g + "/wire_compress_s", &dims);
    if (dims != std::vector<hsize_t>{N1}) fail(g + "/wire_compress_s", "shape must be (num_stages+1)");
    auto wd = f.read_double(g + "/wire_decompress_s", &dims);
    if (dims != std::vector<hsize_t>{N1}) fail(g + "/wire_decompress_s", "shape must be (num_stages+1)");
    for (int k = 0; k <= n; ++k) {
      std::vector<double> v(wq.begin() + k * K, wq.begin() + (k + 1) * K);
      bool any = false, all = true;
      for (double x : v) any = any || !std::isnan(x), all = all && !std::isnan(x);
      if (!any) continue;
      if (!all) fail(g + "/wire_bytes_quantiles", "some but not all quantiles given at split " + std::to_string(k));
      t.set_wire(k, v, wc[k], wd[k]);
    }
  }
}

// Optional (schema 3): entries estimated by regressors, each with its method and error.
void GroupReader::read_estimates(LutTable& t) const {
  std::vector<hsize_t> dims;
  const bool has_estimates = f.exists(g + "/latency_estimate_error");
  if (has_estimates && version < 3)
    fail(g + "/latency_estimate_error", "estimated entries in a schema " + std::to_string(version) + " file (they came with schema 3)");
  if (has_estimates) {
    auto err = f.read_double(g + "/latency_estimate_error", &dims);
    if (dims != std::vector<hsize_t>{N1, N1, static_cast<hsize_t>(B)})
      fail(g + "/latency_estimate_error", "shape differs from (num_stages+1, num_stages+1, max_batch)");
    auto method = f.read_int64(g + "/latency_estimate_method", &dims);
    if (dims != std::vector<hsize_t>{N1, N1, static_cast<hsize_t>(B)})
      fail(g + "/latency_estimate_method", "shape differs from (num_stages+1, num_stages+1, max_batch)");
    const std::vector<std::string> methods = f.read_strings(g + "/latency_estimate_methods");
    for (int i = 0; i <= n; ++i)
      for (int j = 0; j <= n; ++j)
        for (int b = 1; b <= B; ++b) {
          const size_t idx = (i * N1 + j) * B + (b - 1);
          const std::string at = " at [" + std::to_string(i) + "," + std::to_string(j) + ") batch " + std::to_string(b);
          if (method[idx] == -1 && std::isnan(err[idx])) continue;
          if (method[idx] < 0 || method[idx] >= static_cast<std::int64_t>(methods.size()))
            fail(g + "/latency_estimate_method",
                 "index " + std::to_string(method[idx]) + at + " is not in latency_estimate_methods (" + std::to_string(methods.size()) + " given)");
          if (i >= j || !t.has_latency(i, j, b)) fail(g + "/latency_estimate_error", "an estimate for an entry without a latency" + at);
          try {
            t.set_estimate(i, j, b, {methods[method[idx]], err[idx]});
          } catch (const std::invalid_argument& e) {
            fail(g + "/latency_estimate_error", e.what() + at);
          }
        }
  }
}

}  // namespace

namespace {

// A LUT file's root attributes, checked: what every table of it shares.
struct LutFileHeader {
  std::int64_t version = 0;
  std::string device_type, processor;
};

LutFileHeader read_lut_header(const h5::Reader& f) {
  auto fail = [&](const std::string& key, const std::string& what) { throw InputError(SourceLocation{f.path(), 0, 0}, key, what); };
  if (!f.has_attr("/", "format") || f.read_attr_string("/", "format") != "coinfer-lut")
    fail("format", "not a coinfer LUT file (root attribute format must be 'coinfer-lut')");
  LutFileHeader h;
  h.version = f.read_attr_int("/", "schema_version");
  if (h.version < kLutOldestReadableSchema || h.version > kLutSchemaVersion)
    fail("schema_version", "schema version " + std::to_string(h.version) + " is not supported (this build reads " +
                               std::to_string(kLutOldestReadableSchema) + ".." + std::to_string(kLutSchemaVersion) + ")");
  h.device_type = f.read_attr_string("/", "device_type");
  // Schema 4 names the processor the tables describe; before, the type's only processor.
  h.processor = h.version >= 4 && f.has_attr("/", "processor") ? f.read_attr_string("/", "processor") : "";
  if (h.version >= 4 && h.processor.empty()) fail("processor", "a schema 4 file names its processor (root attribute processor)");
  if (h.processor.size() > 64) fail("processor", "longer than 64 bytes");
  return h;
}

// The keys of a file's tables, from its root attributes and group names alone (none of its data read).
std::vector<LutKey> read_lut_keys(const h5::Reader& f, const LutFileHeader& h) {
  std::vector<LutKey> keys;
  for (const auto& model : f.children("/"))
    for (const auto& dataset : f.children("/" + model)) keys.push_back({h.device_type, model, dataset, h.processor});
  return keys;
}

}  // namespace

std::vector<LutTable> read_lut_tables(const h5::Reader& f) {
  const std::string& path = f.path();
  auto fail = [&](const std::string& key, const std::string& what) { throw InputError(SourceLocation{path, 0, 0}, key, what); };
  const LutFileHeader header = read_lut_header(f);
  const std::int64_t version = header.version;
  const std::string& device_type = header.device_type;
  const std::string& processor = header.processor;
  std::vector<LutTable> out;
  for (const auto& model : f.children("/")) {
    for (const auto& dataset : f.children("/" + model)) {
      const std::string g = "/" + model + "/" + dataset;
      const int n = static_cast<int>(f.read_attr_int(g, "num_stages"));
      const int B = static_cast<int>(f.read_attr_int(g, "max_batch"));
      if (n < 1 || n > 1000 || B < 1 || B > limits::kMaxBatch) fail(g, "num_stages/max_batch out of range");
      if (static_cast<long long>(n + 1) * (n + 1) * B > limits::kMaxLutCells)
        fail(g, "(num_stages + 1)^2 x max_batch is more than " + std::to_string(limits::kMaxLutCells) + " cells");
      const hsize_t N1 = static_cast<hsize_t>(n + 1);
      std::vector<hsize_t> dims;
      auto mean = f.read_double(g + "/latency_mean_s", &dims);
      if (dims != std::vector<hsize_t>{N1, N1, static_cast<hsize_t>(B)})
        fail(g + "/latency_mean_s", "shape differs from (num_stages+1, num_stages+1, max_batch)");
      auto p50 = f.read_double(g + "/latency_p50_s");
      auto p95 = f.read_double(g + "/latency_p95_s");
      auto sd = f.read_double(g + "/latency_std_s");
      auto count = f.read_int64(g + "/latency_count");
      auto bytes = f.read_double(g + "/bytes_per_split", &dims);
      if (dims != std::vector<hsize_t>{N1}) fail(g + "/bytes_per_split", "shape must be (num_stages+1)");
      auto mem = f.read_double(g + "/peak_memory_bytes");
      if (p50.size() != mean.size() || p95.size() != mean.size() || sd.size() != mean.size() || count.size() != mean.size() || mem.size() != N1 * N1)
        fail(g, "latency/memory datasets have inconsistent shapes");
      LutTable t({device_type, model, dataset, processor}, n, B);
      for (int i = 0; i <= n; ++i)
        for (int j = i + 1; j <= n; ++j) {
          if (!std::isnan(mem[i * N1 + j])) t.set_peak_memory(i, j, mem[i * N1 + j]);
          for (int b = 1; b <= B; ++b) {
            size_t idx = (i * N1 + j) * B + (b - 1);
            if (std::isnan(mean[idx])) continue;
            t.set_latency(i, j, b, LatencyStats{mean[idx], p50[idx], p95[idx], sd[idx], count[idx]});
          }
        }
      t.bytes_per_split() = bytes;
      const GroupReader r{f, g, n, B, N1, version};
      r.read_memory_by_batch(t);
      r.read_sparsity(t);
      r.read_distributions(t);
      r.read_estimates(t);
      t.provenance().kind = f.read_attr_string(g, "provenance");
      for (const auto& a : f.attr_names(g))
        if (a.rfind("provenance:", 0) == 0) t.provenance().attributes[a.substr(11)] = f.read_attr_string(g, a);
      try {
        t.check_values();
      } catch (const std::invalid_argument& e) {
        fail(g, e.what());
      }
      out.push_back(std::move(t));
    }
  }
  if (out.empty()) fail("", "LUT file holds no tables");
  return out;
}

int lut_file_schema_version(const std::string& path) {
  // The tables are read (and checked) in the isolated child; the version is one attribute.
  read_lut_file(path);
  h5::File f = h5::File::open_read(path);
  return static_cast<int>(f.read_attr_int("/", "schema_version"));
}

namespace {
constexpr long long kMaxLutFileBytes = 1LL << 30;
}  // namespace

namespace {

// What the reader child answers for one file: its tables (encode_lut_tables) when `types` is null or
// holds the file's type, else its keys alone (encode_lut_keys); the two byte forms differ in magic.
std::string encode_lut_file_for_types(const std::string& path, const std::set<std::string>* types) {
  const h5::File f = h5::File::open_read(path);
  const LutFileHeader header = read_lut_header(f);
  return !types || types->count(header.device_type) ? encode_lut_tables(read_lut_tables(f)) : encode_lut_keys(read_lut_keys(f, header));
}

LutFileContents decode_lut_file(const std::string& path, const std::string& payload) {
  LutFileContents out;
  try {
    if (is_encoded_lut_keys(payload))
      out.unread = decode_lut_keys(payload);
    else
      out.tables = decode_lut_tables(payload);
  } catch (const std::invalid_argument& e) {
    throw InputError(SourceLocation{path, 0, 0}, "", std::string("corrupt LUT file: ") + e.what());
  }
  if (out.tables.empty() && out.unread.empty()) throw InputError(SourceLocation{path, 0, 0}, "", "LUT file holds no tables");
  return out;
}

}  // namespace

LutFileContents read_lut_file_contents(const std::string& path, const std::set<std::string>* types) {
  check_input_file(path, "LUT file", kMaxLutFileBytes);
  return decode_lut_file(path, read_isolated(path, "LUT file", [&] { return encode_lut_file_for_types(path, types); }));
}

std::vector<LutTable> read_lut_file(const std::string& path) { return read_lut_file_contents(path, nullptr).tables; }

std::vector<LutFileContents> read_lut_files_batch(const std::vector<std::string>& paths, const std::set<std::string>* types) {
  std::vector<LutFileContents> out;
  if (paths.empty()) return out;
  // Per file a u64 length and its answer, in order, up to the first file that fails in any way (the
  // child then stops). A crash, or the time or memory bound of the whole batch: nothing answered.
  std::string batch;
  try {
    batch = read_isolated(paths.front(), "LUT file", [&] {
      std::string answers;
      for (const auto& p : paths) {
        std::string one;
        try {
          check_input_file(p, "LUT file", kMaxLutFileBytes);
          one = encode_lut_file_for_types(p, types);
        } catch (const std::exception&) {
          break;
        }
        put_bytes<std::uint64_t>(answers, one.size());
        answers += one;
      }
      return answers;
    });
  } catch (const InputError&) {
    return out;
  }
  ByteReader r(batch, "LUT reader answers");
  for (const auto& p : paths) {
    if (r.done()) break;
    try {
      const auto n = r.get<std::uint64_t>();
      out.push_back(decode_lut_file(p, std::string(r.take(n), n)));
    } catch (const std::exception&) {
      break;
    }
  }
  return out;
}

}  // namespace coinfer
