#pragma once
// Large synthetic graphs with a published graph's statistics (node count, edge count, average degree,
// a heavy-tailed degree distribution), for measuring aggregation on graphs the size of Pubmed,
// ogbn-proteins and Reddit without their files (the feature decomposition paper's Table II;
// models/README.md "Graphs for the aggregation study").
//
// The model is Chung-Lu: node i gets a weight w_i = (i + i0)^(-1 / (gamma - 1)) (a power law of
// exponent gamma, i0 chosen so the heaviest node's expected degree stays below sqrt of the edge count
// times 2, about what Reddit and ogbn-proteins show), each undirected edge draws both endpoints in proportion to w (Walker's alias table), self
// loops are drawn again, and the edge is stored in both directions, so a node's expected degree is
// proportional to its weight and the directed edge count is exactly what was asked (rounded down to
// even). Repeated pairs are kept (a multigraph, as an uncoalesced edge list; their share is reported).
// Node ids are shuffled, and the edge list is sorted by source as PyG's coalesced datasets are.
// Random streams: (seed, graph_generation, 0). Memory: 16 bytes per directed edge plus the sort.
#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace coinfer::models {

struct PowerLawGraphSpec {
  std::int64_t nodes = 0;
  std::int64_t directed_edges = 0;  // both directions counted; average degree = directed_edges / nodes
  double gamma = 2.5;               // degree exponent (heavy tail; 2 < gamma)
  std::uint64_t seed = 1;
};

struct PowerLawGraph {
  torch::Tensor edge_index;  // [2, E] int64, row 0 sources (sorted), row 1 destinations
  std::int64_t nodes = 0;
  std::int64_t max_degree = 0;
  double repeated_share = 0;  // share of directed edges that repeat an earlier (src, dst) pair
};

// Throws std::invalid_argument for nodes < 2, directed_edges < 2, or gamma <= 2.
PowerLawGraph make_power_law_graph(const PowerLawGraphSpec& spec);

}  // namespace coinfer::models
