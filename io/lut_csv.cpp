#include "io/lut_csv.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "core/text_util.hpp"
#include "io/csv.hpp"
#include "io/input_file.hpp"

namespace coinfer {

std::vector<LutTable> import_lut_csv(const std::string& file, const ModelCatalog& models, const std::string& source) {
  if (source.empty())
    throw InputError(SourceLocation{file, 0, 0}, "--source",
                     "say where the measurements come from (e.g. 'measured on my Pi 4B, 4 threads, 2026-11-20')");
  const std::vector<CsvRecord> records = parse_csv(read_input_file(file, "LUT CSV"), file);
  const std::vector<std::string> required = {"device_type", "model",  "dataset", "start",  "end",  "batch",
                                             "mean_ms",     "p50_ms", "p95_ms",  "std_ms", "count"};
  int no = records.empty() ? 0 : records.front().line;
  const std::vector<std::string> header = records.empty() ? std::vector<std::string>{} : records.front().fields;
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const auto& r : required)
    if (!col.count(r)) throw InputError(SourceLocation{file, no, 1}, r, "missing column (required: " + join(required) + ")");
  const std::vector<std::string> optional = {"peak_memory_bytes", "processor"};
  for (const auto& h : header)
    if (std::find(required.begin(), required.end(), h) == required.end() && std::find(optional.begin(), optional.end(), h) == optional.end()) {
      std::vector<std::string> all = required;
      all.insert(all.end(), optional.begin(), optional.end());
      std::string near = nearest_word(h, all);
      throw InputError(SourceLocation{file, no, 1}, h, "unknown column" + (near.empty() ? "" : "; did you mean '" + near + "'?"));
    }
  struct Row {
    int i, j, b;
    LatencyStats s;
    double mem;
  };
  std::map<LutKey, std::vector<Row>> rows;
  std::string device_type, processor;
  for (size_t rec = 1; rec < records.size(); ++rec) {
    no = records[rec].line;
    const std::vector<std::string>& cells = records[rec].fields;
    if (cells.size() != header.size())
      throw InputError(SourceLocation{file, no, 1}, "",
                       "expected " + std::to_string(header.size()) + " columns, got " + std::to_string(cells.size()));
    auto num = [&](const std::string& c) {
      const std::string& t = cells[col[c]];
      try {
        size_t used = 0;
        double d = std::stod(t, &used);
        if (used == t.size() && std::isfinite(d) && d >= 0) return d;
      } catch (const std::exception&) {
      }
      throw InputError(SourceLocation{file, no, static_cast<int>(col[c]) + 1}, c, "'" + t + "' is not a number >= 0");
    };
    // processor (optional): which of the device type's processors measured the row ("" = its only one).
    LutKey key{cells[col["device_type"]], cells[col["model"]], cells[col["dataset"]], col.count("processor") ? cells[col["processor"]] : ""};
    if (device_type.empty()) device_type = key.device_type;
    if (key.device_type != device_type)
      throw InputError(SourceLocation{file, no, 1}, "device_type",
                       "one CSV imports one device type ('" + device_type + "' and '" + key.device_type + "' found)");
    if (rec == 1) processor = key.processor;
    if (key.processor != processor)
      throw InputError(SourceLocation{file, no, static_cast<int>(col["processor"]) + 1}, "processor",
                       "one CSV imports one processor ('" + processor + "' and '" + key.processor + "' found): a LUT file describes one");
    Row r;
    r.i = static_cast<int>(num("start"));
    r.j = static_cast<int>(num("end"));
    r.b = static_cast<int>(num("batch"));
    r.s = LatencyStats{num("mean_ms") * 1e-3, num("p50_ms") * 1e-3, num("p95_ms") * 1e-3, num("std_ms") * 1e-3, static_cast<long long>(num("count"))};
    r.mem = col.count("peak_memory_bytes") && !cells[col["peak_memory_bytes"]].empty() ? num("peak_memory_bytes") : NAN;
    if (r.b < 1 || r.b > limits::kMaxBatch)
      throw InputError(SourceLocation{file, no, 1}, "batch", "must be in 1.." + std::to_string(limits::kMaxBatch));
    if (r.i >= r.j) throw InputError(SourceLocation{file, no, 1}, "end", "must be greater than start");
    rows[key].push_back(r);
  }
  if (rows.empty()) throw InputError(SourceLocation{file, no, 0}, "", "CSV has no data rows");
  std::vector<LutTable> out;
  for (const auto& kv : rows) {
    ModelSpec spec;
    try {
      spec = models.instantiate(kv.first.model, kv.first.dataset);
    } catch (const InputError& e) {
      throw InputError(SourceLocation{file, 0, 0}, "model", e.what());
    }
    int max_b = 1;
    for (const auto& r : kv.second) max_b = std::max(max_b, r.b);
    LutTable t(kv.first, spec.num_stages(), max_b);
    for (const auto& r : kv.second) {
      if (r.j > spec.num_stages())
        throw InputError(SourceLocation{file, 0, 0}, "end",
                         "range [" + std::to_string(r.i) + "," + std::to_string(r.j) + ") exceeds the " + std::to_string(spec.num_stages()) +
                             " stages of " + spec.name);
      t.set_latency(r.i, r.j, r.b, r.s);
      if (!std::isnan(r.mem)) t.set_peak_memory(r.i, r.j, std::max(r.mem, t.peak_memory(r.i, r.j).value_or(0)));
    }
    for (int k = 0; k <= spec.num_stages(); ++k) t.bytes_per_split()[k] = spec.bytes_at_split(k);
    t.provenance().kind = "imported";
    t.provenance().attributes["source"] = source;
    t.provenance().attributes["csv"] = file;
    t.provenance().attributes["bytes_per_split"] = "from model spec " + spec.file;
    try {
      t.check_values();
    } catch (const std::invalid_argument& e) {
      throw InputError(SourceLocation{file, 0, 0}, kv.first.to_string(), e.what());
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace coinfer
