#pragma once
// The three ways of aggregating a GNN layer's messages that the feature decomposition paper compares
// (docs/PAPERS.md: the feature decomposition paper, Secs. II-III), written once in LibTorch so that the
// model (models/gnn_model.cpp), the profiler and the measurement of the paper's figures
// (`coinfer aggregation`, cli/aggregation_main.cpp) run the same code:
//
//   standard    PyG's MessagePassing default (gather-apply-scatter): the messages h[src] * w are
//               materialised as one E x F tensor, then scatter-added into an n x F output.
//   csr         PyG's memory-efficient aggregation (torch_sparse SparseTensor): the edge list is first
//               converted to a CSR adjacency sorted by destination (the "format conversion" of the
//               paper's Fig. 4, to_csr), then one fused sparse x dense product with no E x F tensor.
//   sliced      feature decomposition (the paper's Algorithm 1): the feature dimension is cut into
//               slices of `slice_width` columns (its "granularity"); each slice is made contiguous
//               (n x slice_width, small enough to stay in cache), aggregated by the standard scheme
//               over every edge, and each slice's sums are written to its columns of the result
//               (torch.cat's result without holding both). Memory above the standard scheme's output:
//               the slice, its sums and its E x slice_width messages, one slice at a time.
//
// All three compute out[d] = sum over edges (s -> d) of w_e * h[s] (w_e = 1 where no weights are
// given), exactly up to float summation order. Tensors: h [n, F] float32 on the CPU; src, dst [E]
// int64 node indices in [0, n); weight [E] float32 or undefined. No call blocks or advances any
// clock; each allocates its result.
#include <torch/torch.h>

#include <cstdint>

namespace coinfer::models {

enum class AggregationScheme { standard, csr, sliced };
const char* scheme_name(AggregationScheme s);
// "standard" | "csr" | "sliced"; throws std::invalid_argument naming the accepted names otherwise.
AggregationScheme scheme_from_name(const std::string& name);

torch::Tensor scatter_aggregate(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight,
                                std::int64_t n);

// slice_width >= 1 (columns per slice; the last slice may be narrower). slice_width >= F is the
// standard scheme.
torch::Tensor sliced_aggregate(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight,
                               std::int64_t n, std::int64_t slice_width);

// The columns per slice when a feature width F is cut into `slices` parts (torch.chunk's rule:
// ceil(F / slices)).
std::int64_t slice_width_for(std::int64_t width, std::int64_t slices);

// GAT's attention: the softmax of per-edge scores e [E, H] over each destination's incoming edges
// (dst [E] in [0, n)): exp(e - max) / sum, the maximum and the sum taken per destination and head.
torch::Tensor edge_softmax(const torch::Tensor& e, const torch::Tensor& dst, std::int64_t n);

// A CSR adjacency over destinations: row_ptr [n + 1], col [E] (source of each edge, grouped by
// destination), value [E] (weights in the same order; ones where none were given).
struct CsrAdjacency {
  torch::Tensor row_ptr, col, value;
  std::int64_t n = 0;
};
CsrAdjacency to_csr(const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight, std::int64_t n);
// The fused sparse x dense product, rows split over LibTorch's intra-op threads.
torch::Tensor csr_aggregate(const CsrAdjacency& adjacency, const torch::Tensor& h);

}  // namespace coinfer::models
