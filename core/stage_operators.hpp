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

// The graph preprocessing a graph op keeps per graph (GraNNite's Fig. 3): gcn's self loops, degrees
// and normalisation (with `dense`, the N x N normalised adjacency built from them), dense sage's
// row-normalised adjacency, dense gat's 0/1 mask with self loops. Empty for every other op and for
// sparse sage and gat (they already make their loops and degrees in every run). Per input sample with
// N nodes and E directed edges. A model with the `uncached` variant runs these in every stage of every
// run: stage_operators lists them and derive_costs adds their FLOPs and bytes to the stage.
std::vector<OperatorCost> graph_preprocessing_operators(const std::string& op, bool dense, double N, double E);

// An attention stage on `tokens` tokens as it runs (the cost formulas, the operators and LibTorch read
// this one rule): with `window` > 0 the tokens are a side x side grid cut into window x window windows,
// rolled by `shift` first. As the original Swin code has it, a window no smaller than the grid is the grid,
// unshifted (torchvision pads the grid to the window instead; the two agree on Swin-T at 224 x 224).
// Unchecked: derive_costs refuses a grid that is not square or does not split into whole windows.
struct AttentionWindows {
  int side = 0;                                                 // tokens on the grid's side
  int window = 0;                                               // tokens on a window's side; 0: every token attends every token
  int shift = 0;                                                // tokens the grid is rolled by before the windows; 0: unshifted
  bool several() const { return window > 0 && window < side; }  // the grid holds more than one window
};
AttentionWindows attention_windows(const StageSpec& s, double tokens);

}  // namespace coinfer
