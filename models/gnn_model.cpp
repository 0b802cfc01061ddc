#include "models/gnn_model.hpp"

#include <stdexcept>

namespace coinfer::models {

namespace {
[[noreturn]] void bad(const StageSpec& s, const std::string& why) {
  throw std::invalid_argument("model stage '" + s.name + "' (" + s.op + "): " + why);
}
bool is_point_cloud(const ModelSpec& m) { return m.dataset.kind == "point_cloud"; }
}  // namespace

GnnModel::GnnModel(const ModelSpec& spec, std::uint64_t seed) : spec_(spec) {
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
      lin.emplace_back(torch::nn::LinearOptions(in, out));                 // self
      lin.emplace_back(torch::nn::LinearOptions(in, out).bias(false));    // neighbours
    } else if (s.op == "gat") {
      if (s.heads < 1 || out % s.heads) bad(s, "out width must be a multiple of heads");
      lin.emplace_back(torch::nn::LinearOptions(in, out).bias(false));
      const int d = out / s.heads;
      extra.push_back(torch::randn({s.heads, d}) * (1.0 / std::sqrt(d)));  // a_src
      extra.push_back(torch::randn({s.heads, d}) * (1.0 / std::sqrt(d)));  // a_dst
      extra.push_back(torch::zeros({out}));                                 // bias
    } else if (s.op != "knn" && s.op != "aggregate" && s.op != "pool") {
      bad(s, "no LibTorch implementation for this op");
    }
    for (auto& l : lin) l->eval();
    linears_.push_back(lin);
    params_.push_back(extra);
  }
}

void GnnModel::set_feature_chunks(int p) {
  if (p < 1) throw std::invalid_argument("feature chunks must be >= 1");
  chunks_ = p;
}

SplitState GnnModel::start(const GraphSample& in) const {
  if (!in.x.defined() || in.x.scalar_type() != torch::kFloat32) throw std::invalid_argument("input x must be a float32 tensor");
  const int64_t feat = in.x.size(-1);
  if (feat != spec_.dataset.features)
    throw std::invalid_argument("input has " + std::to_string(feat) + " features; " + spec_.name + "/" +
                                spec_.dataset.name + " expects " + std::to_string(spec_.dataset.features));
  if (is_point_cloud(spec_) && in.x.dim() != 3) throw std::invalid_argument("point clouds are x [B, N, features]");
  if (!is_point_cloud(spec_)) {
    if (in.x.dim() != 2) throw std::invalid_argument("graphs are x [N, features]");
    if (!in.edge_index.defined() || in.edge_index.dim() != 2 || in.edge_index.size(0) != 2 ||
        in.edge_index.scalar_type() != torch::kInt64)
      throw std::invalid_argument("graphs need edge_index [2, E] int64");
  }
  SplitState st;
  st.tensors[-1] = in.x;
  if (!is_point_cloud(spec_)) st.edge_index = in.edge_index;
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
    throw std::out_of_range("cannot run to split " + std::to_string(end) + " from " + std::to_string(st.next_stage) +
                            " (model has " + std::to_string(num_stages()) + " stages)");
  torch::NoGradGuard no_grad;
  for (int s = st.next_stage; s < end; ++s) {
    torch::Tensor out = run_stage(st, s);
    st.tensors[s] = out;
    st.next_stage = s + 1;
    drop_dead(st);
  }
}

torch::Tensor GnnModel::output(const SplitState& st) const {
  if (st.next_stage != num_stages()) throw std::out_of_range("state is not at the end of the model");
  return st.tensors.at(num_stages() - 1);
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
  for (const auto& kv : st.tensors) b += kv.second.numel() * kv.second.element_size();
  if (st.edge_index.defined()) b += st.edge_index.numel() * st.edge_index.element_size();
  return b;
}

torch::Tensor GnnModel::stage_input(const SplitState& st, int s) const {
  std::vector<torch::Tensor> parts;
  for (int p : spec_.stages[s].inputs) {
    if (p >= 0 && spec_.stages[p].op == "knn") continue;  // the graph, not features
    auto it = st.tensors.find(p);
    if (it == st.tensors.end()) throw std::invalid_argument("state lacks the input of stage " + spec_.stages[s].name);
    parts.push_back(it->second);
  }
  return parts.size() == 1 ? parts[0] : torch::cat(parts, -1);
}

namespace {
// Indices [B, N, k] of each point's k nearest neighbours (itself included) by Euclidean distance.
torch::Tensor knn(const torch::Tensor& x, int k) {
  auto sq = (x * x).sum(-1, true);                             // [B, N, 1]
  auto d = sq - 2 * torch::matmul(x, x.transpose(1, 2)) + sq.transpose(1, 2);
  return std::get<1>(d.topk(std::min<int64_t>(k, x.size(1)), -1, /*largest=*/false));
}
// x [B, N, F], idx [B, N, k] -> neighbours [B, N, k, F]
torch::Tensor gather_neighbours(const torch::Tensor& x, const torch::Tensor& idx) {
  const auto B = x.size(0), N = x.size(1), K = idx.size(2), F = x.size(2);
  auto flat = idx.reshape({B, N * K, 1}).expand({B, N * K, F});
  return x.gather(1, flat).reshape({B, N, K, F});
}
}  // namespace

const torch::Tensor& GnnModel::gcn_norm(const torch::Tensor& edge_index, int64_t n) const {
  auto key = std::make_pair(static_cast<const void*>(edge_index.data_ptr()), edge_index.size(1));
  auto it = norm_cache_.find(key);
  if (it == norm_cache_.end()) {
    // Symmetric normalisation with self loops: w_e = 1 / sqrt(deg(src) deg(dst)), deg counting the loop.
    auto loops = torch::arange(n, torch::kInt64);
    auto src = torch::cat({edge_index[0], loops});
    auto dst = torch::cat({edge_index[1], loops});
    auto deg = torch::zeros({n}).index_add_(0, dst, torch::ones({dst.size(0)}));
    auto w = deg.index_select(0, src).rsqrt() * deg.index_select(0, dst).rsqrt();
    it = norm_cache_.emplace(key, std::make_pair(torch::stack({src, dst}), w)).first;
  }
  return it->second.first;  // the weights live in .second
}

torch::Tensor GnnModel::aggregate_messages(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst,
                                           const torch::Tensor& weight, int64_t n) const {
  // out[dst] += h[src] * weight, over chunks of the feature dimension (feature decomposition).
  const int64_t F = h.size(1);
  auto out = torch::zeros({n, F}, h.options());
  const int64_t step = (F + chunks_ - 1) / chunks_;
  for (int64_t c = 0; c < F; c += step) {
    const int64_t w = std::min(step, F - c);
    auto msg = h.narrow(1, c, w).index_select(0, src);
    if (weight.defined()) msg = msg * weight.unsqueeze(1);
    out.narrow(1, c, w).index_add_(0, dst, msg);
  }
  return out;
}

torch::Tensor GnnModel::run_stage(const SplitState& st, int s) const {
  const StageSpec& sp = spec_.stages[s];
  auto& lin = linears_[s];
  const bool last = s + 1 == num_stages();
  if (sp.op == "knn") return knn(stage_input(st, s), sp.k);
  torch::Tensor x = stage_input(st, s);
  if (sp.op == "edgeconv") {
    auto nb = gather_neighbours(x, knn(x, sp.k));            // [B, N, k, F]
    auto xi = x.unsqueeze(2).expand_as(nb);
    auto e = lin[0]->forward(torch::cat({xi, nb - xi}, -1));  // [B, N, k, out]
    return torch::leaky_relu(e, 0.2).amax(2);
  }
  if (sp.op == "aggregate") {
    torch::Tensor idx;
    for (int p : sp.inputs)
      if (p >= 0 && spec_.stages[p].op == "knn") idx = st.tensors.at(p);
    return gather_neighbours(x, idx).amax(2);
  }
  if (sp.op == "combine" || sp.op == "linear") return torch::relu(lin[0]->forward(x));
  if (sp.op == "fc") {
    auto y = lin[0]->forward(x);
    return last ? y : torch::relu(y);
  }
  if (sp.op == "pool") {
    const int64_t dim = x.dim() - 2;  // the node dimension
    auto mx = x.amax(dim, x.dim() == 2), mean = x.mean(dim, x.dim() == 2);
    if (sp.pool_mode == "max") return mx;
    if (sp.pool_mode == "mean") return mean;
    return torch::cat({mx, mean}, -1);
  }
  const torch::Tensor& ei = st.edge_index;
  if (!ei.defined()) throw std::invalid_argument("stage " + sp.name + " needs the graph");
  const int64_t n = x.size(0);
  if (sp.op == "gcn") {
    const auto& norm = gcn_norm(ei, n);
    const auto& w = norm_cache_.at({static_cast<const void*>(ei.data_ptr()), ei.size(1)}).second;
    auto out = aggregate_messages(lin[0]->forward(x), norm[0], norm[1], w, n) + params_[s][0];
    return last ? out : torch::relu(out);
  }
  if (sp.op == "sage") {
    auto deg = torch::zeros({n}).index_add_(0, ei[1], torch::ones({ei.size(1)})).clamp_min(1);
    auto mean = aggregate_messages(x, ei[0], ei[1], torch::Tensor(), n) / deg.unsqueeze(1);
    auto out = lin[0]->forward(x) + lin[1]->forward(mean);
    return last ? out : torch::relu(out);
  }
  if (sp.op == "gat") {
    const int64_t H = sp.heads, D = sp.out_width / sp.heads;
    auto loops = torch::arange(n, torch::kInt64);
    auto src = torch::cat({ei[0], loops}), dst = torch::cat({ei[1], loops});
    auto h = lin[0]->forward(x).view({n, H, D});
    auto a_src = (h * params_[s][0]).sum(-1), a_dst = (h * params_[s][1]).sum(-1);  // [n, H]
    auto e = torch::leaky_relu(a_src.index_select(0, src) + a_dst.index_select(0, dst), 0.2);  // [E, H]
    // Softmax over each node's incoming edges.
    auto mx = torch::full({n, H}, -std::numeric_limits<float>::infinity());
    mx = mx.scatter_reduce(0, dst.unsqueeze(1).expand({dst.size(0), H}), e, "amax", true);
    auto ex = (e - mx.index_select(0, dst)).exp();
    auto denom = torch::zeros({n, H}).index_add_(0, dst, ex);
    auto alpha = ex / denom.index_select(0, dst);  // [E, H]
    torch::Tensor agg;
    if (chunks_ == 1) {  // all heads at once: one gather and one scatter of E x H x D messages
      auto msg = h.index_select(0, src) * alpha.unsqueeze(2);
      agg = torch::zeros({n, H, D}).index_add_(0, dst, msg).reshape({n, H * D});
    } else {  // feature decomposition: head by head, each in chunks
      std::vector<torch::Tensor> heads;
      for (int64_t k = 0; k < H; ++k)
        heads.push_back(aggregate_messages(h.select(1, k), src, dst, alpha.select(1, k).contiguous(), n));
      agg = torch::cat(heads, 1);
    }
    auto out = agg + params_[s][2];
    return last ? out : torch::elu(out);
  }
  bad(sp, "no LibTorch implementation for this op");
}

}  // namespace coinfer::models
