#pragma once
// A stage's operators with their classes (core/operator_class.hpp), derived from its op, widths and
// the model's variant as models/gnn_model.cpp runs them (models/README.md "Operator classes").
// derive_costs fills StageSpec::operators with it; pure, no allocation beyond the returned list.
#include <vector>

#include "core/model_spec.hpp"
#include "core/operator_class.hpp"

namespace coinfer {

// The operators of stage `index` of `m`, per input sample: their FLOPs add up to the stage's `flops`.
// Needs the stage's derived widths, FLOPs and output level (derive_costs sets them first). INT8
// variants are costed as float32 tensors (their smaller bytes are not in this breakdown).
std::vector<OperatorCost> stage_operators(const ModelSpec& m, int index);

}  // namespace coinfer
