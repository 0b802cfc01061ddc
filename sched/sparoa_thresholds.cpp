#include "sched/sparoa_thresholds.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/lut.hpp"

namespace coinfer {

RooflineProcessor RooflineProcessor::from_table(const LutTable& t) {
  const auto& a = t.provenance().attributes;
  const auto need = [&](const char* key) {
    auto it = a.find(key);
    if (t.provenance().kind != "synthesised" || it == a.end())
      throw std::invalid_argument("the table of " + t.key().to_string() + " is not a synthesised roofline (" +
                                  (t.provenance().kind != "synthesised" ? "provenance " + t.provenance().kind : std::string("no ") + key) +
                                  "): SparOA's threshold ground truth needs the formula's parameters");
    try {
      return std::stod(it->second);
    } catch (const std::exception&) {
      throw std::invalid_argument("the table of " + t.key().to_string() + ": provenance " + key + " '" + it->second + "' is not a number");
    }
  };
  RooflineProcessor p;
  p.peak_flops_per_s = need("peak_gflops") * 1e9;
  p.bytes_per_s = need("mem_gbps") * 1e9;
  p.overhead_s = need("stage_overhead_ms") * 1e-3;
  p.efficiency = need("efficiency");
  if (!(p.peak_flops_per_s > 0) || !(p.bytes_per_s > 0) || !(p.efficiency > 0))
    throw std::invalid_argument("the table of " + t.key().to_string() + ": a roofline parameter is not positive");
  return p;
}

double RooflineProcessor::seconds(double flops, double traffic_bytes) const {
  return overhead_s + std::max(flops / peak_flops_per_s, traffic_bytes / bytes_per_s) / efficiency;
}

double stage_intensity(const ModelSpec& m, int s) { return m.stages.at(static_cast<size_t>(s)).flops / std::max(1.0, m.bytes_at_split(s)); }

StageThresholds threshold_truth(const ModelSpec& m, int s, double rho, const RooflineProcessor& cpu, const RooflineProcessor& gpu) {
  const StageSpec& st = m.stages.at(static_cast<size_t>(s));
  StageThresholds out;
  // Sparsity: the least rho on the grid at which the CPU (computing F (1 - rho)) is at least as fast.
  out.cpu_never = true;
  const double t_gpu = gpu.seconds(st.flops, st.traffic_bytes);
  for (int i = 0; i <= 100; ++i) {
    const double r = i / 100.0;
    if (cpu.seconds(st.flops * (1 - r), st.traffic_bytes) <= t_gpu) {
      out.sparsity = r;
      out.cpu_never = false;
      break;
    }
  }
  // Intensity: the least I on the grid at which the GPU is faster, at the stage's own sparsity.
  const double in_bytes = std::max(1.0, m.bytes_at_split(s));
  for (int i = 0; i <= 700; ++i) {
    const double intensity = std::pow(10.0, -2 + i / 100.0);
    const double f = intensity * in_bytes;
    if (gpu.seconds(f, st.traffic_bytes) < cpu.seconds(f * (1 - rho), st.traffic_bytes)) {
      out.intensity = intensity;
      return out;
    }
  }
  out.intensity = 1e5;
  return out;
}

double scale_intensity(double flops_per_byte) { return std::log10(1 + std::max(0.0, flops_per_byte)) / 5; }
double unscale_intensity(double scaled) { return std::pow(10.0, 5 * scaled) - 1; }

const std::vector<std::string>& threshold_input_names() {
  static const std::vector<std::string> names = {"rho", "intensity", "in_width", "out_width", "in_bytes", "out_bytes", "flops", "traffic"};
  return names;
}

std::vector<float> threshold_inputs(const ModelSpec& m, int s, double rho) {
  const StageSpec& st = m.stages.at(static_cast<size_t>(s));
  return {static_cast<float>(rho),
          static_cast<float>(scale_intensity(stage_intensity(m, s))),
          static_cast<float>(std::log2(1 + st.in_width) / 12),
          static_cast<float>(std::log2(1 + st.out_width) / 12),
          static_cast<float>(std::log10(1 + m.bytes_at_split(s)) / 9),
          static_cast<float>(std::log10(1 + st.out_bytes) / 9),
          static_cast<float>(std::log10(1 + st.flops) / 12),
          static_cast<float>(std::log10(1 + st.traffic_bytes) / 10)};
}

bool thresholds_say_cpu(double intensity, const StageThresholds& t) { return intensity < t.intensity; }

}  // namespace coinfer
