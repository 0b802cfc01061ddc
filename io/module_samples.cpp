#include "io/module_samples.hpp"

#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <map>

#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "core/text_util.hpp"
#include "plumbing/atomic_dir.hpp"
#include "io/csv.hpp"
#include "io/input_file.hpp"

namespace coinfer {

namespace {

constexpr const char* kMagic = "# coinfer-module-samples schema 1";
const std::vector<std::string> kFixedColumns = {"op", "device_type", "model", "stage", "mean_s", "p50_s", "count"};
constexpr size_t kMaxRows = 1000000;

}  // namespace

void write_module_samples(const std::string& path, const ModuleSampleSet& set) {
  if (set.feature_classes.empty() && set.feature_names != module_feature_names())
    throw InputError(SourceLocation{path, 0, 0}, "", "sample set features differ from this build's (" + join(module_feature_names()) + ")");
  if (!set.feature_classes.empty() && set.feature_classes.size() != set.feature_names.size())
    throw InputError(SourceLocation{path, 0, 0}, "", "as many feature classes as feature names");
  std::string text = std::string(kMagic) + "\n# provenance kind=" + set.provenance.kind + "\n";
  for (const auto& [k, v] : set.provenance.attributes) {
    std::string one_line = v;
    for (char& c : one_line)
      if (c == '\n' || c == '\r') c = ' ';
    text += "# provenance " + k + "=" + one_line + "\n";
  }
  if (!set.feature_classes.empty()) text += "# feature-classes " + join(set.feature_classes, ",") + "\n";
  std::vector<std::string> header = kFixedColumns;
  header.insert(header.end(), set.feature_names.begin(), set.feature_names.end());
  text += csv_record(header);
  for (const ModuleSample& s : set.samples) {
    std::vector<std::string> row = {
        s.op, s.device_type, s.model, s.stage_name, format_double(s.mean_s), format_double(s.p50_s), std::to_string(s.count)};
    for (double f : s.features) row.push_back(format_double(f));
    text += csv_record(row);
  }
  write_text_atomic(path, text);
}

ModuleSampleSet read_module_samples(const std::string& path) {
  const std::string text = read_input_file(path, "module sample set");
  auto fail = [&](int line, const std::string& key, const std::string& what) { throw InputError(SourceLocation{path, line, 0}, key, what); };
  if (text.compare(0, std::string(kMagic).size(), kMagic) != 0)
    fail(1, "", "not a coinfer module sample set (the first line must be '" + std::string(kMagic) + "')");
  ModuleSampleSet set;
  // Provenance comment lines.
  size_t pos = 0;
  int line = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    const std::string l = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    ++line;
    pos = eol == std::string::npos ? text.size() : eol + 1;
    const std::string classes_tag = "# feature-classes ";
    if (l.compare(0, classes_tag.size(), classes_tag) == 0) {
      if (!set.feature_classes.empty()) fail(line, "feature-classes", "given twice");
      set.feature_classes = split(l.substr(classes_tag.size()), ',');
      for (const auto& c : set.feature_classes)
        if (c != "sampling" && c != "measurable" && c != "inferable")
          fail(line, "feature-classes", "'" + printable(c) + "' is not a class (sampling, measurable, inferable)");
      continue;
    }
    const std::string tag = "# provenance ";
    if (l.compare(0, tag.size(), tag) != 0) continue;
    const size_t eq = l.find('=', tag.size());
    if (eq == std::string::npos) fail(line, "provenance", "expected '# provenance key=value'");
    const std::string k = l.substr(tag.size(), eq - tag.size()), v = l.substr(eq + 1);
    if (k == "kind")
      set.provenance.kind = v;
    else
      set.provenance.attributes[k] = v;
  }
  if (set.provenance.kind != "measured" && set.provenance.kind != "imported")
    fail(0, "provenance", "kind '" + printable(set.provenance.kind) + "' (a sample set says where its numbers came from: measured or imported)");
  const std::vector<CsvRecord> records = parse_csv(text, path);
  if (records.empty()) fail(0, "", "no header row");
  const CsvRecord& head = records.front();
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < head.fields.size(); ++i)
    if (!col.emplace(head.fields[i], i).second) fail(head.line, printable(head.fields[i]), "column given twice");
  if (!set.feature_classes.empty()) {
    // Its own features: the header's columns after the fixed ones, one class each.
    if (head.fields.size() < kFixedColumns.size() || !std::equal(kFixedColumns.begin(), kFixedColumns.end(), head.fields.begin()))
      fail(head.line, "", "a set with feature classes starts its header with " + join(kFixedColumns));
    set.feature_names.assign(head.fields.begin() + static_cast<long>(kFixedColumns.size()), head.fields.end());
    if (set.feature_names.size() != set.feature_classes.size())
      fail(head.line, "feature-classes",
           std::to_string(set.feature_classes.size()) + " classes for " + std::to_string(set.feature_names.size()) + " feature columns");
    for (const auto& n : set.feature_names)
      if (n.empty() || n.size() > 64 || !valid_utf8(n)) fail(head.line, printable(n), "not a feature name");
  }
  std::vector<std::string> want = kFixedColumns;
  want.insert(want.end(), set.feature_names.begin(), set.feature_names.end());
  for (const auto& w : want)
    if (!col.count(w)) fail(head.line, w, "missing column (columns: " + join(want) + ")");
  if (head.fields.size() != want.size()) {
    for (const auto& f : head.fields)
      if (std::find(want.begin(), want.end(), f) == want.end()) fail(head.line, printable(f), "unknown column (columns: " + join(want) + ")");
  }
  if (records.size() - 1 > kMaxRows) fail(records[kMaxRows + 1].line, "", "more than " + std::to_string(kMaxRows) + " samples");
  auto number = [&](const CsvRecord& r, const std::string& key, double lo, double hi) {
    const std::string& f = r.fields[col[key]];
    char* end = nullptr;
    const double v = std::strtod(f.c_str(), &end);
    if (f.empty() || *end != 0 || !std::isfinite(v) || v < lo || v > hi)
      fail(r.line, key, "'" + printable(f) + "' is not a number in [" + format_double(lo) + ", " + format_double(hi) + "]");
    return v;
  };
  for (size_t i = 1; i < records.size(); ++i) {
    const CsvRecord& r = records[i];
    if (r.fields.size() != head.fields.size())
      fail(r.line, "", std::to_string(r.fields.size()) + " fields, the header has " + std::to_string(head.fields.size()));
    ModuleSample s;
    s.op = r.fields[col["op"]];
    s.device_type = r.fields[col["device_type"]];
    s.model = r.fields[col["model"]];
    s.stage_name = r.fields[col["stage"]];
    if (s.op.empty() || s.op.size() > 64 || !valid_utf8(s.op)) fail(r.line, "op", "'" + printable(s.op) + "' is not an op name");
    if (s.device_type.empty() || !valid_utf8(s.device_type)) fail(r.line, "device_type", "empty or not UTF-8");
    s.mean_s = number(r, "mean_s", limits::kMinLutLatencyS, limits::kMaxLutLatencyS);
    s.p50_s = number(r, "p50_s", 0, limits::kMaxLutLatencyS);
    s.count = static_cast<long long>(number(r, "count", 1, 1e9));
    for (const auto& name : set.feature_names) s.features.push_back(number(r, name, 0, 1e18));
    set.samples.push_back(std::move(s));
  }
  return set;
}

}  // namespace coinfer
