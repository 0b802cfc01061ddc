#pragma once
// SparOA's thresholds (docs/PAPERS.md: SparOA, Sec. 3), torch-free: per operator
// (our stage) on a board, the sparsity above which its CPU runs it faster than its GPU (or NPU) and the
// computational intensity above which the GPU does; the ground truth found by SparOA's exhaustive grid
// search (Sec. 3.3) in simulation, and the predictor's inputs. sched/threshold_predictor.hpp learns them.
//
// The simulation: a stage's time on a processor is the roofline formula of its synthesised table
// (core/lut_synth.hpp: overhead + max(F / (eta P), M / (eta BW)), parameters read back from the
// table's provenance), so ground truth exists only for boards whose tables are synthesised. Our
// LibTorch kernels are dense and skip no zeros; SparOA's premise (Sec. 2: sparse activations let a
// CPU kernel skip work, a GPU's dense kernel does not) enters as a stated model: at sparsity rho the CPU
// computes F (1 - rho) FLOPs, the GPU F. Grids: sparsity 0, 0.01, ..., 1; intensity (FLOPs per input
// byte) 100 log-spaced points per decade over [1e-2, 1e5], the stage's input bytes and memory traffic
// held, its FLOPs set to I x input bytes.
#include <string>
#include <vector>

#include "core/model_spec.hpp"

namespace coinfer {

class LutTable;

// The roofline of one processor as its synthesised table states it.
struct RooflineProcessor {
  double peak_flops_per_s = 0, bytes_per_s = 0, overhead_s = 0, efficiency = 1;
  // Throws std::invalid_argument naming the table and the attribute when it is not synthesised or
  // lacks one (peak_gflops, mem_gbps, stage_overhead_ms, efficiency).
  static RooflineProcessor from_table(const LutTable& t);
  // One sample's seconds for `flops` and `traffic_bytes` (batch 1).
  double seconds(double flops, double traffic_bytes) const;
};

struct StageThresholds {
  double sparsity = 1;     // the least rho on the grid at which the CPU is at least as fast (1: only when all zeros, or never)
  double intensity = 1e5;  // FLOPs per input byte: the least on the grid at which the GPU is faster (1e5: never on the grid)
  bool cpu_never = false;  // the CPU is slower even at rho = 1
};

// Ground truth for stage `s` of `m` at sparsity `rho`.
StageThresholds threshold_truth(const ModelSpec& m, int s, double rho, const RooflineProcessor& cpu, const RooflineProcessor& gpu);

// The predictor's scaled targets and back: sparsity as is, intensity as log10(1 + I) / 5 (1 at 1e5).
double scale_intensity(double flops_per_byte);
double unscale_intensity(double scaled);

// The stage's computational intensity: FLOPs per byte of its input (ModelSpec::bytes_at_split).
double stage_intensity(const ModelSpec& m, int s);

// The predictor's inputs for stage `s` at sparsity `rho` (SparOA: sparsity, computational intensity,
// channels, height, width; ours: rho, intensity, input and output widths, input and output bytes, FLOPs,
// memory traffic), each scaled to about [0, 1]. threshold_input_names() gives the order.
const std::vector<std::string>& threshold_input_names();
std::vector<float> threshold_inputs(const ModelSpec& m, int s, double rho);

// A rule from thresholds alone (SparOA "w/o RL", Fig. 9's "+ Predictor"): the stage to the CPU when its
// intensity is below the intensity threshold, else to the GPU. The intensity threshold is the one at
// the stage's own sparsity, so it alone says which processor wins under the truth; the sparsity
// threshold (the sparsity at which the CPU would win at the stage's intensity) adds nothing to that
// decision, and a predicted one just above a dense stage's 0 would wrongly keep it from the CPU. Both
// enter SAC's state.
bool thresholds_say_cpu(double intensity, const StageThresholds& t);

}  // namespace coinfer
