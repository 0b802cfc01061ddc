#pragma once
// Input features of a per-module latency regressor (the MEDN paper, 002_cdfaf0684215d5e8.txt, Table 3),
// for one stage ("module") of a model spec at one batch size on one kind of hardware:
//   sampling parameters   what builds the module and its input: batch, nodes, edges, in/out width, k, heads
//   measurable parameters what the hardware offers it: cpu cores it may use (a cap, or the machine's
//                         cores) and intra-op threads
//   inferable parameters  computed from the others by model_cost.cpp: FLOPs, weight bytes, input,
//                         output, memory-traffic and workspace bytes (per batch, not per sample)
// Engine-free; no Torch. The regressors (models/latency_regressor.hpp) learn one model per op.
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/model_spec.hpp"

namespace coinfer {

// The hardware side of the features. cpu_cores: the cores a run may use (a cgroup cap such as 0.3, or
// the machine's core count when uncapped); threads: LibTorch intra-op threads.
struct MeasurableParams {
  double cpu_cores = 1;
  double threads = 1;
};

// Read from a measured LUT's provenance (cpu_cap_cores, cores, threads as coinfer profile writes them;
// with background_load L, as `coinfer profile --background-load` writes it, cpu_cores = cap x (1 - L):
// the utilisation by other work enters as the cores left to the model).
// Throws std::invalid_argument naming the attribute when a value is missing or not a number.
MeasurableParams measurable_params_of(const Provenance& p);

// The feature names, in the order module_features() returns values (stored with sample sets and models).
const std::vector<std::string>& module_feature_names();

// Features of stage `stage` of `spec` (costs derived) at `batch` samples under `hw`.
// Throws std::out_of_range for a stage outside the spec, std::invalid_argument for batch < 1.
std::vector<double> module_features(const ModelSpec& spec, int stage, int batch, const MeasurableParams& hw);

// One measured module latency: stage `stage_name` (op `op`) of `model`, on `device_type`, with its
// features (module_feature_names() order) and the latency statistics of its timed runs.
struct ModuleSample {
  std::string op, device_type, model, stage_name;
  std::vector<double> features;
  double mean_s = 0, p50_s = 0;
  long long count = 0;
};

// A sample set with where its numbers came from (io/module_samples.hpp reads and writes them).
// A set of the MEDN study's own modules (models/paper_modules.hpp) declares its features: names of
// its choosing with a class each ("sampling", "measurable", "inferable"); a set of GNN operators
// leaves feature_classes empty and has module_feature_names().
struct ModuleSampleSet {
  std::vector<std::string> feature_names = module_feature_names();
  std::vector<std::string> feature_classes;
  std::vector<ModuleSample> samples;
  Provenance provenance;
};

// The single-stage entries [s, s+1) of a measured or imported LUT table as samples: every batch size,
// estimated entries excluded (a regressor never learns from its own output). `spec` is the table's
// model on its dataset. A synthesised table gives none (its numbers are a formula, not a measurement).
// Throws std::invalid_argument when the spec's stage count differs from the table's, or when the
// table's provenance lacks the measurable parameters (measurable_params_of).
std::vector<ModuleSample> module_samples_from_lut(const LutTable& table, const ModelSpec& spec);

}  // namespace coinfer
