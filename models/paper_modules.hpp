#pragma once
// The MEDN paper's nine modules (docs/PAPERS.md: the MEDN paper, Table 3 and Sec. 3.1):
// convolution, batch normalisation, max and average pooling, linear, and the composites conv+bn,
// conv+bn+relu, conv+relu, bn+relu; their sampling parameters drawn from the paper's ranges, their
// input features (sampling, measurable, inferable), and a built instance to time with LibTorch on this
// CPU. The paper's study ran on a Tesla P100; `coinfer medn sample` (cli/medn_main.cpp) measures here.
//
// Ranges (Sec. 2.1): batch N in [1, 64], input height = width L in {224, 112, 56, 32, 28, 27, 14, 13, 8,
// 7}, channels C_i, C_o in [3, 512], kernel K in {1, 3, 5, 7, 9}, stride S in {1, 2, 4}, all uniform.
// Not stated by the paper, chosen here: padding K / 2 (odd K: "same" at stride 1) for convolutions and
// pools; a linear module's widths C_i, C_o in the same [3, 512]; a convolution followed by batch
// normalisation has no bias. Each configuration is drawn until its work fits the caller's bounds
// (FLOPs, bytes): the full ranges reach 10^12 FLOPs, hours on a 2-core CPU (RejectionCounts say how
// many were redrawn).
//
// Features per module (Table 3): the sampling parameters, then the measurable M (available memory,
// bytes) and U (utilisation of the CPU by other work, in [0, 1]), then the inferable N_d (input
// elements, N x C_i x L x L; N x C_i for linear) and N_m (weight parameters; not for pools).
// Engine-free; Torch stays inside the .cpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/random_stream.hpp"

namespace coinfer::models {

enum class PaperModule { avgpool, bn, bn_relu, conv_bn, conv_bn_relu, conv, conv_relu, linear, maxpool };

const std::vector<PaperModule>& paper_modules();  // Table 5's order
const char* paper_module_name(PaperModule m);     // "avgpool", "bn", "bn+relu", "conv+bn", "conv+bn+relu", "conv", "conv+relu", "linear", "maxpool"
std::optional<PaperModule> paper_module_named(const std::string& name);
bool has_convolution(PaperModule m);
bool has_batch_norm(PaperModule m);
bool has_relu(PaperModule m);
bool is_pool(PaperModule m);

// One configuration: the sampling parameters a module has (the others stay 0).
struct PaperModuleConfig {
  PaperModule module = PaperModule::conv;
  int n = 0, l = 0, c_in = 0, c_out = 0, k = 0, s = 0;
};

// Output height = width: (L + 2 (K / 2) - K) / S + 1 for convolutions and pools, L otherwise.
int paper_module_output_size(const PaperModuleConfig& c);
// Floating-point operations of one forward pass (a multiply-add is 2; pools K^2 per output element;
// batch normalisation 2 per element, ReLU 1).
double paper_module_flops(const PaperModuleConfig& c);
// float32 bytes of input, output and weights.
double paper_module_bytes(const PaperModuleConfig& c);
// Inferable parameters.
double paper_module_input_elements(const PaperModuleConfig& c);  // N_d
double paper_module_weights(const PaperModuleConfig& c);         // N_m

struct FeatureLayout {
  std::vector<std::string> names, classes;  // classes: "sampling", "measurable", "inferable"
};
FeatureLayout paper_module_features(PaperModule m);
// Feature values in paper_module_features(c.module)'s order.
std::vector<double> paper_module_feature_values(const PaperModuleConfig& c, double available_memory_bytes, double utilisation);

struct PaperModuleBounds {
  double max_flops = 3e8;             // per forward pass
  double max_bytes = 64 * 1048576.0;  // input + output + weights
};
struct RejectionCounts {
  long long drawn = 0, rejected = 0;
};
// A configuration drawn uniformly from the paper's ranges, redrawn until within `bounds`. Throws
// std::runtime_error when 100,000 draws in a row fall outside (bounds too tight for the module).
PaperModuleConfig sample_paper_module(PaperModule m, RandomStream& rng, const PaperModuleBounds& bounds, RejectionCounts* counts = nullptr);

// A module built with its input (random values), ready to time. Construction allocates (bytes as
// paper_module_bytes); forward() runs one inference pass in eval mode without autograd and returns its
// wall time in seconds (blocks for that long). Not thread-safe.
class PaperModuleInstance {
 public:
  explicit PaperModuleInstance(const PaperModuleConfig& c);
  ~PaperModuleInstance();
  double forward();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace coinfer::models
