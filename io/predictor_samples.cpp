#include "io/predictor_samples.hpp"

#include <cmath>

#include "core/input_error.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/h5_file.hpp"
#include "io/record_columns.hpp"
#include "io/input_file.hpp"
#include "plumbing/isolated_reader.hpp"

namespace coinfer {

namespace {
constexpr std::int64_t kMaxSamples = 1000000, kMaxNodes = 512, kMaxEdges = 8192;
constexpr const char* kFormat = "coinfer-predictor-samples";
}  // namespace

const std::vector<RecordField<PredictorSample>>& predictor_sample_fields() {
  using R = PredictorSample;
  using K = FieldKind;
  static const std::vector<RecordField<R>> table = {
      integer_field("system", K::int64, "", &R::system),
      text_field("system_key", &R::system_key),
      text_field("device_types", &R::device_types),
      text_field("models", &R::models),
      text_field("scheme", &R::scheme),
      text_field("source", &R::source),
      number_field("throughput_rps", K::real, "1/s", &R::throughput_rps),
      number_field("mean_latency_ms", K::real, "ms", &R::mean_latency_ms),
      number_field("p95_latency_ms", K::real, "ms", &R::p95_latency_ms),
      number_field("analytic_throughput_rps", K::real, "1/s", &R::analytic_throughput_rps),
      number_field("analytic_mean_latency_ms", K::real, "ms", &R::analytic_mean_latency_ms),
      integer_field("measured", K::flag, "", &R::measured),
  };
  return table;
}

void write_predictor_samples(const std::string& path, const PredictorSampleSet& set) {
  if (set.samples.empty()) throw InputError(SourceLocation{path, 0, 0}, "", "no samples to write");
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_attr("/", "format", std::string(kFormat));
    f.write_attr("/", "schema_version", kPredictorSamplesSchema);
    f.write_attr("/", "provenance", set.provenance);
    const hsize_t S = set.samples.size();
    std::vector<std::int64_t> node_offset{0}, edge_offset{0};
    std::vector<std::int8_t> node_type;
    std::vector<double> lat, settings;
    std::vector<std::int32_t> src, dst;
    for (const auto& s : set.samples) {
      for (int t : s.node_type) node_type.push_back(static_cast<std::int8_t>(t));
      lat.insert(lat.end(), s.node_latency_ms.begin(), s.node_latency_ms.end());
      settings.insert(settings.end(), s.node_settings.begin(), s.node_settings.end());
      for (const auto& [a, b] : s.edges) src.push_back(a), dst.push_back(b);
      node_offset.push_back(node_offset.back() + static_cast<std::int64_t>(s.node_type.size()));
      edge_offset.push_back(edge_offset.back() + static_cast<std::int64_t>(s.edges.size()));
    }
    f.make_group("/samples");
    write_columns(f, "/samples", set.samples, predictor_sample_fields());
    f.write("/samples/node_offset", node_offset, {S + 1});
    f.write("/samples/edge_offset", edge_offset, {S + 1});
    f.make_group("/nodes");
    const hsize_t N = node_type.size();
    f.write("/nodes/type", node_type, {N});
    f.write("/nodes/latency_ms", lat, {N}, "ms");
    f.write("/nodes/settings", settings, {N, 3});
    f.make_group("/edges");
    f.write("/edges/source", src, {static_cast<hsize_t>(src.size())});
    f.write("/edges/target", dst, {static_cast<hsize_t>(dst.size())});
  }
  out.commit();
}

PredictorSampleSet read_predictor_samples_from(const h5::Reader& f) {
  const std::string& path = f.path();
  auto bad = [&](const std::string& object, const std::string& what) -> InputError { return InputError(SourceLocation{path, 0, 0}, object, what); };
  if (!f.has_attr("/", "format") || f.read_attr_string("/", "format") != kFormat)
    throw bad("format", std::string("not a predictor sample set (attribute format is not '") + kFormat + "')");
  const std::int64_t version = f.read_attr_int("/", "schema_version");
  if (version != kPredictorSamplesSchema)
    throw bad("schema_version",
              "schema " + std::to_string(version) + " is not supported (this coinfer reads schema " + std::to_string(kPredictorSamplesSchema) + ")");
  PredictorSampleSet set;
  set.provenance = f.has_attr("/", "provenance") ? f.read_attr_string("/", "provenance") : "";
  // Every per-sample column must be one-dimensional with S rows (offsets S + 1) before anything is read.
  const auto sys_info = f.info("/samples/system");
  if (sys_info.dims.size() != 1) throw bad("/samples/system", "must be one-dimensional");
  const std::int64_t S = static_cast<std::int64_t>(sys_info.dims[0]);
  if (S < 1 || S > kMaxSamples) throw bad("/samples/system", "holds " + std::to_string(S) + " samples (1 .. 10^6 allowed)");
  auto check_rows = [&](const std::string& name, std::int64_t rows) {
    const auto info = f.info(name);
    if (info.dims.size() != 1 || static_cast<std::int64_t>(info.dims[0]) != rows)
      throw bad(name, "must have " + std::to_string(rows) + " rows (one per sample" + (rows > S ? ", plus one" : "") + ")");
  };
  for (const auto& c : predictor_sample_fields()) check_rows(std::string("/samples/") + c.name, S);
  check_rows("/samples/node_offset", S + 1);
  check_rows("/samples/edge_offset", S + 1);
  std::vector<PredictorSample> rows = read_columns(f, path, "/samples", predictor_sample_fields());
  const auto node_offset = f.read_int64("/samples/node_offset"), edge_offset = f.read_int64("/samples/edge_offset");
  const auto ntype_info = f.info("/nodes/type");
  if (ntype_info.dims.size() != 1) throw bad("/nodes/type", "must be one-dimensional");
  const std::int64_t N = static_cast<std::int64_t>(ntype_info.dims[0]);
  check_rows("/nodes/latency_ms", N);
  const auto set_info = f.info("/nodes/settings");
  if (set_info.dims.size() != 2 || static_cast<std::int64_t>(set_info.dims[0]) != N || set_info.dims[1] != 3)
    throw bad("/nodes/settings", "must be [" + std::to_string(N) + " x 3]");
  const auto src_info = f.info("/edges/source");
  if (src_info.dims.size() != 1) throw bad("/edges/source", "must be one-dimensional");
  const std::int64_t E = static_cast<std::int64_t>(src_info.dims[0]);
  check_rows("/edges/target", E);
  const auto ntype = f.read_double("/nodes/type"), lat = f.read_double("/nodes/latency_ms"), settings = f.read_double("/nodes/settings");
  const auto src = f.read_double("/edges/source"), dst = f.read_double("/edges/target");
  if (node_offset[0] != 0 || node_offset[S] != N) throw bad("/samples/node_offset", "must run from 0 to the number of nodes");
  if (edge_offset[0] != 0 || edge_offset[S] != E) throw bad("/samples/edge_offset", "must run from 0 to the number of edges");
  auto finite_nonneg = [](double x) { return std::isfinite(x) && x >= 0; };
  for (std::int64_t i = 0; i < S; ++i) {
    const std::string row = " (sample " + std::to_string(i) + ")";
    const std::int64_t n0 = node_offset[i], n1 = node_offset[i + 1], e0 = edge_offset[i], e1 = edge_offset[i + 1];
    if (n1 - n0 < 1 || n1 - n0 > kMaxNodes || n1 > N) throw bad("/samples/node_offset", "1 .. 512 nodes per sample, increasing" + row);
    if (e1 - e0 < 0 || e1 - e0 > kMaxEdges || e1 > E) throw bad("/samples/edge_offset", "0 .. 8192 edges per sample, increasing" + row);
    PredictorSample& s = rows[static_cast<size_t>(i)];
    for (double x : {s.throughput_rps, s.analytic_throughput_rps, s.analytic_mean_latency_ms})
      if (!finite_nonneg(x)) throw bad("/samples", "a throughput or prediction is negative or not finite" + row);
    // NaN: no request created in the measurement window completed (core/metrics.hpp). The throughput counts
    // deliveries in the window whatever the request's creation, so a saturated system has both: results of
    // requests created before the window (throughput > 0) and no latency.
    for (double x : {s.mean_latency_ms, s.p95_latency_ms})
      if (!std::isnan(x) && !finite_nonneg(x)) throw bad("/samples", "a latency is negative or infinite" + row);
    for (std::int64_t v = n0; v < n1; ++v) {
      if (!(ntype[v] >= 0 && ntype[v] <= 4 && ntype[v] == std::floor(ntype[v]))) throw bad("/nodes/type", "must be 0 .. 4" + row);
      if (!finite_nonneg(lat[v])) throw bad("/nodes/latency_ms", "must be finite and >= 0" + row);
      s.node_type.push_back(static_cast<int>(ntype[v]));
      s.node_latency_ms.push_back(lat[v]);
      for (int k = 0; k < 3; ++k) {
        const double x = settings[static_cast<size_t>(v) * 3 + k];
        if (!finite_nonneg(x) || x > 1e6) throw bad("/nodes/settings", "must be finite, 0 .. 10^6" + row);
        s.node_settings.push_back(x);
      }
    }
    const std::int64_t nodes = n1 - n0;
    for (std::int64_t e = e0; e < e1; ++e) {
      if (!(src[e] >= 0 && src[e] < nodes && dst[e] >= 0 && dst[e] < nodes)) throw bad("/edges", "an edge names a node outside its sample" + row);
      s.edges.emplace_back(static_cast<int>(src[e]), static_cast<int>(dst[e]));
    }
    set.samples.push_back(std::move(s));
  }
  return set;
}

namespace {
PredictorSampleSet read_in_process(const std::string& path) { return read_predictor_samples_from(h5::File::open_read(path)); }
}  // namespace

PredictorSampleSet read_predictor_samples(const std::string& path) {
  check_input_file(path, "sample set", 1LL << 32);
  // A child parses first (libhdf5 may crash on corrupt metadata); then the same bytes are safe here.
  read_isolated(path, "sample set", [&] {
    read_in_process(path);
    return std::string();
  });
  return read_in_process(path);
}

}  // namespace coinfer
