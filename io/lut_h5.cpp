#include "io/lut_h5.hpp"

#include <cmath>
#include <filesystem>

#include "core/input_error.hpp"
#include "io/atomic_dir.hpp"
#include "io/h5_file.hpp"

namespace coinfer {

void write_lut_file(const std::string& path, const std::vector<LutTable>& tables) {
  if (tables.empty()) throw InputError(SourceLocation{path, 0, 0}, "", "no LUT tables to write");
  const std::string device_type = tables.front().key().device_type;
  for (const auto& t : tables)
    if (t.key().device_type != device_type)
      throw InputError(SourceLocation{path, 0, 0}, "", "one LUT file holds one device type (" + device_type +
                                                           " and " + t.key().device_type + " given)");
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_attr("/", "format", std::string("coinfer-lut"));
    f.write_attr("/", "schema_version", static_cast<std::int64_t>(kLutSchemaVersion));
    f.write_attr("/", "device_type", device_type);
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
      f.write(g + "/bytes_per_split", t.bytes_per_split(), {N1}, "bytes per sample");
      f.write(g + "/peak_memory_bytes", mem, {N1, N1}, "bytes");
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

std::vector<LutTable> read_lut_file(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  auto fail = [&](const std::string& key, const std::string& what) { throw InputError(SourceLocation{path, 0, 0}, key, what); };
  if (!f.has_attr("/", "format") || f.read_attr_string("/", "format") != "coinfer-lut")
    fail("format", "not a coinfer LUT file (root attribute format must be 'coinfer-lut')");
  const std::int64_t version = f.read_attr_int("/", "schema_version");
  if (version != kLutSchemaVersion)
    fail("schema_version", "schema version " + std::to_string(version) + " is not supported (this build reads " +
                               std::to_string(kLutSchemaVersion) + ")");
  const std::string device_type = f.read_attr_string("/", "device_type");
  std::vector<LutTable> out;
  for (const auto& model : f.children("/")) {
    for (const auto& dataset : f.children("/" + model)) {
      const std::string g = "/" + model + "/" + dataset;
      const int n = static_cast<int>(f.read_attr_int(g, "num_stages"));
      const int B = static_cast<int>(f.read_attr_int(g, "max_batch"));
      if (n < 1 || n > 1000 || B < 1 || B > 4096) fail(g, "num_stages/max_batch out of range");
      const hsize_t N1 = static_cast<hsize_t>(n + 1);
      std::vector<hsize_t> dims;
      auto mean = f.read_double(g + "/latency_mean_s", &dims);
      if (dims != std::vector<hsize_t>{N1, N1, static_cast<hsize_t>(B)}) fail(g + "/latency_mean_s", "shape differs from (num_stages+1, num_stages+1, max_batch)");
      auto p50 = f.read_double(g + "/latency_p50_s");
      auto p95 = f.read_double(g + "/latency_p95_s");
      auto sd = f.read_double(g + "/latency_std_s");
      auto count = f.read_int64(g + "/latency_count");
      auto bytes = f.read_double(g + "/bytes_per_split", &dims);
      if (dims != std::vector<hsize_t>{N1}) fail(g + "/bytes_per_split", "shape must be (num_stages+1)");
      auto mem = f.read_double(g + "/peak_memory_bytes");
      if (p50.size() != mean.size() || p95.size() != mean.size() || sd.size() != mean.size() ||
          count.size() != mean.size() || mem.size() != N1 * N1)
        fail(g, "latency/memory datasets have inconsistent shapes");
      LutTable t({device_type, model, dataset}, n, B);
      for (int i = 0; i <= n; ++i)
        for (int j = i + 1; j <= n; ++j) {
          if (!std::isnan(mem[i * N1 + j])) t.set_peak_memory(i, j, mem[i * N1 + j]);
          for (int b = 1; b <= B; ++b) {
            size_t idx = (i * N1 + j) * B + (b - 1);
            if (std::isnan(mean[idx])) continue;
            if (mean[idx] < 0) fail(g + "/latency_mean_s", "negative latency at [" + std::to_string(i) + "," + std::to_string(j) + ") batch " + std::to_string(b));
            t.set_latency(i, j, b, LatencyStats{mean[idx], p50[idx], p95[idx], sd[idx], count[idx]});
          }
        }
      t.bytes_per_split() = bytes;
      t.provenance().kind = f.read_attr_string(g, "provenance");
      for (const auto& a : f.attr_names(g))
        if (a.rfind("provenance:", 0) == 0) t.provenance().attributes[a.substr(11)] = f.read_attr_string(g, a);
      out.push_back(std::move(t));
    }
  }
  if (out.empty()) fail("", "LUT file holds no tables");
  return out;
}

}  // namespace coinfer
