// A stage's operators, class by class, as models/gnn_model.cpp runs them (models/README.md "Operator
// classes"; keep the two in step). Per input sample; float32 tensors (4 bytes), int64 indices (8).
// The stage's FLOPs (core/model_cost.cpp) are split among its operators: their sum is the stage's.
#include "core/stage_operators.hpp"

#include <algorithm>
#include <cmath>

namespace coinfer {
namespace {

constexpr double kF = 4;  // float32
constexpr double kI = 8;  // int64

class Ops {
 public:
  void add(OperatorClass c, const char* what, double flops, double bytes, int launches = 1) { ops_.push_back({c, what, flops, bytes, launches, 0}); }
  // An operator that reads or writes `rows` rows by index (gather, scatter): its cost has a term per row.
  void indexed(const char* what, double flops, double bytes, double rows, int launches = 1) {
    ops_.push_back({OperatorClass::irregular, what, flops, bytes, launches, rows});
  }
  // A Linear layer (one addmm, its bias fused): rows x in by in x out.
  void linear(double rows, double in, double out, double flops) {
    add(OperatorClass::dense, "linear", flops, kF * (rows * in + rows * out + in * out + out));
  }
  // An element-wise operator reading `reads` and writing `writes` floats.
  void elementwise(const char* what, double reads, double writes, double flops = 0, int launches = 1) {
    add(OperatorClass::elementwise, what, flops, kF * (reads + writes), launches);
  }
  void push(OperatorCost c) { ops_.push_back(std::move(c)); }
  std::vector<OperatorCost> take() { return std::move(ops_); }

 private:
  std::vector<OperatorCost> ops_;
};

// A conv's or add's activation in place over `n` floats (core/model_cost.cpp counts its FLOPs: relu and
// relu6 1 an element, hardswish 4).
void activation_operator(Ops& o, const std::string& activation, double n) {
  if (activation.empty()) return;
  if (activation == "hardswish")
    o.elementwise("hardswish_", n, n, 4 * n);
  else
    o.elementwise(activation == "relu6" ? "hardtanh_ (ReLU6)" : "relu_", n, n, n);
}

// KNN on [N, in] features: squares and their sums, x x^T, the distance combination (three operators
// over N x N), top-k. Its formula's 3 N^2 in FLOPs: 2 N^2 in of the product, the rest element-wise.
void knn_operators(Ops& o, double N, double in, double k) {
  o.elementwise("x*x, sum", 2 * N * in, N * in + N, 0, 2);
  o.add(OperatorClass::dense, "matmul x x^T", 2 * N * N * in, kF * (N * in + N * N));
  o.elementwise("sq - 2 d + sq^T", 4 * N * N + 2 * N, 3 * N * N, N * N * in, 3);
  o.add(OperatorClass::select, "topk", 0, kF * (N * N + N * k) + kI * N * k);
}

// out[dst] += h[src] (x w): index_select of the source rows, the weight product, zeros, scatter_add
// into them, for L = edges (with self loops where the op adds them) and `width` columns, over P
// feature slices (each slice made contiguous and copied into the result). `flops` are split between
// the product and the scatter (the formula's E x width each), or all in the scatter without a weight.
void scatter_operators(Ops& o, double N, double L, double width, double P, bool weighted, double flops) {
  const double launches = P;  // one set per slice
  o.indexed("index_select", 0, kF * 2 * L * width + kI * L * P, L * P, static_cast<int>(launches));
  if (weighted) o.elementwise("message * weight", L * width + L * P, L * width, flops / 2, static_cast<int>(launches));
  o.elementwise("zeros", 0, N * width, 0, static_cast<int>(launches));
  o.indexed("scatter_add", weighted ? flops / 2 : flops, kF * (L * width + 2 * N * width) + kI * L * P, L * P, static_cast<int>(launches));
  if (P > 1) o.add(OperatorClass::movement, "slice contiguous, copy", 0, kF * 4 * N * width, static_cast<int>(2 * P));
}

// GraSp: the product of a graph's N x N matrix (`nnz` non-zeros) with N x `width` features, its zeros
// skipped: a sparse copy of the matrix (LibTorch's COO: two int64 indices and a float a non-zero) times
// the features, 2 FLOPs a non-zero and column. A matrix made in every run (`per_run`: GrAd's input, or
// `uncached`) is compressed in every run (read whole, its non-zeros written); a kept one once per graph.
void graph_matrix_product(Ops& o, double N, double nnz, double width, bool per_run) {
  constexpr double kEntry = 2 * kI + kF;
  if (per_run) o.add(OperatorClass::movement, "compress the matrix (to_sparse)", 0, kF * N * N + kEntry * nnz);
  o.add(OperatorClass::dense, "sparse matmul (GraSp: zeros skipped)", 2 * nnz * width, kEntry * nnz + kF * 2 * N * width);
}

// Dense attention's logits and their normalisation over the H x N x N map (models/gnn_model.cpp
// gat_dense; its formula in core/model_cost.cpp: 6 FLOPs per logit, with GrAx2 4 per logit and one per
// source node and head). The logits: a broadcast add of the two ends' scores and a LeakyReLU over the
// map (2 per logit), or with GrAx2 a LeakyReLU per source node broadcast along the rows. The masking:
// EffOp's (the default: the exponentials multiplied by the connectivity mask, element-wise work, 2 per
// logit, then the sums and divisions, 2), the out-of-the-box Greater and Select (selection, then a plain
// softmax that does all 4), or GrAx1's non-edge bias added (1, then a softmax of 3).
void gat_dense_attention_operators(Ops& o, const ModelVariant& v, double H, double N) {
  const double map = H * N * N, nn = N * N;
  double softmax_flops = 2 * map;
  if (v.grax2)
    o.elementwise("LeakyReLU per source (GrAx2)", H * N, H * N, H * N);
  else
    o.elementwise("broadcast add, LeakyReLU", 2 * map, 2 * map, 2 * map, 2);
  if (v.select_mask) {
    o.add(OperatorClass::select, "greater (mask > 0)", 0, kF * nn + nn);
    o.add(OperatorClass::select, "select (where): -inf on non-edges", 0, kF * (2 * map) + nn);
    softmax_flops = 4 * map;
  } else if (v.grax1) {
    o.elementwise("non-edge bias from the mask (clamp, -1, x 1e4)", nn, nn, 0, 3);
    o.elementwise("add non-edge bias (GrAx1)", map + nn, map, map);
    softmax_flops = 3 * map;
  } else {
    o.elementwise("exp, mask", map + nn, map, 2 * map, 2);
  }
  o.add(OperatorClass::reduction, "softmax", softmax_flops, kF * 2 * map);
}

void gat_operators(Ops& o, const StageSpec& s, const ModelVariant& v, double N, double E, double in, double out, double P, bool dense) {
  const double H = s.heads, D = out / s.heads;
  if (dense) {
    // Transform; one score per node and head; the H x N x N logits, their masking and softmax; the
    // attention by the features.
    o.linear(N, in, out, 2 * N * in * out);
    o.elementwise("scores", 2 * N * out, 2 * N * H, 2 * N * out, 4);
    gat_dense_attention_operators(o, v, H, N);
    o.add(OperatorClass::dense, "matmul attention x h", 2 * N * N * out, kF * (H * N * N + 2 * N * out), static_cast<int>(H));
    o.add(OperatorClass::movement, "permute, reshape", 0, kF * 2 * N * out);
  } else {
    const double L = E + N;  // self loops added per run
    o.add(OperatorClass::movement, "self loops (arange, cat)", 0, kI * 4 * L, 3);
    o.linear(N, in, out, 2 * N * in * out);
    o.elementwise("h * a, sum (both ends)", 4 * N * out, 2 * N * out + 2 * N * H, H * E * 2 * D, 4);
    o.indexed("index_select scores", 0, 2 * (kF * 2 * L * H + kI * L), 2 * L, 2);
    o.elementwise("add, LeakyReLU", 4 * L * H, 2 * L * H, 0, 2);
    // edge_softmax (models/aggregation_schemes.cpp): the maximum per destination (a fill, then a
    // scatter-reduce), gathered back per edge, subtracted and exponentiated, summed per destination
    // (a fill and an index_add), gathered back, divided. Its formula's 5 FLOPs per edge and head: the
    // max, subtract, exp, sum and divide.
    o.elementwise("softmax: fills", 0, 2 * N * H, 0, 2);
    o.indexed("softmax: scatter max", H * E, kF * (L * H + 2 * N * H) + kI * L * H, L);
    o.indexed("softmax: gather max, gather sum", 0, 2 * (kF * 2 * L * H + kI * L), 2 * L, 2);
    o.elementwise("softmax: subtract, exp, divide", 5 * L * H, 3 * L * H, 3 * H * E, 3);
    o.indexed("softmax: index_add sum", H * E, kF * (L * H + 2 * N * H) + kI * L, L);
    if (P == 1) {
      scatter_operators(o, N, L, out, 1, true, H * E * D * 2);
    } else {  // head by head, each in P slices
      scatter_operators(o, N, L, out, H * P, true, H * E * D * 2);
      o.add(OperatorClass::movement, "cat heads", 0, kF * 2 * N * out);
    }
  }
  o.elementwise("bias", N * out + out, N * out);
  o.elementwise("ELU", N * out, N * out);
}

// A transformer stage on T tokens of C features (core/model_cost.cpp transformer_costs has its FLOPs,
// split here among its operators as models/gnn_model.cpp runs them).
void transformer_operators(Ops& o, const StageSpec& s, double T, double C) {
  const double D = s.out_width, R = s.out_rows;
  if (s.op == "patch_embed") {
    // T is the image's pixels here; the conv (kernel = stride = patch) with its bias; the tokens laid
    // out [B, T, D] (with the class token, its concatenation; else a contiguous copy); the position embedding.
    const double patches = R - (s.class_token ? 1 : 0), k2 = static_cast<double>(s.kernel) * s.kernel;
    o.add(OperatorClass::dense, "conv2d (patches)", 2 * patches * D * C * k2, kF * (T * C + patches * D + D * C * k2));
    o.elementwise("bias", patches * D + D, patches * D, patches * D);
    o.add(OperatorClass::movement, s.class_token ? "cat class token" : "flatten, transpose, contiguous", 0, kF * (patches * D + R * D));
    if (s.class_token) o.elementwise("add position embedding", 2 * R * D, R * D, R * D);
  } else if (s.op == "layernorm") {
    o.add(OperatorClass::reduction, "layer_norm", s.flops, kF * (2 * T * C + 2 * C + 2 * T));
  } else if (s.op == "mlp") {
    const double H = s.hidden;
    o.linear(T, C, H, 2 * T * C * H);
    o.elementwise("GELU", T * H, T * H, 5 * T * H);
    o.linear(T, H, C, 2 * T * H * C);
  } else if (s.op == "patch_merge") {
    o.add(OperatorClass::movement, "2 x 2 blocks, cat", 0, kF * 2 * T * C, 5);
    o.add(OperatorClass::reduction, "layer_norm", 8 * T * C, kF * (2 * T * C + 8 * C + T / 2));
    o.add(OperatorClass::dense, "linear (no bias)", 2 * (T / 4) * 4 * C * D, kF * (T * C + (T / 4) * D + 4 * C * D));
  } else {  // attention
    const double h = s.heads;
    const AttentionWindows a = attention_windows(s, T);
    const bool windows = a.window > 0, shifted = a.shift > 0;
    const double W = windows ? static_cast<double>(a.window) * a.window : T;
    if (shifted) o.add(OperatorClass::movement, "roll", 0, kF * 2 * T * C);
    if (windows) o.add(OperatorClass::movement, "window partition", 0, kF * 2 * T * C);
    o.linear(T, C, 3 * C, 2 * T * C * 3 * C);
    o.elementwise("scale queries", T * C, T * C, T * C);
    o.add(OperatorClass::dense, "matmul Q K^T", 2 * T * W * C, kF * (2 * T * C + h * T * W));
    if (windows) {
      o.indexed("relative position bias gather", 0, kF * 2 * h * W * W + kI * W * W, W * W);
      o.elementwise(shifted ? "add bias, mask" : "add bias", h * T * W, h * T * W, (shifted ? 2 : 1) * h * T * W, shifted ? 2 : 1);
    }
    o.add(OperatorClass::reduction, "softmax", 5 * h * T * W, kF * 2 * h * T * W);
    o.add(OperatorClass::dense, "matmul attention V", 2 * T * W * C, kF * (h * T * W + 2 * T * C));
    o.add(OperatorClass::movement, "join heads (transpose, reshape)", 0, kF * 2 * T * C);
    o.linear(T, C, C, 2 * T * C * C);
    if (windows) o.add(OperatorClass::movement, "window reverse", 0, kF * 2 * T * C);
    if (shifted) o.add(OperatorClass::movement, "roll back", 0, kF * 2 * T * C);
  }
}

}  // namespace

AttentionWindows attention_windows(const StageSpec& s, double tokens) {
  AttentionWindows a;
  a.side = static_cast<int>(std::llround(std::sqrt(tokens)));
  if (s.window <= 0) return a;
  a.window = std::min(s.window, a.side);
  a.shift = a.side > s.window ? s.shift : 0;
  return a;
}

std::vector<OperatorCost> graph_preprocessing_operators(const std::string& op, bool dense, double N, double E) {
  Ops o;
  const double L = E + N;  // edges with a self loop per node
  if (op == "gcn" || (op == "gat" && dense)) {
    // Self loops: arange(N), then source and destination each concatenated with them (as sparse gat's).
    o.add(OperatorClass::movement, "self loops (arange, cat)", 0, kI * 4 * L, 3);
  }
  if (op == "gcn") {
    // Degrees counting the loop: zeros(N), ones(L), index_add by destination (an add per edge); each
    // end's degree gathered per edge, 1/sqrt of both, their product: w = 1/sqrt(deg_src deg_dst).
    o.elementwise("degree: zeros, ones", 0, N + L, 0, 2);
    o.indexed("degree: index_add", L, kF * (L + 2 * N) + kI * L, L);
    o.indexed("degree: index_select both ends", 0, 2 * (kF * 2 * L + kI * L), 2 * L, 2);
    o.elementwise("rsqrt, rsqrt, product", 4 * L, 3 * L, 3 * L, 3);
    if (dense) {  // the weights put into an N x N matrix, row = destination (accumulating repeats)
      o.elementwise("mask: zeros N x N", 0, N * N);
      o.indexed("mask: index_put", L, kF * 2 * L + kI * 2 * L, L);
    }
  } else if (op == "sage" && dense) {
    // In-degrees (clamped to 1), their reciprocal per edge, put into an N x N matrix: row means.
    o.elementwise("degree: zeros, ones, clamp", 2 * N + E, 2 * N + E, 0, 3);
    o.indexed("degree: index_add", E, kF * (E + 2 * N) + kI * E, E);
    o.indexed("degree: index_select", 0, kF * 2 * E + kI * E, E);
    o.elementwise("reciprocal", E, E, E);
    o.elementwise("mask: zeros N x N", 0, N * N);
    o.indexed("mask: index_put", E, kF * 2 * E + kI * 2 * E, E);
  } else if (op == "gat" && dense) {
    // Ones per edge (loops included) put into an N x N matrix: each edge's multiplicity.
    o.elementwise("mask: ones, zeros N x N", 0, L + N * N, 0, 2);
    o.indexed("mask: index_put", L, kF * 2 * L + kI * 2 * L, L);
  }
  return o.take();
}

std::vector<OperatorCost> stage_operators(const ModelSpec& m, int index) {
  const StageSpec& s = m.stages.at(static_cast<size_t>(index));
  const ModelVariant& v = m.variant;
  const double N = static_cast<double>(v.node_capacity > 0 ? v.node_capacity : m.dataset.nodes);
  const double E = static_cast<double>(m.dataset.edges);
  const double P = std::max(1, v.feature_chunks);
  const bool dense = v.dense();
  const bool graph_level = s.out_level == TensorLevel::graph && s.op != "pool";
  // The rows it reads: 1 after pooling, else the nodes, or an image's pixels at this stage's input.
  double rows = graph_level ? 1 : N;
  if (m.dataset.kind == "image" && !graph_level && !s.inputs.empty()) rows = s.inputs[0] < 0 ? N : m.stages[s.inputs[0]].out_rows;
  const double in = s.in_width, out = s.out_width, k = s.k;
  const bool last = index + 1 == m.num_stages();
  bool prep_input = false;  // takes a graph_prep stage's matrix (GrAd): aggregates by its product
  for (int p : s.inputs) prep_input = prep_input || (p >= 0 && m.stages[p].op == "graph_prep");
  if (s.op == "graph_prep") return graph_preprocessing_operators("gcn", true, N, E);
  Ops o;
  if (v.uncached() && !prep_input)
    for (auto& c : graph_preprocessing_operators(s.op, dense, N, E)) o.push(std::move(c));
  int feature_inputs = 0;
  for (int p : s.inputs) feature_inputs += p < 0 || (m.stages[p].op != "knn" && m.stages[p].op != "graph_prep");
  if (feature_inputs > 1 && s.op != "add") o.add(OperatorClass::movement, "cat inputs", 0, kF * 2 * rows * in);
  if (s.op == "knn") {
    knn_operators(o, N, in, k);
  } else if (s.op == "edgeconv") {
    knn_operators(o, N, in, k);
    o.indexed("gather neighbours", 0, kF * 2 * N * k * in + kI * N * k * in, N * k);
    o.elementwise("nb - x_i", 2 * N * k * in, N * k * in);
    o.add(OperatorClass::movement, "cat [x_i, nb - x_i]", 0, kF * 4 * N * k * in);
    o.linear(N * k, 2 * in, out, N * k * 2 * (2 * in) * out);
    o.elementwise("LeakyReLU", N * k * out, N * k * out);
    o.add(OperatorClass::reduction, "amax over k", N * k * out, kF * (N * k * out + N * out));
  } else if (s.op == "aggregate") {
    o.indexed("gather neighbours", 0, kF * 2 * N * k * in + kI * N * k * in, N * k);
    o.add(OperatorClass::reduction, "amax over k", N * k * in, kF * (N * k * in + N * in));
  } else if (s.op == "combine" || s.op == "linear" || s.op == "fc") {
    o.linear(rows, in, out, s.flops);
    if (!(s.op == "fc" && last))
      o.elementwise(s.activation == "hardswish" ? "hardswish" : s.activation == "relu6" ? "ReLU6" : "ReLU", rows * out, rows * out);
  } else if (s.op == "pool" && s.pool_mode == "class_token") {
    o.add(OperatorClass::movement, "select class token", 0, kF * 2 * in);
  } else if (s.op == "patch_embed" || s.op == "layernorm" || s.op == "attention" || s.op == "mlp" || s.op == "patch_merge") {
    transformer_operators(o, s, rows, in);
  } else if (s.op == "pool") {
    const int parts = s.pool_mode == "max+mean" ? 2 : 1;
    o.add(OperatorClass::reduction, s.pool_mode == "mean" ? "mean" : "amax", rows * in, kF * (rows * in + in));
    if (parts == 2) {
      o.add(OperatorClass::reduction, "mean", rows * in, kF * (rows * in + in));
      o.add(OperatorClass::movement, "cat max, mean", 0, kF * 4 * in);
    }
  } else if (s.op == "gcn") {
    o.linear(N, in, out, 2 * N * in * out);
    if ((dense || prep_input) && v.grasp)
      graph_matrix_product(o, N, E + N, out, prep_input || v.uncached());
    else if (dense || prep_input)
      o.add(OperatorClass::dense, "matmul mask x h", 2 * N * N * out, kF * (N * N + 2 * N * out));
    else  // the normalisation (edge weights with self loops): per graph, or above with `uncached`
      scatter_operators(o, N, E + N, out, P, true, 2 * E * out);
    o.elementwise("bias", N * out + out, N * out);
    if (!last) o.elementwise("ReLU", N * out, N * out);
  } else if (s.op == "sage") {
    if (dense && v.grasp) {
      graph_matrix_product(o, N, E, in, v.uncached());
    } else if (dense) {
      o.add(OperatorClass::dense, "matmul mask x x", 2 * N * N * in, kF * (N * N + 2 * N * in));
    } else {
      o.elementwise("degree: zeros, ones, clamp", 2 * N + E, 2 * N + E, 0, 3);
      o.indexed("degree: index_add", 0, kF * (E + 2 * N) + kI * E, E);
      scatter_operators(o, N, E, in, P, false, E * in);
      o.elementwise("mean: divide by degree", N * in + N, N * in);
    }
    o.linear(N, in, out, 2 * N * in * out);
    o.linear(N, in, out, 2 * N * in * out);
    o.elementwise("add", 2 * N * out, N * out);
    if (!last) o.elementwise("ReLU", N * out, N * out);
  } else if (s.op == "gat") {
    gat_operators(o, s, v, N, E, in, out, P, dense);
  } else if (s.op == "conv") {
    // conv2d (a matrix product over the kernel's window; depthwise too, with in / groups = 1), then
    // BatchNorm (scale and shift per channel) and the activation in place (models/gnn_model.cpp).
    const double R = s.out_rows, k2 = static_cast<double>(s.kernel) * s.kernel;
    o.add(OperatorClass::dense, s.groups > 1 ? "conv2d (grouped)" : "conv2d", 2 * R * out * (in / s.groups) * k2,
          kF * (rows * in + R * out + out * (in / s.groups) * k2));
    o.elementwise("batch_norm", R * out + 4 * out, R * out, 2 * R * out);
    activation_operator(o, s.activation, R * out);
  } else if (s.op == "maxpool") {
    o.add(OperatorClass::reduction, "max_pool2d", s.flops, kF * (rows * in + s.out_rows * in));
  } else if (s.op == "add") {
    const double parts = static_cast<double>(s.inputs.size());
    o.elementwise("add", parts * rows * in, rows * in, (parts - 1) * rows * in, static_cast<int>(parts - 1));
    activation_operator(o, s.activation, rows * in);
  } else if (s.op == "se") {
    // Squeeze and excitation (models/gnn_model.cpp): the channels' means, two 1x1 convs on them (their
    // biases counted with them) with a ReLU and a hardsigmoid, the map scaled channel by channel.
    const double sq = s.squeeze;
    o.add(OperatorClass::reduction, "mean over pixels", rows * in, kF * (rows * in + in));
    o.add(OperatorClass::dense, "conv 1x1 squeeze", 2 * in * sq + sq, kF * (in + in * sq + 2 * sq));
    o.elementwise("relu", sq, sq, sq);
    o.add(OperatorClass::dense, "conv 1x1 excite", 2 * sq * in + in, kF * (sq + sq * in + 2 * in));
    o.elementwise("hardsigmoid", in, in, 3 * in);
    o.elementwise("scale", rows * in + in, rows * in, rows * in);
  }
  return o.take();
}

}  // namespace coinfer
