#pragma once
// Operator classes: what an operator does to memory and arithmetic units, which decides how fast a
// processor runs it (models/README.md "Operator classes"). A stage of a model spec is a short list of
// operators, each with its class, its FLOPs, the bytes it reads and writes and how many kernels it
// launches; a processor profile may give a rate per class and a cost per launch
// (traces/README.md "Operator classes"). Value types only; nothing here blocks or allocates beyond
// the strings.
#include <string>

#include "core/enum_names.hpp"

namespace coinfer {

enum class OperatorClass {
  dense,        // matrix products: Linear layers, x x^T of KNN, dense masked aggregation (regular, compute-bound)
  irregular,    // gathers and scatters by index: index_select, gather, scatter_add/index_add (sparse aggregation)
  elementwise,  // one output per input element: activations, bias, products and sums of same-shaped tensors, fills
  reduction,    // reductions along an axis: max/mean pooling, softmax and its normalisation
  select,       // selection by comparison: top-k (KNN's neighbours), sorting
  movement,     // copies that only move data: concatenation, contiguous slices, layout changes
};

constexpr auto kOperatorClassNames = enum_names<OperatorClass>({"dense", "irregular", "elementwise", "reduction", "select", "movement"});
static_assert(kOperatorClassNames.names_each_of(OperatorClass::dense, OperatorClass::movement));
constexpr int kOperatorClassCount = 6;

// One operator of a stage, per input sample. `what` names it as the LibTorch implementation calls it
// (models/gnn_model.cpp), for reports.
struct OperatorCost {
  OperatorClass cls = OperatorClass::dense;
  std::string what;
  double flops = 0;  // multiply-add = 2; the stage's FLOPs are split among its operators (their sum)
  double bytes = 0;  // bytes the operator reads and writes, its tensors materialised (nothing fused)
  int launches = 1;  // kernels it launches (framework dispatches)
  double rows = 0;   // rows it reads or writes by index (gathers and scatters; 0 for the others)
};

}  // namespace coinfer
