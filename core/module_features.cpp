#include "core/module_features.hpp"

#include <cstdlib>
#include <stdexcept>

namespace coinfer {

namespace {

double leading_number(const Provenance& p, const std::string& key) {
  auto it = p.attributes.find(key);
  if (it == p.attributes.end()) throw std::invalid_argument("provenance has no '" + key + "' (a measured LUT records it)");
  const char* s = it->second.c_str();
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || !(v >= 0) || v > 1e6) throw std::invalid_argument("provenance '" + key + "' is '" + it->second + "', not a number");
  return v;
}

}  // namespace

MeasurableParams measurable_params_of(const Provenance& p) {
  MeasurableParams m;
  const double cap = p.attributes.count("cpu_cap_cores") ? leading_number(p, "cpu_cap_cores") : 0;
  m.cpu_cores = cap > 0 ? cap : leading_number(p, "cores");
  // Utilisation by other work (coinfer profile --background-load): the cores left to
  // the model, cap x (1 - load), MEDN's measurable parameter as the run saw it.
  const double load = p.attributes.count("background_load") ? leading_number(p, "background_load") : 0;
  if (!(load >= 0 && load < 1)) throw std::invalid_argument("provenance 'background_load' is outside [0, 1)");
  m.cpu_cores *= 1 - load;
  m.threads = leading_number(p, "threads");
  if (m.threads < 1) throw std::invalid_argument("provenance 'threads' is below 1");
  if (m.cpu_cores <= 0) throw std::invalid_argument("provenance 'cores' is 0");
  return m;
}

const std::vector<std::string>& module_feature_names() {
  static const std::vector<std::string> names = {"batch",     "nodes",         "edges",          "in_width", "out_width",    "k",
                                                 "heads",     "cpu_cores",     "threads",        "flops",    "weight_bytes", "in_bytes",
                                                 "out_bytes", "traffic_bytes", "workspace_bytes"};
  return names;
}

std::vector<double> module_features(const ModelSpec& spec, int stage, int batch, const MeasurableParams& hw) {
  if (stage < 0 || stage >= spec.num_stages()) throw std::out_of_range("stage " + std::to_string(stage) + " is outside the model");
  if (batch < 1) throw std::invalid_argument("batch must be >= 1");
  const StageSpec& s = spec.stages[static_cast<size_t>(stage)];
  const double b = batch;
  double in_bytes = 0;
  for (int p : s.inputs) in_bytes += p < 0 ? spec.input_bytes : spec.stages[static_cast<size_t>(p)].out_bytes;
  // Edges the stage works over: the dataset's graph, or the N*k edges a KNN graph has.
  const double nodes = static_cast<double>(spec.dataset.nodes);
  const double edges = s.k > 0 ? nodes * s.k : static_cast<double>(spec.dataset.edges);
  return {b,
          nodes,
          edges,
          static_cast<double>(s.in_width),
          static_cast<double>(s.out_width),
          static_cast<double>(s.k),
          static_cast<double>(s.heads),
          hw.cpu_cores,
          hw.threads,
          s.flops * b,
          s.weight_bytes,
          in_bytes * b,
          s.out_bytes * b,
          s.traffic_bytes * b,
          s.workspace_bytes * b};
}

std::vector<ModuleSample> module_samples_from_lut(const LutTable& table, const ModelSpec& spec) {
  std::vector<ModuleSample> out;
  const std::string& kind = table.provenance().kind;
  if (kind != "measured" && kind != "imported") return out;
  if (spec.num_stages() != table.num_stages())
    throw std::invalid_argument("LUT " + table.key().to_string() + " has " + std::to_string(table.num_stages()) + " stages, the model spec " +
                                std::to_string(spec.num_stages()));
  const MeasurableParams hw = measurable_params_of(table.provenance());
  for (int st = 0; st < table.num_stages(); ++st)
    for (int b = 1; b <= table.max_batch(); ++b) {
      if (!table.has_latency(st, st + 1, b) || table.estimate(st, st + 1, b)) continue;
      const LatencyStats& l = table.latency(st, st + 1, b);
      const StageSpec& stage = spec.stages[static_cast<size_t>(st)];
      out.push_back({stage.op, table.key().device_type, table.key().model + "/" + table.key().dataset, stage.name, module_features(spec, st, b, hw),
                     l.mean_s, l.p50_s, l.count});
    }
  return out;
}

}  // namespace coinfer
