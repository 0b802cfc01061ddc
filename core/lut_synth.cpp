#include "core/lut_synth.hpp"

#include "core/device_hardware.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/text_util.hpp"

namespace coinfer {
namespace {
double roofline_seconds_at_full_efficiency(const StageSpec& s, const ProcessorProfile& p) {
  return std::max(s.flops / (p.peak_gflops * 1e9), s.traffic_bytes / (p.mem_gbps * 1e9));
}
}  // namespace

double ProcessorProfile::ClassRate::gbps_at(double bytes) const {
  const auto& v = gbps_by_bytes;
  if (v.empty()) return gbps;
  if (bytes <= v.front().first) return v.front().second;
  if (bytes >= v.back().first) return v.back().second;
  size_t i = 1;
  while (v[i].first < bytes) ++i;
  const double f = std::log(bytes / v[i - 1].first) / std::log(v[i].first / v[i - 1].first);
  return v[i - 1].second + f * (v[i].second - v[i - 1].second);
}

double operator_seconds(const OperatorCost& op, const ProcessorProfile& p, int batch) {
  const ProcessorProfile::ClassRate& r = p.operator_classes->rate(op.cls);
  const double h = p.batch_half;
  const double scale = (batch + h) / (1.0 + h);
  const double work =
      std::max(r.gflops > 0 ? op.flops / (r.gflops * 1e9) : 0.0, op.bytes / (r.gbps_at(op.bytes) * 1e9)) + op.rows * r.ns_per_row * 1e-9;
  return op.launches * p.operator_classes->launch_us * 1e-6 + work * scale;
}

double synth_stage_seconds(const StageSpec& stage, const ProcessorProfile& p, double efficiency, int batch) {
  if (p.operator_classes) {
    double t = p.stage_overhead_ms * 1e-3;
    for (const OperatorCost& op : stage.operators) t += operator_seconds(op, p, batch);
    return t;
  }
  const double h = p.batch_half;
  const double scale = (batch + h) / (1.0 + h);
  return p.stage_overhead_ms * 1e-3 + roofline_seconds_at_full_efficiency(stage, p) / efficiency * scale;
}

double calibrate_efficiency(const ModelSpec& spec, const ProcessorProfile& p, double whole_model_ms) {
  if (p.operator_classes)
    throw std::invalid_argument("processor " + p.name + " has operator classes: its rates are per class, it has no efficiency to calibrate");
  double work = 0;
  for (const auto& s : spec.stages) work += roofline_seconds_at_full_efficiency(s, p);
  const double budget = whole_model_ms * 1e-3 - spec.num_stages() * p.stage_overhead_ms * 1e-3;
  if (budget <= 0 || work <= 0)
    throw std::invalid_argument("cannot calibrate processor " + p.name + " to " + format_double(whole_model_ms) + " ms for " + spec.name +
                                ": stage overheads alone take " + format_double(spec.num_stages() * p.stage_overhead_ms) + " ms");
  return work / budget;
}

const ProcessorProfile* DeviceProfile::processor(const std::string& name) const {
  const std::string& want = name.empty() ? default_processor : name;
  for (const auto& p : processors)
    if (p.name == want) return &p;
  return nullptr;
}

double DeviceProfile::copy_seconds(double bytes) const {
  DeviceHardware h;  // its interconnect only: the one rule is DeviceHardware::copy_seconds
  h.zero_copy = interconnect.zero_copy;
  h.copy_bytes_per_s = interconnect.gbps * 1e9;
  h.copy_latency_s = interconnect.latency_us * 1e-6;
  return h.copy_seconds(bytes);
}

LutTable synthesise_lut(const ModelSpec& spec, const DeviceProfile& profile, const ProcessorProfile& p, double efficiency,
                        const std::string& efficiency_how, const SynthOptions& options) {
  if (!(efficiency > 0)) throw std::invalid_argument("efficiency must be > 0 for " + profile.type + "." + p.name);
  const int n = spec.num_stages();
  LutTable t({profile.type, spec.name, spec.dataset.name, profile.processors_named ? p.name : ""}, n, options.max_batch);
  std::vector<std::vector<double>> stage_s(n, std::vector<double>(options.max_batch + 1));
  for (int s = 0; s < n; ++s)
    for (int b = 1; b <= options.max_batch; ++b) stage_s[s][b] = synth_stage_seconds(spec.stages[s], p, efficiency, b);
  const double z95 = 1.6448536269514722;  // one-sided 95 % quantile of a normal law
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j <= n; ++j) {
      for (int b = 1; b <= options.max_batch; ++b) {
        double mean = 0;
        for (int s = i; s < j; ++s) mean += stage_s[s][b];
        LatencyStats st;
        st.mean_s = mean;
        st.p50_s = mean;
        st.std_s = p.latency_cv * mean;
        st.p95_s = mean * (1 + z95 * p.latency_cv);
        st.count = 0;
        t.set_latency(i, j, b, st);
      }
      t.set_peak_memory(i, j, spec.peak_memory_bytes(i, j));
    }
  }
  for (int k = 0; k <= n; ++k) t.bytes_per_split()[k] = spec.bytes_at_split(k);
  Provenance& pv = t.provenance();
  pv.kind = "synthesised";
  if (p.operator_classes) {
    pv.attributes["note"] = "SYNTHESISED by coinfer lut synth from per-operator-class rates; these are not measurements";
    pv.attributes["formula"] =
        "t_stage(b) = overhead + sum over the stage's operators o of class c: launches_o*launch + (max(F_o/gflops_c, B_o/gbps_c) + "
        "rows_o*ns_per_row_c) * (b+h)/(1+h); range = sum of its stages; p50 = mean, std = cv*mean, p95 = mean*(1+1.645*cv); count = 0 (see "
        "traces/README.md "
        "\"Operator classes\")";
    const ProcessorProfile::OperatorClasses& oc = *p.operator_classes;
    pv.attributes["operator_classes_source"] = oc.source;
    pv.attributes["launch_us"] = format_double(oc.launch_us);
    for (int c = 0; c < kOperatorClassCount; ++c) {
      const std::string name = kOperatorClassNames.name(static_cast<OperatorClass>(c));
      pv.attributes["class_" + name + "_gflops"] = format_double(oc.rates[c].gflops);
      pv.attributes["class_" + name + "_gbps"] = format_double(oc.rates[c].gbps);
      if (oc.rates[c].ns_per_row > 0) pv.attributes["class_" + name + "_ns_per_row"] = format_double(oc.rates[c].ns_per_row);
      std::string curve;
      for (const auto& [b, g] : oc.rates[c].gbps_by_bytes) curve += (curve.empty() ? "" : ", ") + format_double(b) + " B: " + format_double(g);
      if (!curve.empty()) pv.attributes["class_" + name + "_gbps_by_bytes"] = curve;
    }
  } else {
    pv.attributes["note"] = "SYNTHESISED by coinfer lut synth from a roofline formula; these are not measurements";
    pv.attributes["formula"] =
        "t_stage(b) = overhead + max(F/(eta*P), M/(eta*BW)) * (b+h)/(1+h); range = sum of its stages; "
        "p50 = mean, std = cv*mean, p95 = mean*(1+1.645*cv); count = 0 (see traces/README.md)";
  }
  pv.attributes["model_spec"] = spec.file;
  pv.attributes["role"] = profile.role;
  pv.attributes["device_description"] = profile.description;
  pv.attributes["processor"] = p.name;
  if (!p.kind.empty()) pv.attributes["processor_kind"] = p.kind;
  if (p.description != profile.description) pv.attributes["processor_description"] = p.description;
  pv.attributes["peak_gflops"] = format_double(p.peak_gflops);
  pv.attributes["mem_gbps"] = format_double(p.mem_gbps);
  pv.attributes["stage_overhead_ms"] = format_double(p.stage_overhead_ms);
  pv.attributes["batch_half"] = format_double(p.batch_half);
  pv.attributes["latency_cv"] = format_double(p.latency_cv);
  if (!p.operator_classes) {
    pv.attributes["efficiency"] = format_double(efficiency);
    pv.attributes["efficiency_source"] = efficiency_how;
  }
  return t;
}

}  // namespace coinfer
