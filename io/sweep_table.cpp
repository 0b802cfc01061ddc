#include "io/sweep_table.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/csv.hpp"
#include "io/h5_file.hpp"

namespace coinfer {

namespace {
double num(const nlohmann::json& j) { return j.is_number() ? j.get<double>() : NAN; }
bool all_numeric(const SweepTable& t, size_t axis) {
  for (const auto& r : t.rows) {
    try {
      size_t used = 0;
      std::stod(r.values[axis], &used);
      if (used != r.values[axis].size()) return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}
}  // namespace

void read_point_summary(const std::string& file, SweepRow& row) {
  std::ifstream in(file);
  row.ok = false;
  if (!in) return;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    const auto& t = j.at("total");
    row.throughput_rps = num(t.at("throughput_rps"));
    row.latency_mean_ms = num(t.at("latency_ms").at("mean"));
    row.latency_p50_ms = num(t.at("latency_ms").at("p50"));
    row.latency_p95_ms = num(t.at("latency_ms").at("p95"));
    row.latency_p99_ms = num(t.at("latency_ms").at("p99"));
    row.energy_j_per_inference = num(t.at("energy_j_per_inference"));
    row.completed = t.at("completed").get<long long>();
    row.failed = t.at("failed").get<long long>();
    row.decisions = j.contains("decisions") ? j.at("decisions").at("count").get<long long>() : 0;
    row.ok = true;
  } catch (const std::exception&) {
    row.ok = false;
  }
}

void write_sweep_h5(const std::string& path, const SweepTable& t) {
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_attr("/", "format", std::string("coinfer-sweep"));
    f.write_attr("/", "schema_version", static_cast<std::int64_t>(2));  // 2: text attributes are variable-length UTF-8
    f.write_attr("/", "scenario", t.scenario);
    f.write_attr("/", "axes", join(t.axes, ","));
    if (!t.axis_labels.empty()) f.write_attr("/", "axis_labels", join(t.axis_labels, "\n"));  // one line per axis
    const hsize_t n = t.rows.size();
    std::vector<std::int64_t> point(n), seed(n), completed(n), failed(n), decisions(n);
    std::vector<std::int8_t> ok(n);
    std::vector<double> thr(n), mean(n), p50(n), p95(n), p99(n), energy(n);
    for (hsize_t i = 0; i < n; ++i) {
      const auto& r = t.rows[i];
      point[i] = r.point;
      seed[i] = r.seed;
      ok[i] = r.ok ? 1 : 0;
      completed[i] = r.completed;
      failed[i] = r.failed;
      decisions[i] = r.decisions;
      thr[i] = r.throughput_rps;
      mean[i] = r.latency_mean_ms;
      p50[i] = r.latency_p50_ms;
      p95[i] = r.latency_p95_ms;
      p99[i] = r.latency_p99_ms;
      energy[i] = r.energy_j_per_inference;
    }
    f.write("/point", point, {n});
    f.write("/seed", seed, {n});
    f.write("/ok", ok, {n}, "1 = the point ran and produced a summary");
    for (size_t a = 0; a < t.axes.size(); ++a) {
      if (all_numeric(t, a)) {
        std::vector<double> v(n);
        for (hsize_t i = 0; i < n; ++i) v[i] = std::stod(t.rows[i].values[a]);
        f.write("/grid/" + t.axes[a], v, {n});
      } else {
        std::vector<std::string> v(n);
        for (hsize_t i = 0; i < n; ++i) v[i] = t.rows[i].values[a];
        f.write("/grid/" + t.axes[a], v);
      }
    }
    f.write("/metrics/throughput_rps", thr, {n}, "requests/s");
    f.write("/metrics/latency_mean_ms", mean, {n}, "ms");
    f.write("/metrics/latency_p50_ms", p50, {n}, "ms");
    f.write("/metrics/latency_p95_ms", p95, {n}, "ms");
    f.write("/metrics/latency_p99_ms", p99, {n}, "ms");
    f.write("/metrics/energy_j_per_inference", energy, {n}, "J");
    f.write("/metrics/completed", completed, {n});
    f.write("/metrics/failed", failed, {n});
    f.write("/metrics/decisions", decisions, {n});
  }
  out.commit();
}

void write_sweep_csv(const std::string& path, const SweepTable& t) {
  std::ostringstream os;
  os << "point,seed";
  for (const auto& a : t.axes) os << "," << csv_field(a);  // RFC 4180: a value with a comma is quoted
  os << ",ok,throughput_rps,latency_mean_ms,latency_p50_ms,latency_p95_ms,latency_p99_ms,energy_j_per_inference,"
        "completed,failed,decisions\n";
  auto f = [](double v) { return std::isnan(v) ? std::string() : format_double(v); };
  for (const auto& r : t.rows) {
    os << r.point << "," << r.seed;
    for (const auto& v : r.values) os << "," << csv_field(v);  // e.g. scheduler={name: dp, ...}
    os << "," << (r.ok ? 1 : 0) << "," << f(r.throughput_rps) << "," << f(r.latency_mean_ms) << "," << f(r.latency_p50_ms)
       << "," << f(r.latency_p95_ms) << "," << f(r.latency_p99_ms) << "," << f(r.energy_j_per_inference) << ","
       << r.completed << "," << r.failed << "," << r.decisions << "\n";
  }
  write_text_atomic(path, os.str());
}

}  // namespace coinfer
