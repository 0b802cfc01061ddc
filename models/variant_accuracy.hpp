#pragma once
// How far an execution variant's outputs are from the base model's (GraNNite's quality side of the
// trade, models/README.md "Variants"): both built from the same spec and seed (same weights), run on
// the same generated samples of the dataset.
#include <cstdint>
#include <string>

#include "core/model_spec.hpp"

namespace coinfer::models {

struct VariantAccuracy {
  double max_abs_error = 0;   // largest |variant - base| over every output entry of every sample
  double mean_abs_error = 0;  // mean |variant - base| over every output entry
  double output_scale = 0;    // mean |base| (to read the errors against)
  double top1_agreement = 1;  // share of rows (graphs or nodes) whose arg-max class is the same
  int samples = 0;
};

// `base` and `variant` are specs of one model and dataset (catalog().spec("gcn", d) and
// spec("gcn@int8", d)). Samples are generate_sample(dataset, seed, 1000 + i), i < samples (indices
// apart from the calibration samples). Throws std::invalid_argument when the two are not the same
// model and dataset or samples < 1.
VariantAccuracy measure_variant_accuracy(const ModelSpec& base, const ModelSpec& variant, int samples, std::uint64_t seed = 1);

}  // namespace coinfer::models
