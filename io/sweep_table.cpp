#include "io/sweep_table.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/csv.hpp"
#include "io/h5_file.hpp"
#include "io/record_columns.hpp"

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
    // Summaries before the window rule (core/metrics.hpp) have neither: NaN and not flagged.
    row.throughput_incl_drain_rps = t.contains("throughput_incl_drain_rps") ? num(t.at("throughput_incl_drain_rps")) : NAN;
    row.offered_rps = t.contains("offered_rps") ? num(t.at("offered_rps")) : NAN;
    row.saturated = t.value("saturated", false);
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

const std::vector<RecordField<SweepRow>>& sweep_point_fields() {
  using R = SweepRow;
  static const std::vector<RecordField<R>> table = {
      integer_field("point", FieldKind::int64, "", &R::point),
      integer_field("seed", FieldKind::int64, "", &R::seed),
      integer_field("ok", FieldKind::flag, "1 = the point ran and produced a summary", &R::ok),
  };
  return table;
}

const std::vector<RecordField<SweepRow>>& sweep_metric_fields() {
  using R = SweepRow;
  using K = FieldKind;
  static const std::vector<RecordField<R>> table = {
      number_field("throughput_rps", K::real, "requests/s: results delivered inside the measurement window", &R::throughput_rps),
      number_field("throughput_incl_drain_rps", K::real, "requests/s: the window's requests that completed, drain included",
                   &R::throughput_incl_drain_rps),
      number_field("offered_rps", K::real, "requests/s: requests created in the window", &R::offered_rps),
      integer_field("saturated", K::flag, "1 = queues grew over the window (core/metrics.hpp)", &R::saturated),
      number_field("latency_mean_ms", K::real, "ms", &R::latency_mean_ms),
      number_field("latency_p50_ms", K::real, "ms", &R::latency_p50_ms),
      number_field("latency_p95_ms", K::real, "ms", &R::latency_p95_ms),
      number_field("latency_p99_ms", K::real, "ms", &R::latency_p99_ms),
      number_field("energy_j_per_inference", K::real, "J", &R::energy_j_per_inference),
      integer_field("completed", K::int64, "", &R::completed),
      integer_field("failed", K::int64, "", &R::failed),
      integer_field("decisions", K::int64, "", &R::decisions),
  };
  return table;
}

void write_sweep_h5(const std::string& path, const SweepTable& t) {
  AtomicFile out(path);
  {
    h5::File f = h5::File::create(out.temp_path());
    f.write_attr("/", "format", std::string("coinfer-sweep"));
    f.write_attr(
        "/", "schema_version",
        static_cast<std::int64_t>(
            3));  // 2: text attributes are variable-length UTF-8; 3: throughput_rps delivered in the window, throughput_incl_drain_rps, offered_rps, saturated
    f.write_attr("/", "scenario", t.scenario);
    f.write_attr("/", "axes", join(t.axes, ","));
    if (!t.axis_labels.empty()) f.write_attr("/", "axis_labels", join(t.axis_labels, "\n"));  // one line per axis
    const hsize_t n = t.rows.size();
    write_columns(f, "", t.rows, sweep_point_fields());  // /point, /seed, /ok
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
    write_columns(f, "/metrics", t.rows, sweep_metric_fields());
  }
  out.commit();
}

void write_sweep_csv(const std::string& path, const SweepTable& t) {
  std::ostringstream os;
  os << "point,seed";
  for (const auto& a : t.axes) os << "," << csv_field(a);  // RFC 4180: a value with a comma is quoted
  os << ",ok";
  for (const auto& m : sweep_metric_fields()) os << "," << m.name;
  os << "\n";
  for (const auto& r : t.rows) {
    os << r.point << "," << r.seed;
    for (const auto& v : r.values) os << "," << csv_field(v);  // e.g. scheduler={name: dp, ...}
    os << "," << (r.ok ? 1 : 0);
    for (const auto& m : sweep_metric_fields()) {
      if (m.is_integer())
        os << "," << m.get_int(r);
      else
        os << "," << (std::isnan(m.get_real(r)) ? std::string() : format_double(m.get_real(r)));  // NaN: empty
    }
    os << "\n";
  }
  write_text_atomic(path, os.str());
}

}  // namespace coinfer
