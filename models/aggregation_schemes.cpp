#include "models/aggregation_schemes.hpp"
#include "core/enum_names.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace coinfer::models {

namespace {
constexpr auto kSchemeNames = enum_names<AggregationScheme>({"standard", "csr", "sliced"});
static_assert(kSchemeNames.names_each_of(AggregationScheme::standard, AggregationScheme::sliced));
}  // namespace

const char* scheme_name(AggregationScheme s) { return kSchemeNames.name(s); }

AggregationScheme scheme_from_name(const std::string& name) {
  if (const auto s = kSchemeNames.value(name)) return *s;
  throw std::invalid_argument("unknown aggregation scheme '" + name + "' (" + kSchemeNames.listed() + ")");
}

namespace {

void check_edges(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight) {
  if (h.dim() != 2) throw std::invalid_argument("aggregation needs node features [n, F]");
  if (src.dim() != 1 || dst.dim() != 1 || src.size(0) != dst.size(0)) throw std::invalid_argument("aggregation needs src and dst of one length");
  if (weight.defined() && (weight.dim() != 1 || weight.size(0) != src.size(0)))
    throw std::invalid_argument("aggregation weights need one value per edge");
}

}  // namespace

torch::Tensor scatter_aggregate(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight,
                                std::int64_t n) {
  check_edges(h, src, dst, weight);
  // PyG's propagate: message = x_j (index_select of the source rows), times the edge weight, then
  // torch_geometric.utils.scatter(reduce='sum'): the destination index broadcast over the feature
  // columns (a view, no copy) and scatter_add_ into zeros.
  auto msg = h.index_select(0, src);
  if (weight.defined()) msg = msg * weight.unsqueeze(1);
  return torch::zeros({n, h.size(1)}, h.options()).scatter_add_(0, dst.unsqueeze(1).expand_as(msg), msg);
}

std::int64_t slice_width_for(std::int64_t width, std::int64_t slices) {
  if (slices < 1) throw std::invalid_argument("feature slices must be >= 1");
  return std::max<std::int64_t>(1, (width + slices - 1) / slices);
}

torch::Tensor sliced_aggregate(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight,
                               std::int64_t n, std::int64_t slice_width) {
  check_edges(h, src, dst, weight);
  if (slice_width < 1) throw std::invalid_argument("a feature slice must be >= 1 column wide");
  const std::int64_t F = h.size(1);
  if (slice_width >= F) return scatter_aggregate(h, src, dst, weight, n);
  // Each slice's sums go straight to their columns of the result (what torch.cat of the slices gives,
  // without holding every slice's result and the concatenation at once).
  auto out = torch::empty({n, F}, h.options());
  for (std::int64_t c = 0; c < F; c += slice_width) {
    const std::int64_t w = std::min(slice_width, F - c);
    // The slice of every vertex, contiguous: n x w floats that the random gathers below reuse from cache.
    const torch::Tensor slice = h.narrow(1, c, w).contiguous();
    out.narrow(1, c, w).copy_(scatter_aggregate(slice, src, dst, weight, n));
  }
  return out;
}

torch::Tensor edge_softmax(const torch::Tensor& e, const torch::Tensor& dst, std::int64_t n) {
  if (e.dim() != 2 || dst.dim() != 1 || e.size(0) != dst.size(0)) throw std::invalid_argument("edge_softmax needs scores [E, H] and dst [E]");
  const std::int64_t H = e.size(1);
  auto mx = torch::full({n, H}, -std::numeric_limits<float>::infinity(), e.options());
  mx = mx.scatter_reduce(0, dst.unsqueeze(1).expand({dst.size(0), H}), e, "amax", true);
  auto ex = (e - mx.index_select(0, dst)).exp();
  auto denom = torch::zeros({n, H}, ex.options()).index_add_(0, dst, ex);
  return ex / denom.index_select(0, dst);
}

CsrAdjacency to_csr(const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight, std::int64_t n) {
  if (src.dim() != 1 || dst.dim() != 1 || src.size(0) != dst.size(0)) throw std::invalid_argument("to_csr needs src and dst of one length");
  // SparseTensor(row=dst, col=src): edges sorted by (destination, source), then the row pointer.
  const auto order = std::get<1>((dst * n + src).sort());
  CsrAdjacency a;
  a.n = n;
  a.col = src.index_select(0, order).contiguous();
  a.value = weight.defined() ? weight.index_select(0, order).contiguous() : torch::ones({src.size(0)}, torch::kFloat32);
  const auto counts = torch::bincount(dst, {}, n);
  a.row_ptr = torch::cat({torch::zeros({1}, torch::kInt64), counts.cumsum(0)}).contiguous();
  return a;
}

torch::Tensor csr_aggregate(const CsrAdjacency& a, const torch::Tensor& h_in) {
  if (h_in.dim() != 2 || h_in.size(0) < a.n) throw std::invalid_argument("csr_aggregate needs node features [n, F]");
  const torch::Tensor h = h_in.contiguous();
  const std::int64_t F = h.size(1);
  auto out = torch::zeros({a.n, F}, h.options());
  const std::int64_t* rp = a.row_ptr.data_ptr<std::int64_t>();
  const std::int64_t* col = a.col.data_ptr<std::int64_t>();
  const float* val = a.value.data_ptr<float>();
  const float* x = h.data_ptr<float>();
  float* y = out.data_ptr<float>();
  // torch_sparse's CPU spmm: rows in parallel, each row's neighbours accumulated in place.
  at::parallel_for(0, a.n, 256, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      float* yr = y + r * F;
      for (std::int64_t e = rp[r]; e < rp[r + 1]; ++e) {
        const float w = val[e];
        const float* xs = x + col[e] * F;
        for (std::int64_t f = 0; f < F; ++f) yr[f] += w * xs[f];
      }
    }
  });
  return out;
}

}  // namespace coinfer::models
