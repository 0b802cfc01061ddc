// Op cost formulas. Every formula is documented in models/README.md; keep the two in step.
// N = nodes per sample, E = directed edges per sample, k = neighbours, in/out = widths, 4 bytes per float.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/model_spec.hpp"
#include "core/stage_operators.hpp"

namespace coinfer {
namespace {

constexpr double kFloat = 4;  // float32
constexpr double kIndex = 8;  // int64 indices (PyG edge_index, KNN indices)

[[noreturn]] void bad(const StageSpec& s, const std::string& why) { throw std::invalid_argument("stage '" + s.name + "' (op " + s.op + "): " + why); }

double input_width(const ModelSpec& m, const StageSpec& s) {
  // The feature width a stage reads: the sum over its feature inputs (the knn graph carries none); a
  // residual sum (add) reads equal widths and keeps one.
  double w = 0;
  for (int p : s.inputs) {
    const double one = p < 0 ? m.dataset.features : m.stages[p].out_width;
    if (s.op == "add" && w > 0 && one != w)
      bad(s, "sums inputs of different widths (" + std::to_string(static_cast<int>(w)) + " and " + std::to_string(static_cast<int>(one)) + ")");
    w = s.op == "add" ? one : w + one;
  }
  return w;
}

// The side of a square feature map of `rows` pixels (images): refused unless a whole square.
double side_of(const StageSpec& s, double rows) {
  const double side = std::round(std::sqrt(rows));
  if (side < 1 || side * side != rows) bad(s, "needs a square feature map (its input has " + std::to_string(static_cast<long long>(rows)) + " rows)");
  return side;
}

// A convolution's or a pooling window's output side: padding kernel / 2 on each side (PyTorch's
// floor((side + 2 p - k) / stride) + 1).
double window_side(const StageSpec& s, double side) {
  if (s.kernel < 1 || s.kernel > 15) bad(s, "needs a kernel of 1..15");
  if (s.stride < 1 || s.stride > 8) bad(s, "needs a stride of 1..8");
  const double out = std::floor((side + 2 * (s.kernel / 2) - s.kernel) / s.stride) + 1;
  if (out < 1) bad(s, "leaves no pixel (a " + std::to_string(static_cast<long long>(side)) + "-pixel side)");
  return out;
}

// A windowed attention's windows on its T tokens (core/stage_operators.hpp attention_windows), refused
// unless the tokens are a square grid that splits into whole windows (no padding) and the shift is
// within a window.
AttentionWindows checked_windows(const StageSpec& s, double T) {
  side_of(s, T);
  if (s.window < 1 || s.window > 64) bad(s, "needs a window of 1..64 tokens");
  if (s.shift < 0 || s.shift >= s.window) bad(s, "needs a shift of 0..window - 1");
  const AttentionWindows a = attention_windows(s, T);
  if (a.side % a.window != 0) bad(s, "its window " + std::to_string(a.window) + " must divide the side of its tokens " + std::to_string(a.side));
  return a;
}

// Whether stage `s` takes the normalised adjacency a graph_prep stage makes (GrAd) as an input.
bool has_prep_input(const ModelSpec& m, const StageSpec& s) {
  for (int p : s.inputs)
    if (p >= 0 && m.stages[p].op == "graph_prep") return true;
  return false;
}

// One entry of a sparse matrix as LibTorch keeps it (COO): two int64 indices and a float32 value.
constexpr double kSparseEntry = 2 * kIndex + kFloat;

// One sample's graph as the formulas see it, and the variant's byte sizes.
struct Shape {
  const ModelVariant& v;
  double N, E;       // nodes (the node capacity where set) and directed edges
  double act, mask;  // bytes of one activation crossing a split and of one dense-mask entry
  double P;          // feature chunks (feature decomposition)
};

// What an op costs besides its FLOPs (set on `s`): its output width and its weight, workspace and
// message bytes. May set `s`'s widths, pooling mode, output level and graph need.
struct OpCosts {
  double out = 0, weights = 0, workspace = 0, message = 0;
};

// FLOPs of a conv's or add's activation per output element: relu and relu6 (a clamp) 1; hardswish,
// x * relu6(x + 3) / 6, 4 (an add, the clamp, a product, a division).
double activation_flops(const std::string& activation) {
  if (activation.empty()) return 0;
  return activation == "hardswish" ? 4 : 1;
}

// A transformer stage on T = `rows` tokens of C = `in` features (models/README.md "Transformers"): sets
// its FLOPs, output rows and width; returns its weight bytes. LayerNorm counts 8 FLOPs an element (the
// mean 1, the variance 3, normalising 2, the affine 2), GELU 5 (a scale, erf, an add, two products), a
// softmax 5 a score (max, subtract, exp, sum, divide), a Linear 2 rows in out (its bias not counted, as
// every Linear here).
double transformer_costs(StageSpec& s, double C, double T) {
  constexpr double kLayerNorm = 8, kGelu = 5, kSoftmax = 5;
  if (s.op == "patch_embed") {
    // A conv with bias, kernel = stride = the patch side, no padding: (side / patch)^2 tokens of `out`
    // features; ViT's class token prepended and a learned position embedding added to every token.
    if (s.out_width <= 0) bad(s, "needs out > 0");
    if (s.kernel < 1 || s.kernel > 64) bad(s, "needs a patch side (kernel) of 1..64");
    const double side = side_of(s, T);
    if (std::fmod(side, s.kernel) != 0)
      bad(s, "its patch side " + std::to_string(s.kernel) + " must divide the image's side " + std::to_string(static_cast<long long>(side)));
    const double patches = (side / s.kernel) * (side / s.kernel), D = s.out_width, k2 = static_cast<double>(s.kernel) * s.kernel;
    s.out_rows = patches + (s.class_token ? 1 : 0);
    s.flops = 2 * patches * D * C * k2 + patches * D + (s.class_token ? s.out_rows * D : 0);
    return (D * C * k2 + D + (s.class_token ? D + s.out_rows * D : 0)) * kFloat;
  }
  if (s.op == "layernorm") {
    s.out_width = static_cast<int>(C);
    s.out_rows = T;
    s.flops = kLayerNorm * T * C;
    return 2 * C * kFloat;
  }
  if (s.op == "mlp") {
    // Linear C -> hidden, GELU, Linear hidden -> C (both with biases).
    if (s.hidden <= 0) bad(s, "needs hidden > 0 (its hidden width)");
    const double H = s.hidden;
    s.out_width = static_cast<int>(C);
    s.out_rows = T;
    s.flops = 2 * T * C * H + kGelu * T * H + 2 * T * H * C;
    return (C * H + H + H * C + C) * kFloat;
  }
  if (s.op == "patch_merge") {
    // Swin's patch merging: each 2 x 2 block of tokens concatenated (4C), LayerNorm, Linear 4C -> out
    // without bias.
    if (s.out_width <= 0) bad(s, "needs out > 0");
    const double side = side_of(s, T);
    if (std::fmod(side, 2) != 0) bad(s, "needs an even side of tokens (its input has " + std::to_string(static_cast<long long>(side)) + ")");
    s.out_rows = T / 4;
    s.flops = kLayerNorm * T * C + 2 * (T / 4) * (4 * C) * s.out_width;
    return (2 * 4 * C + 4 * C * s.out_width) * kFloat;
  }
  // attention: multi-head self-attention, every token attending every token (ViT), or within square
  // windows of `window` x `window` tokens, shifted by `shift` (Swin). Q, K, V by one Linear C -> 3C, the
  // queries scaled by 1 / sqrt(C / heads), scores Q K^T (2 T W C over the heads, W = the tokens a token
  // attends: T, or window^2), Swin's relative position bias added (and its mask where shifted: h T W
  // each), the softmax, the scores times V (2 T W C), the heads joined and projected C -> C.
  if (s.heads <= 0 || static_cast<int>(C) % s.heads != 0) bad(s, "its width " + std::to_string(static_cast<int>(C)) + " must be a multiple of heads");
  s.out_width = static_cast<int>(C);
  s.out_rows = T;
  const double h = s.heads;
  double W = T;  // the tokens each token attends
  double extra_weights = 0;
  double adds = 0;  // bias and mask additions per score
  if (s.window > 0) {
    const AttentionWindows a = checked_windows(s, T);
    W = static_cast<double>(a.window) * a.window;
    extra_weights = (2.0 * a.window - 1) * (2.0 * a.window - 1) * h;  // the relative position bias table
    adds = 1 + (a.shift > 0 ? 1 : 0);
  } else if (s.shift != 0) {
    bad(s, "a shift needs windows (window > 0)");
  }
  s.flops = 2 * T * C * 3 * C + T * C + 2 * T * W * C + (adds + kSoftmax) * h * T * W + 2 * T * W * C + 2 * T * C * C;
  return (3 * C * C + 3 * C + C * C + C + extra_weights) * kFloat;
}

OpCosts op_costs(const ModelSpec& m, StageSpec& s, const Shape& g, double in, double rows) {
  const ModelVariant& v = g.v;
  const double N = g.N, E = g.E, mask = g.mask, P = g.P;
  double out = s.out_width;
  double weights = 0, workspace = 0, message = 0;
  if (s.op == "edgeconv") {
    // Dynamic KNN on the input features (N^2 distances of 3*in FLOPs), an MLP on edge features
    // [x_i, x_j - x_i] (2*in -> out) for N*k edges, max over the k neighbours.
    if (s.k <= 0) bad(s, "needs k > 0");
    s.flops = N * N * 3 * in + N * s.k * 2 * (2 * in) * out + N * s.k * out;
    weights = (2 * in * out + out) * kFloat;
    workspace = N * N * kFloat + N * s.k * (2 * in + out) * kFloat;
  } else if (s.op == "knn") {
    // Builds the KNN graph from the input features: N^2 distances; output = N*k int64 indices.
    if (s.k <= 0) bad(s, "needs k > 0");
    out = 0;
    s.flops = N * N * 3 * in;
    workspace = N * N * kFloat;
  } else if (s.op == "aggregate") {
    // Max over k neighbours of the feature input (the knn stage supplies the graph): N*k*in compares.
    if (s.k <= 0) bad(s, "needs k > 0");
    double feat = 0;
    bool has_knn = false;
    for (int p : s.inputs) {
      if (p >= 0 && m.stages[p].op == "knn")
        has_knn = true;
      else
        feat += p < 0 ? m.dataset.features : m.stages[p].out_width;
    }
    if (!has_knn) bad(s, "needs a knn stage among its inputs");
    s.in_width = static_cast<int>(feat);
    out = s.out_width = s.in_width;
    s.flops = N * s.k * feat;
    workspace = N * s.k * feat * kFloat;
  } else if (s.op == "combine" || s.op == "linear" || s.op == "fc") {
    // Dense layer applied to every row: rows * in * out multiply-adds.
    if (out <= 0) bad(s, "needs out > 0");
    s.flops = rows * in * out * 2;
    weights = (in * out + out) * kFloat;
  } else if (s.op == "pool") {
    // Global pooling over the N rows; "max+mean" concatenates both (out = 2*in); "class_token" takes a
    // token sequence's first row (ViT's class token: no arithmetic).
    if (s.pool_mode.empty()) s.pool_mode = "max+mean";
    int factor = s.pool_mode == "max+mean" ? 2 : 1;
    if (s.pool_mode != "max" && s.pool_mode != "mean" && s.pool_mode != "max+mean" && s.pool_mode != "class_token")
      bad(s, "pool mode must be max, mean, max+mean or class_token");
    out = s.out_width = factor * s.in_width;
    s.flops = s.pool_mode == "class_token" ? 0 : rows * in * factor;  // over its input's rows: the nodes, a feature map's pixels, tokens
    s.out_level = TensorLevel::graph;
  } else if (s.op == "graph_prep") {
    // GrAd + GraphSplit: gcn's normalised N x N adjacency (self loops, degrees, weights put into zeros)
    // made by a stage of its own in every run; the gcn stages that take it as an input aggregate by its
    // product. Its FLOPs are its operators' (core/stage_operators.cpp); its output is the float32 matrix.
    s.needs_graph = true;
    out = s.out_width = 0;
    s.flops = 0;
    for (const auto& op : graph_preprocessing_operators("gcn", true, N, E)) s.flops += op.flops;
    workspace = (E + N) * (2 * kIndex + kFloat);  // the edges with their loops and a weight each
  } else if (s.op == "gcn" && has_prep_input(m, s)) {
    // Aggregation by the product with the graph_prep stage's matrix (an input, not a workspace). GraSp:
    // only its E + N non-zeros (the edges and self loops) are multiplied, from a sparse copy made in
    // every run (LibTorch's COO: two int64 indices and a float each).
    s.needs_graph = true;
    s.flops = N * in * out * 2 + (v.grasp ? (E + N) * out * 2 : N * N * out * 2);
    weights = (in * out + out) * kFloat;
    if (v.grasp) message = (E + N) * kSparseEntry;
  } else if (s.op == "gcn") {
    // Transform (N*in*out MACs) then normalised sum over E edges (E*out MACs); normalisation cached
    // (made per run with `uncached`: derive_costs adds it).
    // Dense mask (StaGr): the sum is one N x N by N x out product.
    s.needs_graph = true;
    // GraSp: the mask's E + N non-zeros only, multiplied from its sparse copy (per graph; with `uncached`
    // made in every run from the dense matrix, both alive then).
    s.flops = N * in * out * 2 + (v.dense() ? (v.grasp ? (E + N) : N * N) * out * 2 : E * out * 2);
    weights = (in * out + out) * kFloat;
    workspace = v.dense() ? N * N * mask : E * kFloat;  // cached edge weights (PreG/CacheG) or the mask
    if (v.dense() && v.grasp) workspace = (E + N) * kSparseEntry + (v.uncached() ? N * N * mask : 0);
    if (v.normalisation == ModelVariant::Normalisation::symmetric) workspace /= 2;  // SymG: one triangle
    // The transformed features gathered per edge, self loops included (E + N rows), and their weighted
    // copy, both alive while it is made (models/gnn_model.cpp aggregate_messages), one slice of P at once.
    // With P > 1 (models/aggregation_schemes.cpp sliced_aggregate) also the slice made contiguous and
    // its sums before they are copied into the result: 2 N out / P floats.
    if (!v.dense()) message = 2 * (E + N) * out * kFloat / P + (P > 1 ? 2 * N * out * kFloat / P : 0);
  } else if (s.op == "gat" && v.dense()) {
    // Dense masked attention: transform, one score per node and head (2*N*out), an N x N logit map per
    // head (broadcast add, LeakyReLU, mask, softmax: ~6 FLOPs per entry), then N x N by N x out/heads
    // per head.
    s.needs_graph = true;
    if (s.heads <= 0 || s.out_width % s.heads != 0) bad(s, "out width must be a multiple of heads");
    // GrAx2: the pairwise add and LeakyReLU (2 per logit) become one LeakyReLU per source node and head.
    const double map_flops = v.grax2 ? s.heads * N * N * 4 + s.heads * N : s.heads * N * N * 6;
    s.flops = N * in * out * 2 + 2 * N * out + map_flops + N * N * out * 2;
    weights = (in * out + 2 * out + out) * kFloat;
    workspace = N * N * mask + s.heads * N * N * kFloat;
  } else if (s.op == "gat") {
    // Per head: transform N*in*(out/heads) MACs; attention logits 2*(out/heads) per edge; softmax
    // (~5 FLOPs per edge); weighted sum E*(out/heads) MACs.
    s.needs_graph = true;
    if (s.heads <= 0 || s.out_width % s.heads != 0) bad(s, "out width must be a multiple of heads");
    double per_head = out / s.heads;
    s.flops = N * in * out * 2 + s.heads * (E * (2 * per_head + 5) + E * per_head * 2);
    weights = (in * out + 2 * out + out) * kFloat;
    workspace = E * s.heads * 2 * kFloat;
    // All heads' messages at once: the gathered rows (self loops included, E + N) and their
    // attention-weighted copy, alive together; with P > 1 head by head, each in P slices (models/gnn_model.cpp).
    message = P == 1 ? 2 * (E + N) * out * kFloat : 2 * (E + N) * per_head * kFloat / P + 2 * N * per_head * kFloat / P;
  } else if (s.op == "sage") {
    // Mean of neighbours (E*in adds) then two dense maps (self and neighbour): 2*N*in*out MACs.
    s.needs_graph = true;
    // GraSp: the mask's E non-zeros only, from its sparse copy.
    s.flops = (v.dense() ? (v.grasp ? E : N * N) * in * 2 : E * in) + 2 * N * in * out * 2;
    weights = (2 * in * out + out) * kFloat;
    workspace = N * in * kFloat + (v.dense() ? N * N * mask : 0);  // the row-normalised mask
    if (v.dense() && v.grasp) workspace = N * in * kFloat + E * kSparseEntry + (v.uncached() ? N * N * mask : 0);
    // The neighbours' input features gathered per edge (+ with P > 1 the contiguous slice and its sums).
    if (!v.dense()) message = E * in * kFloat / P + (P > 1 ? 2 * N * in * kFloat / P : 0);
  } else if (s.op == "conv") {
    // Convolution (no bias) + BatchNorm (scale and shift per channel: 2 FLOPs an output) + the
    // activation (1 an output) on a side x side map: out_rows x out x (in / groups) x kernel^2 MACs.
    if (m.dataset.kind != "image") bad(s, "needs an image dataset");
    if (out <= 0) bad(s, "needs out > 0");
    if (s.groups < 1 || static_cast<int>(in) % s.groups != 0 || s.out_width % s.groups != 0)
      bad(s, "groups must divide both widths (in " + std::to_string(static_cast<int>(in)) + ", out " + std::to_string(s.out_width) + ")");
    const double side = window_side(s, side_of(s, rows));
    s.out_rows = side * side;
    const double k2 = static_cast<double>(s.kernel) * s.kernel;
    s.flops = 2 * s.out_rows * out * (in / s.groups) * k2 + 2 * s.out_rows * out + activation_flops(s.activation) * s.out_rows * out;
    weights = (out * (in / s.groups) * k2 + 4 * out) * kFloat;  // the kernel; BatchNorm's weight, bias, mean and variance
  } else if (s.op == "maxpool") {
    // Max over each kernel x kernel window: a compare per window element.
    if (m.dataset.kind != "image") bad(s, "needs an image dataset");
    out = s.out_width = static_cast<int>(in);
    const double side = window_side(s, side_of(s, rows));
    s.out_rows = side * side;
    s.flops = s.out_rows * in * s.kernel * s.kernel;
  } else if (s.op == "add") {
    // Residual sum of its inputs (equal shapes), then its activation.
    if (s.inputs.size() < 2) bad(s, "sums two or more inputs");
    out = s.out_width = static_cast<int>(in);
    s.out_rows = rows;
    s.flops = rows * in * (static_cast<double>(s.inputs.size()) - 1) + activation_flops(s.activation) * rows * in;
  } else if (s.op == "se") {
    // Squeeze and excitation (Hu et al. 2018, as MobileNet-v3 has it): the mean of each channel over
    // the pixels (rows x in adds), a 1x1 conv with bias to `squeeze` channels (2 in sq + sq) and its
    // ReLU (sq), a 1x1 conv with bias back (2 sq in + in), hardsigmoid, relu6(x + 3) / 6 (3 an
    // element), then every pixel's channels scaled (rows x in products). Its output has its input's shape.
    if (m.dataset.kind != "image") bad(s, "needs an image dataset");
    if (s.squeeze <= 0) bad(s, "needs squeeze > 0 (its bottleneck's channels)");
    const double sq = s.squeeze;
    out = s.out_width = static_cast<int>(in);
    s.out_rows = rows;
    s.flops = rows * in + (2 * in * sq + sq) + sq + (2 * sq * in + in) + 3 * in + rows * in;
    weights = (in * sq + sq + sq * in + in) * kFloat;
  } else if (s.op == "patch_embed" || s.op == "layernorm" || s.op == "attention" || s.op == "mlp" || s.op == "patch_merge") {
    if (m.dataset.kind != "image") bad(s, "needs an image dataset");
    weights = transformer_costs(s, in, rows);
    out = s.out_width;
  } else {
    bad(s, "unknown op; allowed: edgeconv, knn, aggregate, combine, linear, fc, pool, gcn, gat, sage, graph_prep, conv, maxpool, add, se, " +
               std::string("patch_embed, layernorm, attention, mlp, patch_merge"));
  }
  return {out, weights, workspace, message};
}

// What the stage allocates above its live inputs at its peak (its memory_bytes).
double peak_memory(const StageSpec& s, const Shape& g, double in, double out, double rows, double workspace, double message, bool result,
                   double out_rows) {
  const ModelVariant& v = g.v;
  const double N = g.N, E = g.E, P = g.P;
  // What the stage allocates above its live inputs at its peak, phase by phase as models/gnn_model.cpp
  // makes its tensors (a C++ expression's temporaries live to the end of its statement); memory only,
  // not the roofline's traffic. bench/memory_formula.py compares it with LibTorch's allocator.
  double mem = s.out_bytes + workspace + message;  // the general rule (sage, dense variants)
  const double act_out = out_rows * out * kFloat;  // one float tensor of the output's shape
  if (s.op == "knn") {
    // sq - 2 x x^T + sq^T: four N x N temporaries; topk's values beside its indices (the output).
    mem = 4 * N * N * kFloat + N * s.k * kFloat + s.out_bytes;
  } else if (s.op == "edgeconv") {
    const double K = N * s.k;                                     // edges
    mem = std::max({4 * N * N * kFloat + K * (kFloat + kIndex),   // its KNN
                    K * (4 * in + out) * kFloat,                  // neighbours, differences, their concatenation, the edge MLP
                    K * (in + 2 * out) * kFloat + s.out_bytes});  // neighbours, MLP output and its LeakyReLU, the max over k
  } else if (s.op == "aggregate") {
    mem = N * s.k * s.in_width * kFloat + s.out_bytes;  // the gathered neighbours, then their max
  } else if (s.op == "combine" || s.op == "linear" || s.op == "fc") {
    const bool activation = !(s.op == "fc" && result);
    mem = (activation ? 2 : 1) * act_out + (s.inputs.size() > 1 ? rows * in * kFloat : 0);  // pre-activation; concatenated inputs
  } else if (s.op == "pool") {
    mem = (s.pool_mode == "max+mean" ? 2 : 1) * s.out_bytes;  // both halves, then their concatenation
  } else if (s.op == "conv") {
    mem = 2 * act_out;  // the convolution's output and BatchNorm's beside it (the activation in place)
  } else if (s.op == "maxpool" || s.op == "add") {
    mem = act_out;  // its output (add's activation in place)
  } else if (s.op == "se") {
    mem = act_out + (2 * in + 2 * s.squeeze) * kFloat;  // the scaled map; the means, both convs' outputs and the scales
  } else if (s.op == "patch_embed") {
    // The conv's output beside the tokens made from it (the class token's concatenation, or a contiguous copy).
    mem = act_out + (out_rows - (s.class_token ? 1 : 0)) * out * kFloat;
  } else if (s.op == "layernorm") {
    mem = act_out + 2 * rows * kFloat;  // its output; each token's mean and reciprocal deviation
  } else if (s.op == "mlp") {
    mem = 2 * rows * s.hidden * kFloat;  // the hidden layer beside its GELU (then the output beside the GELU, smaller)
  } else if (s.op == "patch_merge") {
    mem = 2 * rows * in * kFloat;  // the concatenated 2 x 2 blocks beside their LayerNorm
  } else if (s.op == "attention") {
    // At the product with V (measured with LibTorch's allocator, bench/memory_formula.py): Q, K, V (3 T C),
    // the scaled queries (T C), the batched products' contiguous copies of K^T and V (2 T C), the product
    // (T C), the scores and their softmax (2 h T W); windows add the partitioned copy of the input where the
    // grid holds more than one window (T C) and the rolled one where they are shifted (T C).
    const AttentionWindows a = attention_windows(s, rows);
    const double W = a.window > 0 ? static_cast<double>(a.window) * a.window : rows;
    mem = (7 * rows * in + 2 * s.heads * rows * W + (a.several() ? rows * in : 0) + (a.shift > 0 ? rows * in : 0)) * kFloat;
  } else if (s.op == "gcn" && !v.dense()) {
    // The transformed rows and the accumulator beside the messages; then bias and activation (three
    // N x out); besides, the normalisation cached per graph (source and destination indices with self
    // loops and a weight per edge: made on the first run on a graph, kept for the next ones).
    const double cache = v.normalisation == ModelVariant::Normalisation::symmetric ? workspace : (E + N) * (2 * kIndex + kFloat);
    mem = std::max(2 * N * out * kFloat + message, 3 * act_out) + cache;
  } else if (s.op == "gat" && !v.dense()) {
    // The edge indices with self loops (made per run), the transformed rows, scores, their
    // exponentials and the attention (3 per edge and head), the messages, the accumulator (P > 1: the
    // heads done so far and one head's); then bias and activation.
    const double L = E + N, H = s.heads;
    mem = 2 * L * kIndex +
          std::max(2 * N * out * kFloat + 3 * L * H * kFloat + message + (P == 1 ? 0 : L * kFloat + N * (out / H) * kFloat), 3 * act_out);
  }
  return mem;
}

// The bytes the stage moves (the roofline's traffic): its inputs, output, weights, workspace, the
// graph where it needs one, and feature decomposition's extra passes over the edges.
double stage_traffic(const ModelSpec& m, const StageSpec& s, const Shape& g, double weights, double workspace) {
  const ModelVariant& v = g.v;
  const double E = g.E, N = g.N, P = g.P;
  double in_bytes = 0;
  for (int p : s.inputs) in_bytes += p < 0 ? m.input_bytes : m.stages[p].out_bytes;
  double traffic = in_bytes + s.out_bytes + weights + workspace + (s.needs_graph ? m.graph_bytes : 0);
  // Feature decomposition reads the edge list again for every extra pass (the paper's "redundant memory
  // access of edge data", Sec. III-B): gcn and gat (self loops included) read a source and a destination
  // index and a weight per edge, sage the two indices; P slices (gat: heads x P, head by head) make P - 1
  // extra passes (gat: heads x P - 1). Measured on this CPU (`coinfer reproduce feature-decomposition`,
  // fig5): thinner slices cost more. What slicing saves (a slice of the features that stays in cache) is
  // not in this roofline; a LUT measured with `coinfer profile --variant fdP` carries both.
  if (P > 1 && !v.dense() && (s.op == "gcn" || s.op == "sage" || s.op == "gat")) {
    const double passes = s.op == "gat" ? s.heads * P - 1 : P - 1;
    const double per_edge = s.op == "sage" ? 2 * kIndex : 2 * kIndex + kFloat;
    traffic += passes * (s.op == "sage" ? E : E + N) * per_edge;
  }
  return traffic;
}

}  // namespace

void derive_costs(ModelSpec& m) {
  const ModelVariant& v = m.variant;
  // A node capacity fixes every node-level shape to C rows (NodePad: the padding is computed too);
  // padding nodes have no edges.
  const double N = static_cast<double>(v.node_capacity > 0 ? v.node_capacity : m.dataset.nodes);
  const double E = static_cast<double>(m.dataset.edges);
  // INT8: stage outputs cross as int8 with one float scale and an int32 zero point per tensor (the
  // last stage's output, the result, stays float32; KNN indices stay int64); matrix weights are int8
  // with one float32 scale per output channel.
  const double act = v.int8() ? 1 : kFloat;
  const double mask = v.int8() ? 1 : kFloat;  // one dense-mask entry
  m.input_bytes = N * m.dataset.features * kFloat;
  m.graph_bytes = E * 2 * kIndex;
  const Shape g{v, N, E, act, mask, static_cast<double>(v.feature_chunks)};
  for (size_t i = 0; i < m.stages.size(); ++i) {
    StageSpec& s = m.stages[i];
    if (s.inputs.empty()) s.inputs = {static_cast<int>(i) - 1};
    for (int p : s.inputs)
      if (p >= static_cast<int>(i) || p < -1) bad(s, "an input must be an earlier stage or the raw input");
    bool graph_input = false;  // a graph-level input (after pooling)
    for (int p : s.inputs) graph_input = graph_input || (p >= 0 && m.stages[p].out_level == TensorLevel::graph);
    const double in_w = input_width(m, s);
    if (s.in_width == 0) s.in_width = static_cast<int>(in_w);
    if (s.op != "knn" && s.op != "aggregate" && s.in_width != static_cast<int>(in_w))
      bad(s, "in width " + std::to_string(s.in_width) + " differs from the width of its inputs (" + std::to_string(static_cast<int>(in_w)) + ")");
    const double in = s.in_width;
    s.needs_graph = false;
    s.out_level = graph_input ? TensorLevel::graph : TensorLevel::node;
    // The rows it reads: 1 after pooling, else its first feature input's (the nodes; an image's pixels,
    // fewer after each stride). Every feature input has as many (checked).
    double rows = graph_input ? 1 : N;
    if (m.dataset.kind == "image" && !graph_input) {
      rows = -1;
      for (int p : s.inputs) {
        const double r = p < 0 ? N : m.stages[p].out_rows;
        if (rows >= 0 && r != rows)
          bad(s, "its inputs have different sizes (" + std::to_string(static_cast<long long>(rows)) + " and " +
                     std::to_string(static_cast<long long>(r)) + " pixels)");
        rows = r;
      }
    }
    s.out_rows = graph_input || s.op == "pool" ? 1 : m.dataset.kind == "image" ? rows : N;  // conv, maxpool and add set their own
    // The ops on a feature map ([B, C, H, W] in LibTorch) cannot follow a pool (its output is one row)
    // or a patch_embed (its output is tokens, [B, T, D]); the transformer ops read tokens.
    bool token_input = false;
    for (int p : s.inputs) token_input = token_input || (p >= 0 && m.stages[p].tokens);
    const bool map_op = s.op == "conv" || s.op == "maxpool" || s.op == "se" || s.op == "patch_embed";
    const bool token_op = s.op == "layernorm" || s.op == "attention" || s.op == "mlp" || s.op == "patch_merge";
    if (graph_input && (map_op || token_op)) bad(s, "needs a feature map or tokens, and its input was pooled");
    if (map_op && token_input) bad(s, "needs a feature map, and its input is tokens (after a patch_embed)");
    if (token_op && !token_input) bad(s, "needs tokens (a patch_embed before it)");
    if (s.op == "pool" && s.pool_mode == "class_token") {
      bool has_class_token = false;
      for (int p = s.inputs.empty() ? -1 : s.inputs[0]; p >= 0 && !has_class_token; p = m.stages[p].inputs.empty() ? -1 : m.stages[p].inputs[0])
        has_class_token = m.stages[p].op == "patch_embed" && m.stages[p].class_token;
      if (!token_input || !has_class_token) bad(s, "class_token pooling needs tokens from a patch_embed with class_token: true");
    }
    s.tokens = token_input && !graph_input && s.op != "pool";
    if (s.op == "patch_embed") s.tokens = true;
    const OpCosts c = op_costs(m, s, g, in, rows);
    // `uncached`: the graph preprocessing kept per graph otherwise (core/stage_operators.hpp) is redone
    // here in every run: its FLOPs, and the bytes it reads and writes on top of the stage's traffic.
    double preprocessing_bytes = 0;
    if (v.uncached() && !has_prep_input(m, s))  // a stage given the matrix makes none of its own
      for (const auto& op : graph_preprocessing_operators(s.op, v.dense(), N, E)) {
        s.flops += op.flops;
        preprocessing_bytes += op.bytes;
      }
    const double out = c.out;
    double weights = c.weights;
    const double workspace = c.workspace, message = c.message;
    if (s.out_level == TensorLevel::graph && s.op != "pool" && s.op != "fc" && s.op != "linear" && s.op != "combine")
      bad(s, "cannot follow global pooling");
    const bool result = i + 1 == m.stages.size();
    const double out_rows = s.out_rows;
    if (s.op == "knn")
      s.out_bytes = N * s.k * kIndex;
    else if (s.op == "graph_prep")
      s.out_bytes = N * N * kFloat;  // the matrix stays float32 (INT8 variants quantise it where it is used)
    else if (v.int8() && !result)
      s.out_bytes = out_rows * out * act + 8;  // + scale and zero point
    else
      s.out_bytes = out_rows * out * kFloat;
    if (v.int8()) weights = weights / kFloat + out * kFloat;  // int8 entries (biases too, a slight undercount) + scales
    s.weight_bytes = weights;
    s.workspace_bytes = workspace;
    s.message_bytes = message;
    s.memory_bytes = peak_memory(s, g, in, out, rows, workspace, message, result, out_rows);
    s.traffic_bytes = stage_traffic(m, s, g, weights, workspace) + preprocessing_bytes;
    s.operators = stage_operators(m, static_cast<int>(i));
  }
}

}  // namespace coinfer
