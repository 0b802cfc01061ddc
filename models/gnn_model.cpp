#include "models/gnn_model.hpp"

#include "models/aggregation_schemes.hpp"

#include <ATen/core/dispatch/Dispatcher.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/random_stream.hpp"
#include "core/stage_operators.hpp"
#include "models/datasets.hpp"

namespace coinfer::models {

namespace {
[[noreturn]] void bad(const StageSpec& s, const std::string& why) {
  throw std::invalid_argument("model stage '" + s.name + "' (" + s.op + "): " + why);
}
bool is_point_cloud(const ModelSpec& m) { return m.dataset.kind == "point_cloud"; }
bool is_image(const ModelSpec& m) { return m.dataset.kind == "image"; }
// An image's side (its rows are side x side pixels; checked by derive_costs).
std::int64_t image_side(const ModelSpec& m) { return static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(m.dataset.nodes)))); }
// float32 on the device of `t` (a graph's edge_index): tensors made inside a stage live where its input does.
torch::TensorOptions float_on(const torch::Tensor& t) { return t.options().dtype(torch::kFloat32); }

// Symmetric static quantisation of activations: zero point 128 of quint8, scale = absmax / 127 -- or,
// on an x86 CPU without VNNI, 7 bits: zero point 64, scale = absmax / 63. There the quantised kernels
// multiply u8 x s8 pairs into 16-bit sums (vpmaddubsw) that saturate with 8-bit activations; PyTorch's
// x86 quantisation config reduces the activations' range on such CPUs for the same reason
// (reduce_range). Measured on an AVX2-only AMD EPYC: GraphSAGE's INT8 error 0.0139 with 8 bits, above
// the 10 % of its output scale tests/models/test_variants.cpp allows.
bool reduced_activation_range() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool reduced = !(__builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni"));
  return reduced;
#else
  return false;
#endif
}
const std::int64_t kZeroPoint = reduced_activation_range() ? 64 : 128;
const double kLevels = reduced_activation_range() ? 63.0 : 127.0;

// A quantised operator of LibTorch's engine (onednn on x86, qnnpack on ARM), called through the
// dispatcher: the C++ API has no typed wrappers for them.
c10::IValue call_quantized(const char* name, std::vector<c10::IValue> args) {
  static std::map<std::string, c10::OperatorHandle> ops;
  auto it = ops.find(name);
  if (it == ops.end()) it = ops.emplace(name, c10::Dispatcher::singleton().findSchemaOrThrow(name, "")).first;
  torch::jit::Stack stack(std::move(args));
  it->second.callBoxed(&stack);
  return stack.at(0);
}
// A windowed attention stage's windows (core/stage_operators.hpp: the one rule the cost model reads too);
// an attention stage keeps its input's tokens, so its output rows are its tokens.
AttentionWindows token_windows(const StageSpec& s) { return attention_windows(s, s.out_rows); }

// Swin's relative position index of a w x w window: for tokens i = (a, b) and j = (c, d), the bias
// table's row (a - c + w - 1) (2w - 1) + (b - d + w - 1). [w^2, w^2] int64.
torch::Tensor relative_position_index(std::int64_t w) {
  auto r = torch::arange(w);
  auto a = r.repeat_interleave(w), b = r.repeat({w});  // each token's row and column in the window
  auto dr = a.unsqueeze(1) - a.unsqueeze(0) + (w - 1), dc = b.unsqueeze(1) - b.unsqueeze(0) + (w - 1);
  return dr * (2 * w - 1) + dc;
}

// The mask of shifted windows: after the roll, a window may hold tokens from up to 3 x 3 regions that
// were not neighbours; a score between two regions gets -100 (Swin's value), within one 0. Regions
// along a side: [0, S - w), [S - w, S - shift), [S - shift, S). [windows, w^2, w^2] float32.
torch::Tensor shifted_window_mask(const AttentionWindows& g) {
  const std::int64_t S = g.side, w = g.window, n = S / w;
  auto region = [&](std::int64_t i) { return i < S - w ? 0 : i < S - g.shift ? 1 : 2; };
  auto id = torch::empty({S, S}, torch::kFloat32);
  auto acc = id.accessor<float, 2>();
  for (std::int64_t i = 0; i < S; ++i)
    for (std::int64_t j = 0; j < S; ++j) acc[i][j] = static_cast<float>(3 * region(i) + region(j));
  auto win = id.view({n, w, n, w}).permute({0, 2, 1, 3}).reshape({n * n, w * w});
  auto diff = win.unsqueeze(1) - win.unsqueeze(2);
  return torch::where(diff != 0, torch::full_like(diff, -100.0f), torch::zeros_like(diff));
}

}  // namespace

void GnnModel::AbsMax::observe(const torch::Tensor& t) {
  if (t.numel() > 0) value = std::max(value, t.abs().max().item<double>());
}

double GnnModel::AbsMax::scale() const { return std::max(value, 1e-6) / kLevels; }

torch::Tensor GnnModel::quantize(const torch::Tensor& x, const AbsMax& range) const {
  return torch::quantize_per_tensor(x.contiguous(), range.scale(), kZeroPoint, torch::kQUInt8);
}

GnnModel::GnnModel(const ModelSpec& spec, std::uint64_t seed) : spec_(spec), chunks_(spec.variant.feature_chunks) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  for (const auto& s : spec_.stages) {
    std::vector<torch::nn::Linear> lin;
    std::vector<torch::Tensor> extra;
    const int in = s.in_width, out = s.out_width;
    if (s.op == "edgeconv") {
      lin.emplace_back(torch::nn::LinearOptions(2 * in, out));
    } else if (s.op == "combine" || s.op == "linear" || s.op == "fc" || s.op == "gcn") {
      lin.emplace_back(torch::nn::LinearOptions(in, out).bias(s.op != "gcn"));
      if (s.op == "gcn") extra.push_back(torch::zeros({out}));
    } else if (s.op == "sage") {
      lin.emplace_back(torch::nn::LinearOptions(in, out));              // self
      lin.emplace_back(torch::nn::LinearOptions(in, out).bias(false));  // neighbours
    } else if (s.op == "gat") {
      if (s.heads < 1 || out % s.heads) bad(s, "out width must be a multiple of heads");
      lin.emplace_back(torch::nn::LinearOptions(in, out).bias(false));
      const int d = out / s.heads;
      extra.push_back(torch::randn({s.heads, d}) * (1.0 / std::sqrt(d)));  // a_src
      extra.push_back(torch::randn({s.heads, d}) * (1.0 / std::sqrt(d)));  // a_dst
      extra.push_back(torch::zeros({out}));                                // bias
    } else if (s.op == "conv") {
      // The kernel [out, in / groups, k, k] (He initialisation, no bias: BatchNorm follows), then
      // BatchNorm's weight, bias, running mean and variance (inference: the running statistics).
      const int per_group = in / s.groups;
      const double fan_in = static_cast<double>(per_group) * s.kernel * s.kernel;
      extra.push_back(torch::randn({out, per_group, s.kernel, s.kernel}) * std::sqrt(2.0 / fan_in));
      extra.push_back(torch::ones({out}));
      extra.push_back(torch::zeros({out}));
      extra.push_back(torch::randn({out}) * 0.1);
      extra.push_back(torch::rand({out}) + 0.5);
    } else if (s.op == "se") {
      // Squeeze and excitation: two 1x1 convs with biases on the channels' means, in -> squeeze -> in.
      lin.emplace_back(torch::nn::LinearOptions(in, s.squeeze));
      lin.emplace_back(torch::nn::LinearOptions(s.squeeze, in));
    } else if (s.op == "patch_embed" || s.op == "layernorm" || s.op == "attention" || s.op == "mlp" || s.op == "patch_merge") {
      transformer_parameters(s, lin, extra);
    } else if (s.op != "knn" && s.op != "aggregate" && s.op != "pool" && s.op != "graph_prep" && s.op != "maxpool" && s.op != "add") {
      bad(s, "no LibTorch implementation for this op");
    }
    for (auto& l : lin) l->eval();
    StageRanges r;
    r.lin_in.resize(lin.size());
    r.lin_out.resize(lin.size());
    ranges_.push_back(r);
    linears_.push_back(lin);
    params_.push_back(extra);
  }
  if (spec_.variant.int8()) {
    // The same samples in every process that builds this model: seeds from (seed, calibration, 0).
    RandomStream rs(seed, StreamPurpose::calibration, 0);
    const std::uint64_t data_seed = rs.next_u64();
    std::vector<GraphSample> samples;
    for (int i = 0; i < kDefaultCalibrationSamples; ++i) samples.push_back(generate_sample(spec_.dataset, data_seed, i).sample);
    calibrate(samples);
  }
}

void GnnModel::calibrate(const std::vector<GraphSample>& samples) {
  if (!spec_.variant.int8()) throw std::invalid_argument("calibrate: " + spec_.name + " is not an INT8 variant");
  if (samples.empty())
    throw std::invalid_argument("INT8 needs calibration data: no samples of " + spec_.dataset.name + " were given to calibrate " + spec_.name);
  torch::NoGradGuard no_grad;
  for (auto& r : ranges_) {
    for (auto& a : r.lin_in) a = AbsMax{};
    for (auto& a : r.lin_out) a = AbsMax{};
    r.out = r.agg = AbsMax{};
  }
  calibrating_ = true;
  try {
    for (const auto& x : samples) forward(x);
  } catch (...) {
    calibrating_ = false;
    throw;
  }
  calibrating_ = false;
  packed_.assign(linears_.size(), {});
  for (size_t s = 0; s < linears_.size(); ++s) {
    for (auto& l : linears_[s]) {
      // Per output channel: scale = absmax of the channel's weights / 127, zero point 0 (qint8).
      auto w = l->weight.detach().contiguous();
      auto scales = (w.abs().amax(1).clamp_min(1e-8) / 127.0).to(torch::kDouble);
      auto qw = torch::quantize_per_channel(w, scales, torch::zeros({w.size(0)}, torch::kLong), 0, torch::kQInt8);
      c10::optional<torch::Tensor> bias;
      if (l->bias.defined()) bias = l->bias.detach().contiguous();
      packed_[s].push_back(call_quantized("quantized::linear_prepack", {qw, bias}));
    }
  }
  calibrated_ = true;
}

void GnnModel::set_feature_chunks(int p) {
  if (p < 1) throw std::invalid_argument("feature chunks must be >= 1");
  chunks_ = p;
}

void GnnModel::to(const torch::Device& device) {
  if (device == device_) return;
  if (spec_.variant.precision == ModelVariant::Precision::int8 && !device.is_cpu())
    throw std::invalid_argument(spec_.name + " with an INT8 variant runs on the CPU only (LibTorch's quantized engines); not on " + device.str());
  for (auto& stage : linears_)
    for (auto& l : stage) l->to(device);
  for (auto& stage : params_)
    for (auto& p : stage) p = p.to(device);
  graph_cache_.clear();
  device_ = device;
}

SplitState GnnModel::start(const GraphSample& in) const {
  if (!in.x.defined() || in.x.scalar_type() != torch::kFloat32) throw std::invalid_argument("input x must be a float32 tensor");
  if (in.x.device() != device_ || (in.edge_index.defined() && in.edge_index.device() != device_))
    throw std::invalid_argument("input on " + in.x.device().str() + ", model on " + device_.str() + " (move the input with .to())");
  const int64_t feat = is_image(spec_) && in.x.dim() == 4 ? in.x.size(1) : in.x.size(-1);
  if (feat != spec_.dataset.features)
    throw std::invalid_argument("input has " + std::to_string(feat) + " features; " + spec_.name + "/" + spec_.dataset.name + " expects " +
                                std::to_string(spec_.dataset.features));
  if (is_point_cloud(spec_) && in.x.dim() != 3) throw std::invalid_argument("point clouds are x [B, N, features]");
  if (is_image(spec_)) {
    const std::int64_t side = image_side(spec_);
    if (in.x.dim() != 4 || in.x.size(1) != spec_.dataset.features || in.x.size(2) != side || in.x.size(3) != side)
      throw std::invalid_argument("images of " + spec_.dataset.name + " are x [B, " + std::to_string(spec_.dataset.features) + ", " +
                                  std::to_string(side) + ", " + std::to_string(side) + "]");
  } else if (!is_point_cloud(spec_)) {
    if (in.x.dim() != 2) throw std::invalid_argument("graphs are x [N, features]");
    if (!in.edge_index.defined() || in.edge_index.dim() != 2 || in.edge_index.size(0) != 2 || in.edge_index.scalar_type() != torch::kInt64)
      throw std::invalid_argument("graphs need edge_index [2, E] int64");
  }
  SplitState st;
  st.tensors[-1] = in.x;
  const std::int64_t cap = spec_.variant.node_capacity * std::max<std::int64_t>(1, in.graphs);
  if (cap > 0 && !is_point_cloud(spec_) && !is_image(spec_)) {
    // GrAd + NodePad: shapes fixed at the capacity; padding rows are zero and have no edges.
    const std::int64_t n = in.x.size(0);
    if (n > cap)
      throw NodeCapacityError("input has " + std::to_string(n) + " nodes, above the node capacity " + std::to_string(cap) + " of " + spec_.name +
                              "/" + spec_.dataset.name + " (refused, not truncated)");
    st.tensors[-1] = n == cap ? in.x : torch::cat({in.x, torch::zeros({cap - n, in.x.size(1)}, in.x.options())}, 0);
    st.real_nodes = n;
  }
  if (!is_point_cloud(spec_) && !is_image(spec_)) st.edge_index = in.edge_index;
  if (!in.graph_nodes.empty()) {
    std::int64_t total = 0;
    for (std::int64_t k : in.graph_nodes) total += k;
    if (is_point_cloud(spec_) || is_image(spec_) || total != in.x.size(0) || st.real_nodes > 0)
      throw std::invalid_argument("graph_nodes must add up to the rows of x of an unpadded graph input");
    if (in.graph_nodes.size() > 1) st.graph_nodes = in.graph_nodes;
  }
  drop_dead(st);
  return st;
}

void GnnModel::drop_dead(SplitState& st) const {
  const int n = num_stages();
  for (auto it = st.tensors.begin(); it != st.tensors.end();) {
    bool live = false;
    if (it->first == st.next_stage - 1 && st.next_stage == n) live = true;  // the result
    for (int s = st.next_stage; s < n && !live; ++s)
      for (int p : spec_.stages[s].inputs) live = live || p == it->first;
    it = live ? std::next(it) : st.tensors.erase(it);
  }
  bool graph = false;
  for (int s = st.next_stage; s < n; ++s) graph = graph || spec_.stages[s].needs_graph;
  if (!graph) st.edge_index = torch::Tensor();
}

void GnnModel::run(SplitState& st, int end) const {
  if (end < st.next_stage || end > num_stages())
    throw std::out_of_range("cannot run to split " + std::to_string(end) + " from " + std::to_string(st.next_stage) + " (model has " +
                            std::to_string(num_stages()) + " stages)");
  torch::NoGradGuard no_grad;
  const bool int8 = spec_.variant.int8();
  if (int8 && !calibrated_ && !calibrating_) throw std::invalid_argument("INT8 variant " + spec_.name + " is not calibrated");
  for (int s = st.next_stage; s < end; ++s) {
    torch::Tensor out = run_stage(st, s);
    // QuantGr: a stage's output is kept (and crosses a split) as int8, except the result and KNN indices.
    const bool keep_int8 = int8 && s + 1 < num_stages() && spec_.stages[s].op != "knn" && spec_.stages[s].op != "graph_prep";
    if (keep_int8 && calibrating_)
      ranges_[s].out.observe(out);
    else if (keep_int8)
      out = quantize(out, ranges_[s].out);
    st.tensors[s] = out;
    st.next_stage = s + 1;
    drop_dead(st);
  }
}

torch::Tensor GnnModel::output(const SplitState& st) const {
  if (st.next_stage != num_stages()) throw std::out_of_range("state is not at the end of the model");
  torch::Tensor out = st.tensors.at(num_stages() - 1);
  // Node tasks on a padded input: the real nodes' rows.
  if (st.real_nodes > 0 && out.dim() == 2 && out.size(0) > st.real_nodes) out = out.narrow(0, 0, st.real_nodes);
  return out;
}

torch::Tensor GnnModel::forward(const GraphSample& in) const {
  SplitState st = start(in);
  run(st, num_stages());
  return output(st);
}

std::vector<torch::Tensor> GnnModel::stage_parameters(int s) const {
  std::vector<torch::Tensor> out;
  for (auto& l : linears_.at(s)) {
    out.push_back(l->weight);
    if (l->bias.defined()) out.push_back(l->bias);
  }
  for (const auto& t : params_.at(s)) out.push_back(t);
  return out;
}

std::uint64_t GnnModel::payload_bytes(const SplitState& st) {
  std::uint64_t b = 0;
  for (const auto& kv : st.tensors) b += kv.second.numel() * kv.second.element_size() + (kv.second.is_quantized() ? 8 : 0);  // + scale, zero point
  if (st.edge_index.defined()) b += st.edge_index.numel() * st.edge_index.element_size();
  return b;
}

torch::Tensor GnnModel::stage_input(const SplitState& st, int s) const {
  std::vector<torch::Tensor> parts;
  for (int p : spec_.stages[s].inputs) {
    if (p >= 0 && (spec_.stages[p].op == "knn" || spec_.stages[p].op == "graph_prep")) continue;  // the graph, not features
    auto it = st.tensors.find(p);
    if (it == st.tensors.end()) throw std::invalid_argument("state lacks the input of stage " + spec_.stages[s].name);
    parts.push_back(it->second);
  }
  if (parts.size() == 1) return parts[0];  // may be int8: a linear takes it as it is
  for (auto& p : parts) p = float_of(p);
  return torch::cat(parts, -1);
}

namespace {
// The activation after a conv, add or hidden fc stage, in place ("" none, "relu", "relu6", "hardswish").
torch::Tensor activate(torch::Tensor y, const std::string& activation) {
  if (activation == "relu") return y.relu_();
  if (activation == "relu6") return torch::hardtanh_(y, 0, 6);
  if (activation == "hardswish") return torch::hardswish_(y);
  return y;
}

// Indices [B, N, k] of each point's k nearest neighbours (itself included) by Euclidean distance.
torch::Tensor knn(const torch::Tensor& x, int k) {
  auto sq = (x * x).sum(-1, true);  // [B, N, 1]
  auto d = sq - 2 * torch::matmul(x, x.transpose(1, 2)) + sq.transpose(1, 2);
  return std::get<1>(d.topk(std::min<int64_t>(k, x.size(1)), -1, /*largest=*/false));
}
// x [B, N, F], idx [B, N, k] -> neighbours [B, N, k, F]
torch::Tensor gather_neighbours(const torch::Tensor& x, const torch::Tensor& idx) {
  const auto B = x.size(0), N = x.size(1), K = idx.size(2), F = x.size(2);
  auto flat = idx.reshape({B, N * K, 1}).expand({B, N * K, F});
  return x.gather(1, flat).reshape({B, N, K, F});
}

// gcn's symmetric normalisation with self loops: {src + loops, dst + loops, w}, w_e = 1 / sqrt(deg(src)
// deg(dst)), deg counting the loop.
std::vector<torch::Tensor> gcn_normalisation(const torch::Tensor& edge_index, int64_t n) {
  auto loops = torch::arange(n, edge_index.options());
  auto src = torch::cat({edge_index[0], loops});
  auto dst = torch::cat({edge_index[1], loops});
  auto deg = torch::zeros({n}, float_on(edge_index)).index_add_(0, dst, torch::ones({dst.size(0)}, float_on(edge_index)));
  auto w = deg.index_select(0, src).rsqrt() * deg.index_select(0, dst).rsqrt();
  return {src, dst, w};
}

// The N x N matrix of those weights, row = destination (repeated edges accumulate).
torch::Tensor gcn_adjacency(const std::vector<torch::Tensor>& norm, const torch::Tensor& edge_index, int64_t n) {
  torch::Tensor m = torch::zeros({n, n}, float_on(edge_index));
  m.index_put_({norm[1], norm[0]}, norm[2], /*accumulate=*/true);
  return m;
}
}  // namespace

const std::vector<torch::Tensor>* GnnModel::cached(const std::string& kind, const torch::Tensor& ei, int64_t n) const {
  if (spec_.variant.uncached()) return nullptr;
  for (const auto& e : graph_cache_)
    if (e.kind == kind && e.n == n && e.edge_index.data_ptr() == ei.data_ptr() && e.edge_index.sizes() == ei.sizes()) return &e.value;
  return nullptr;
}

std::vector<torch::Tensor> GnnModel::remember(const std::string& kind, const torch::Tensor& ei, int64_t n, std::vector<torch::Tensor> value) const {
  if (spec_.variant.uncached()) return value;
  if (graph_cache_.size() >= kGraphCacheEntries) graph_cache_.erase(graph_cache_.begin());
  graph_cache_.push_back(GraphCacheEntry{kind, ei, n, std::move(value)});
  return graph_cache_.back().value;
}

std::vector<torch::Tensor> GnnModel::gcn_norm(const torch::Tensor& edge_index, int64_t n) const {
  if (const auto* hit = cached("norm", edge_index, n)) return *hit;
  return remember("norm", edge_index, n, gcn_normalisation(edge_index, n));
}

torch::Tensor GnnModel::aggregate_messages(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight,
                                           int64_t n) const {
  // out[dst] += h[src] * weight: PyG's gather-scatter, or feature decomposition over `chunks_` slices
  // (models/aggregation_schemes.hpp).
  if (chunks_ == 1) return scatter_aggregate(h, src, dst, weight, n);
  return sliced_aggregate(h, src, dst, weight, n, slice_width_for(h.size(1), chunks_));
}

void GnnModel::transformer_parameters(const StageSpec& s, std::vector<torch::nn::Linear>& lin, std::vector<torch::Tensor>& extra) const {
  const int in = s.in_width, out = s.out_width;
  if (s.op == "patch_embed") {
    // The patch conv's kernel [out, in, p, p] and bias; ViT's class token [1, 1, out] and position embedding [1, T, out].
    const double fan_in = static_cast<double>(in) * s.kernel * s.kernel;
    extra.push_back(torch::randn({out, in, s.kernel, s.kernel}) * std::sqrt(1.0 / fan_in));
    extra.push_back(torch::zeros({out}));
    if (s.class_token) {
      extra.push_back(torch::randn({1, 1, out}) * 0.02);
      extra.push_back(torch::randn({1, static_cast<std::int64_t>(s.out_rows), out}) * 0.02);
    }
  } else if (s.op == "layernorm") {
    extra.push_back(torch::ones({in}));
    extra.push_back(torch::zeros({in}));
  } else if (s.op == "mlp") {
    lin.emplace_back(torch::nn::LinearOptions(in, s.hidden));
    lin.emplace_back(torch::nn::LinearOptions(s.hidden, in));
  } else if (s.op == "patch_merge") {
    extra.push_back(torch::ones({4 * in}));  // LayerNorm of the 4C concatenation
    extra.push_back(torch::zeros({4 * in}));
    lin.emplace_back(torch::nn::LinearOptions(4 * in, out).bias(false));
  } else {  // attention: Q, K, V in one Linear, the projection; windows: the bias table, its index (and the shift's mask)
    lin.emplace_back(torch::nn::LinearOptions(in, 3 * in));
    lin.emplace_back(torch::nn::LinearOptions(in, in));
    if (s.window > 0) {
      const AttentionWindows g = token_windows(s);
      extra.push_back(torch::randn({(2 * g.window - 1) * (2 * g.window - 1), s.heads}) * 0.02);
      extra.push_back(relative_position_index(g.window));
      if (g.shift > 0) extra.push_back(shifted_window_mask(g));
    }
  }
}

torch::Tensor GnnModel::run_transformer_stage(int s, const torch::Tensor& x) const {
  const StageSpec& sp = spec_.stages[s];
  const auto& p = params_[s];
  if (sp.op == "patch_embed") {  // x [B, C, H, W] -> tokens [B, T, D]
    auto y = torch::conv2d(x, p[0], p[1], sp.kernel).flatten(2).transpose(1, 2);
    if (!sp.class_token) return y.contiguous();
    y = torch::cat({p[2].expand({y.size(0), 1, -1}), y}, 1);
    return y.add_(p[3]);
  }
  if (sp.op == "layernorm") return torch::layer_norm(x, {x.size(-1)}, p[0], p[1], 1e-5);
  if (sp.op == "mlp") {
    auto h = torch::gelu(linear(s, 0, x));
    return linear(s, 1, h);
  }
  if (sp.op == "patch_merge") {  // x [B, T, C] on a side x side grid -> [B, T / 4, out]
    const std::int64_t B = x.size(0), C = x.size(2), S = std::llround(std::sqrt(static_cast<double>(x.size(1))));
    auto g = x.view({B, S, S, C});
    using torch::indexing::None;
    using torch::indexing::Slice;
    auto y = torch::cat({g.index({Slice(), Slice(0, None, 2), Slice(0, None, 2)}), g.index({Slice(), Slice(1, None, 2), Slice(0, None, 2)}),
                         g.index({Slice(), Slice(0, None, 2), Slice(1, None, 2)}), g.index({Slice(), Slice(1, None, 2), Slice(1, None, 2)})},
                        -1)
                 .view({B, (S / 2) * (S / 2), 4 * C});
    y = torch::layer_norm(y, {4 * C}, p[0], p[1], 1e-5);
    return linear(s, 0, y);
  }
  // attention on x [B, T, C]: heads of d = C / heads features; windows regroup the tokens first.
  const std::int64_t B = x.size(0), T = x.size(1), C = x.size(2), h = sp.heads, d = C / h;
  torch::Tensor tokens = x;
  AttentionWindows g;
  std::int64_t groups = B, per = T;  // attention groups (samples, or samples x windows) and tokens in each
  if (sp.window > 0) {
    g = token_windows(sp);
    const std::int64_t n = g.side / g.window;
    auto grid = x.view({B, g.side, g.side, C});
    if (g.shift > 0) grid = torch::roll(grid, {-g.shift, -g.shift}, {1, 2});
    tokens = grid.view({B, n, g.window, n, g.window, C}).permute({0, 1, 3, 2, 4, 5}).reshape({B * n * n, g.window * g.window, C});
    groups = B * n * n;
    per = g.window * g.window;
  }
  auto qkv = linear(s, 0, tokens).view({groups, per, 3, h, d}).permute({2, 0, 3, 1, 4});  // [3, groups, h, per, d]
  auto q = qkv[0] * (1.0 / std::sqrt(static_cast<double>(d)));
  auto scores = torch::matmul(q, qkv[1].transpose(-2, -1));  // [groups, h, per, per]
  if (sp.window > 0) {
    scores.add_(p[0].index_select(0, p[1].view({-1})).view({per, per, h}).permute({2, 0, 1}));
    if (g.shift > 0) {
      const std::int64_t windows = p[2].size(0);
      scores = (scores.view({B, windows, h, per, per}) + p[2].unsqueeze(1).unsqueeze(0)).view({groups, h, per, per});
    }
  }
  auto attention = torch::softmax(scores, -1);
  auto y = linear(s, 1, torch::matmul(attention, qkv[2]).transpose(1, 2).reshape({groups, per, C}));
  if (sp.window == 0) return y;
  const std::int64_t n = g.side / g.window;
  auto grid = y.view({B, n, n, g.window, g.window, C}).permute({0, 1, 3, 2, 4, 5}).reshape({B, g.side, g.side, C});
  if (g.shift > 0) grid = torch::roll(grid, {g.shift, g.shift}, {1, 2});
  return grid.reshape({B, T, C});
}

torch::Tensor GnnModel::linear(int stage, int j, const torch::Tensor& x) const {
  auto& lin = linears_[stage][j];
  if (!spec_.variant.int8()) return lin->forward(x);
  StageRanges& r = ranges_[stage];
  if (calibrating_) {
    auto xf = float_of(x);
    r.lin_in[j].observe(xf);
    auto y = lin->forward(xf);
    r.lin_out[j].observe(y);
    return y;
  }
  auto xq = x.is_quantized() ? x : quantize(x, r.lin_in[j]);
  auto y = call_quantized("quantized::linear", {xq, packed_[stage][j], r.lin_out[j].scale(), kZeroPoint}).toTensor();
  return y.dequantize();
}

torch::Tensor GnnModel::dense_aggregate(int stage, const torch::Tensor& mask, const torch::Tensor& h, const AbsMax& h_range) const {
  // GraSp: only the matrix's non-zeros are multiplied (a kept mask is sparse already, dense_mask; a
  // matrix made in this run is compressed here). Never with int8 (check_variant_supported).
  if (spec_.variant.grasp) return torch::mm(mask.is_sparse() ? mask : mask.to_sparse(), h);
  if (!spec_.variant.int8()) return torch::matmul(mask, h);
  StageRanges& r = ranges_[stage];
  if (calibrating_) {
    auto out = torch::matmul(mask, h);
    r.agg.observe(out);
    return out;
  }
  // The mask is fixed per graph (precomputed like PreG): its scale comes from its own entries.
  AbsMax mask_range;
  mask_range.observe(mask);
  auto y = call_quantized("quantized::matmul", {quantize(mask, mask_range), quantize(h, h_range), r.agg.scale(), kZeroPoint}).toTensor();
  return y.dequantize();
}

torch::Tensor GnnModel::dense_mask(const std::string& kind, const torch::Tensor& ei, int64_t n) const {
  if (const auto* hit = cached("mask:" + kind, ei, n)) return hit->front();
  torch::Tensor m;
  if (kind == "gcn") {  // PreG + StaGr: the normalised adjacency (self loops included), row = destination
    m = gcn_adjacency(gcn_norm(ei, n), ei, n);
  } else if (kind == "sage") {
    m = torch::zeros({n, n}, float_on(ei));  // the mean over incoming neighbours as a row-normalised matrix
    auto deg = torch::zeros({n}, float_on(ei)).index_add_(0, ei[1], torch::ones({ei.size(1)}, float_on(ei))).clamp_min(1);
    m.index_put_({ei[1], ei[0]}, deg.index_select(0, ei[1]).reciprocal(), true);
  } else {  // gat: each edge's multiplicity (a repeated edge weighs as often as the sparse softmax counts it), self loops added
    m = torch::zeros({n, n}, float_on(ei));
    auto loops = torch::arange(n, ei.options());
    m.index_put_({torch::cat({ei[1], loops}), torch::cat({ei[0], loops})}, torch::ones({ei.size(1) + n}, float_on(ei)), true);
  }
  if (spec_.variant.grasp && kind != "gat") m = m.to_sparse().coalesce();  // GraSp: kept as its non-zeros
  return remember("mask:" + kind, ei, n, {m}).front();
}

torch::Tensor GnnModel::gcn_symmetric(const torch::Tensor& h, const torch::Tensor& ei, int64_t n) const {
  const std::vector<torch::Tensor>* hit = cached("sym", ei, n);
  std::vector<torch::Tensor> v;
  if (hit != nullptr) {
    v = *hit;
  } else {
    // SymG: w(a,b) = w(b,a) = 1/sqrt(deg a deg b), so one weight per undirected pair is stored (the
    // pairs with a < b), plus the self edges and the loops' 1/deg. Needs every a->b to have its b->a.
    auto fwd = std::get<0>((ei[0] * n + ei[1]).sort());
    auto rev = std::get<0>((ei[1] * n + ei[0]).sort());
    if (!torch::equal(fwd, rev))
      throw std::invalid_argument("symmetric normalisation (SymG) needs an undirected graph: some edge a->b of this input has no b->a");
    auto deg = torch::zeros({n}, float_on(ei)).index_add_(0, ei[1], torch::ones({ei.size(1)}, float_on(ei))) + 1;
    auto upper = ei[0] < ei[1], self = ei[0] == ei[1];
    auto a = ei[0].masked_select(upper), b = ei[1].masked_select(upper);
    auto w = (deg.index_select(0, a) * deg.index_select(0, b)).rsqrt();
    auto sa = ei[0].masked_select(self);
    auto sw = deg.index_select(0, sa).reciprocal();
    v = remember("sym", ei, n, {a, b, w, sa, sw, deg.reciprocal()});
  }
  auto out = h * v[5].unsqueeze(1);                                      // the loops
  out.index_add_(0, v[1], h.index_select(0, v[0]) * v[2].unsqueeze(1));  // a -> b
  out.index_add_(0, v[0], h.index_select(0, v[1]) * v[2].unsqueeze(1));  // b -> a, the same weight
  if (v[3].numel() > 0) out.index_add_(0, v[3], h.index_select(0, v[3]) * v[4].unsqueeze(1));
  return out;
}

torch::Tensor GnnModel::gat_dense(int s, const torch::Tensor& x, const torch::Tensor& ei, int64_t n) const {
  const StageSpec& sp = spec_.stages[s];
  const int64_t H = sp.heads, D = sp.out_width / sp.heads;
  auto h = linear(s, 0, x).view({n, H, D});
  auto a_src = (h * params_[s][0]).sum(-1).t(), a_dst = (h * params_[s][1]).sum(-1).t();  // [H, n]
  const torch::Tensor mask = dense_mask("gat", ei, n);                                    // [dst, src]
  torch::Tensor logits;                                                                   // [H, dst, src]
  if (spec_.variant.grax2)
    logits = torch::leaky_relu(a_src, 0.2).unsqueeze(1).expand({H, n, n});  // GrAx2
  else
    logits = torch::leaky_relu(a_dst.unsqueeze(2) + a_src.unsqueeze(1), 0.2);
  torch::Tensor alpha;
  if (spec_.variant.select_mask) {
    // The out-of-the-box mapping (GraNNite Figs. 5, 12 left): Greater and Select put -inf on non-edges,
    // then a plain softmax (a repeated edge counts once here).
    alpha = torch::softmax(torch::where(mask.gt(0), logits, -std::numeric_limits<float>::infinity()), -1);
  } else if (spec_.variant.grax1) {
    // GrAx1: a large negative added on non-edges (a repeated edge counts once here).
    alpha = torch::softmax(logits + (mask.clamp_max(1) - 1) * 1e4, -1);
  } else {  // EffOp (GraNNite Fig. 12 right): the mask multiplied in
    auto ex = (logits - logits.amax(-1, true)).exp() * mask;
    alpha = ex / ex.sum(-1, true);
  }
  auto agg = torch::matmul(alpha, h.permute({1, 0, 2}));  // [H, n, D]
  return agg.permute({1, 0, 2}).reshape({n, H * D});
}

torch::Tensor GnnModel::run_stage(const SplitState& st, int s) const {
  const StageSpec& sp = spec_.stages[s];
  const ModelVariant& v = spec_.variant;
  const bool last = s + 1 == num_stages();
  if (sp.op == "knn") return knn(float_of(stage_input(st, s)), sp.k);
  if (sp.op == "graph_prep") {  // GrAd: the normalised adjacency made in every run, for the gcn stages after it
    if (!st.edge_index.defined()) throw std::invalid_argument("stage " + sp.name + " needs the graph");
    const int64_t n = stage_input(st, s).size(0);
    return gcn_adjacency(gcn_normalisation(st.edge_index, n), st.edge_index, n);
  }
  if (sp.op == "add") {  // a residual sum of equal shapes [B, C, H, W], then its activation in place
    torch::Tensor sum;
    for (int p : sp.inputs) {
      auto it = st.tensors.find(p);
      if (it == st.tensors.end()) throw std::invalid_argument("state lacks the input of stage " + sp.name);
      if (sum.defined())
        sum.add_(float_of(it->second));  // accumulated in place: one tensor of the output's shape at its peak
      else
        sum = float_of(it->second).clone();
    }
    return activate(sum, sp.activation);
  }
  const torch::Tensor xin = stage_input(st, s);  // int8 when an INT8 variant kept it so
  const torch::Tensor x = float_of(xin);
  if (sp.op == "conv") {  // x [B, C, H, W]: the convolution, BatchNorm with its running statistics, the activation
    const auto& p = params_[s];
    auto y = torch::conv2d(x, p[0], {}, sp.stride, sp.kernel / 2, 1, sp.groups);
    y = torch::batch_norm(y, p[1], p[2], p[3], p[4], /*training=*/false, 0.1, 1e-5, /*cudnn_enabled=*/true);
    return activate(y, sp.activation);
  }
  if (sp.op == "maxpool") return torch::max_pool2d(x, sp.kernel, sp.stride, sp.kernel / 2);
  if (sp.op == "patch_embed" || sp.op == "layernorm" || sp.op == "attention" || sp.op == "mlp" || sp.op == "patch_merge")
    return run_transformer_stage(s, x);
  if (sp.op == "pool" && sp.pool_mode == "class_token") return x.select(1, 0).contiguous();  // tokens [B, T, D]: ViT's class token
  if (sp.op == "se") {  // x [B, C, H, W]: per channel, hardsigmoid(W2 relu(W1 mean + b1) + b2) scales the map
    auto scale = torch::hardsigmoid(linear(s, 1, torch::relu(linear(s, 0, x.mean({2, 3})))));
    return x * scale.unsqueeze(-1).unsqueeze(-1);
  }
  if (sp.op == "edgeconv") {
    auto nb = gather_neighbours(x, knn(x, sp.k));  // [B, N, k, F]
    auto xi = x.unsqueeze(2).expand_as(nb);
    auto e = linear(s, 0, torch::cat({xi, nb - xi}, -1));  // [B, N, k, out]
    return torch::leaky_relu(e, 0.2).amax(2);
  }
  if (sp.op == "aggregate") {
    torch::Tensor idx;
    for (int p : sp.inputs)
      if (p >= 0 && spec_.stages[p].op == "knn") idx = st.tensors.at(p);
    return gather_neighbours(x, idx).amax(2);
  }
  if (sp.op == "combine" || sp.op == "linear") return torch::relu(linear(s, 0, xin));
  if (sp.op == "fc") {
    auto y = linear(s, 0, xin);
    return last ? y : activate(y, sp.activation.empty() ? "relu" : sp.activation);
  }
  if (sp.op == "pool" && x.dim() == 4) {  // an image's feature map [B, C, H, W]: over its pixels
    auto mx = x.amax({2, 3}), mean = x.mean({2, 3});
    if (sp.pool_mode == "max") return mx;
    if (sp.pool_mode == "mean") return mean;
    return torch::cat({mx, mean}, -1);
  }
  if (sp.op == "pool") {
    const int64_t dim = x.dim() - 2;  // the node dimension
    // Padded inputs pool over their real nodes only (the mask of NodePad).
    torch::Tensor rows = st.real_nodes > 0 && x.dim() == 2 ? x.narrow(0, 0, st.real_nodes) : x;
    if (st.graph_nodes.size() > 1 && x.dim() == 2) {
      // A stacked batch: each graph pools over its own rows, one row per graph.
      std::vector<torch::Tensor> per;
      std::int64_t at = 0;
      for (std::int64_t k : st.graph_nodes) {
        const torch::Tensor g = rows.narrow(0, at, k);
        at += k;
        const torch::Tensor gmx = g.amax(0, true), gmean = g.mean(0, true);
        per.push_back(sp.pool_mode == "max" ? gmx : sp.pool_mode == "mean" ? gmean : torch::cat({gmx, gmean}, -1));
      }
      return torch::cat(per, 0);
    }
    auto mx = rows.amax(dim, rows.dim() == 2), mean = rows.mean(dim, rows.dim() == 2);
    if (sp.pool_mode == "max") return mx;
    if (sp.pool_mode == "mean") return mean;
    return torch::cat({mx, mean}, -1);
  }
  const torch::Tensor& ei = st.edge_index;
  if (!ei.defined()) throw std::invalid_argument("stage " + sp.name + " needs the graph");
  const int64_t n = x.size(0);
  if (sp.op == "gcn") {
    torch::Tensor agg, given;  // given: the matrix of a graph_prep stage among the inputs (GrAd)
    for (int p : sp.inputs)
      if (p >= 0 && spec_.stages[p].op == "graph_prep") given = st.tensors.at(p);
    if (given.defined()) {
      agg = dense_aggregate(s, given, linear(s, 0, xin), ranges_[s].lin_out[0]);
    } else if (v.dense()) {
      agg = dense_aggregate(s, dense_mask("gcn", ei, n), linear(s, 0, xin), ranges_[s].lin_out[0]);
    } else if (v.normalisation == ModelVariant::Normalisation::symmetric) {
      agg = gcn_symmetric(linear(s, 0, xin), ei, n);
    } else {
      const auto norm = gcn_norm(ei, n);
      agg = aggregate_messages(linear(s, 0, xin), norm[0], norm[1], norm[2], n);
    }
    auto out = agg + params_[s][0];
    return last ? out : torch::relu(out);
  }
  if (sp.op == "sage") {
    torch::Tensor mean;
    if (v.dense()) {
      mean = dense_aggregate(s, dense_mask("sage", ei, n), x, ranges_[s].lin_in[0]);
    } else {
      auto deg = torch::zeros({n}, x.options()).index_add_(0, ei[1], torch::ones({ei.size(1)}, x.options())).clamp_min(1);
      mean = aggregate_messages(x, ei[0], ei[1], torch::Tensor(), n) / deg.unsqueeze(1);
    }
    auto out = linear(s, 0, xin) + linear(s, 1, mean);
    return last ? out : torch::relu(out);
  }
  if (sp.op == "gat") {
    torch::Tensor agg;
    if (v.dense()) {
      agg = gat_dense(s, xin, ei, n);
    } else {
      const int64_t H = sp.heads, D = sp.out_width / sp.heads;
      auto loops = torch::arange(n, ei.options());
      auto src = torch::cat({ei[0], loops}), dst = torch::cat({ei[1], loops});
      auto h = linear(s, 0, xin).view({n, H, D});
      auto a_src = (h * params_[s][0]).sum(-1), a_dst = (h * params_[s][1]).sum(-1);  // [n, H]
      // GrAx2: one LeakyReLU'd score per source node, gathered; the destination's term cancels in the softmax.
      auto e = v.grax2 ? torch::leaky_relu(a_src, 0.2).index_select(0, src)
                       : torch::leaky_relu(a_src.index_select(0, src) + a_dst.index_select(0, dst), 0.2);  // [E, H]
      auto alpha = edge_softmax(e, dst, n);  // [E, H]: softmax over each node's incoming edges
      if (chunks_ == 1) {                    // all heads at once: one gather and one scatter of E x H x D messages
        auto msg = h.index_select(0, src) * alpha.unsqueeze(2);
        agg = torch::zeros({n, H, D}, msg.options()).index_add_(0, dst, msg).reshape({n, H * D});
      } else {  // feature decomposition: head by head, each in chunks
        std::vector<torch::Tensor> heads;
        for (int64_t k = 0; k < H; ++k) heads.push_back(aggregate_messages(h.select(1, k), src, dst, alpha.select(1, k).contiguous(), n));
        agg = torch::cat(heads, 1);
      }
    }
    auto out = agg + params_[s][2];
    return last ? out : torch::elu(out);
  }
  bad(sp, "no LibTorch implementation for this op");
}

}  // namespace coinfer::models
