// The three aggregation schemes of the feature decomposition paper compute the same sums, and the
// synthetic graphs have the statistics asked of them.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "models/aggregation_schemes.hpp"
#include "models/power_law_graph.hpp"

using namespace coinfer::models;

namespace {

// A random directed multigraph with n nodes and e edges (self loops allowed), and random weights.
struct RandomEdges {
  torch::Tensor src, dst, w;
};
RandomEdges random_edges(std::int64_t n, std::int64_t e, std::uint64_t seed) {
  torch::manual_seed(seed);
  return {torch::randint(0, n, {e}, torch::kInt64), torch::randint(0, n, {e}, torch::kInt64), torch::rand({e})};
}

}  // namespace

TEST(AggregationSchemes, AHandWorkedExample) {
  // Three nodes, edges 0->1 (w 2), 2->1 (w 0.5), 1->0 (w 1); h rows [1, 10], [2, 20], [4, 40].
  // out[1] = 2*[1,10] + 0.5*[4,40] = [4, 40]; out[0] = [2, 20]; out[2] = [0, 0].
  auto h = torch::tensor({1.f, 10.f, 2.f, 20.f, 4.f, 40.f}).view({3, 2});
  auto src = torch::tensor({0, 2, 1}, torch::kInt64), dst = torch::tensor({1, 1, 0}, torch::kInt64);
  auto w = torch::tensor({2.f, 0.5f, 1.f});
  auto want = torch::tensor({2.f, 20.f, 4.f, 40.f, 0.f, 0.f}).view({3, 2});
  EXPECT_TRUE(torch::equal(scatter_aggregate(h, src, dst, w, 3), want));
  EXPECT_TRUE(torch::equal(sliced_aggregate(h, src, dst, w, 3, 1), want));
  EXPECT_TRUE(torch::equal(csr_aggregate(to_csr(src, dst, w, 3), h), want));
  // Without weights: plain sums (out[1] = [5, 50]).
  EXPECT_FLOAT_EQ(sliced_aggregate(h, src, dst, torch::Tensor(), 3, 1)[1][1].item<float>(), 50.f);
}

TEST(AggregationSchemes, EveryScheme_EqualsTheStandardSumOnRandomGraphs) {
  // Widths that slices divide and do not divide, slice widths from 1 to wider than the features.
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    for (std::int64_t F : {1, 7, 16, 33}) {
      const std::int64_t n = 50 + static_cast<std::int64_t>(seed) * 37, e = n * 9;
      const RandomEdges g = random_edges(n, e, seed);
      auto h = torch::randn({n, F});
      for (const torch::Tensor& w : {g.w, torch::Tensor()}) {
        const auto ref = scatter_aggregate(h, g.src, g.dst, w, n);
        // A double-precision reference: float summation order differs by scheme.
        const auto exact = torch::zeros({n, F}, torch::kFloat64)
                               .index_add_(0, g.dst,
                                           h.to(torch::kFloat64).index_select(0, g.src) *
                                               (w.defined() ? w.to(torch::kFloat64) : torch::ones({e}, torch::kFloat64)).unsqueeze(1));
        EXPECT_LT((ref.to(torch::kFloat64) - exact).abs().max().item<double>(), 1e-5) << "seed " << seed << " F " << F;
        for (std::int64_t sw : {1, 2, 3, 8, 64})
          EXPECT_LT((sliced_aggregate(h, g.src, g.dst, w, n, sw).to(torch::kFloat64) - exact).abs().max().item<double>(), 1e-5)
              << "slices of " << sw << ", seed " << seed << " F " << F;
        EXPECT_LT((csr_aggregate(to_csr(g.src, g.dst, w, n), h).to(torch::kFloat64) - exact).abs().max().item<double>(), 1e-5);
      }
    }
}

TEST(AggregationSchemes, SliceWidthsFollowTorchChunk) {
  EXPECT_EQ(slice_width_for(64, 8), 8);
  EXPECT_EQ(slice_width_for(10, 3), 4);  // torch.chunk(10 columns, 3) gives 4, 4, 2
  EXPECT_EQ(slice_width_for(3, 8), 1);   // more slices than columns: one column each
  EXPECT_THROW(slice_width_for(3, 0), std::invalid_argument);
  EXPECT_THROW(scheme_from_name("sparse"), std::invalid_argument);
  EXPECT_EQ(scheme_from_name("sliced"), AggregationScheme::sliced);
}

TEST(AggregationSchemes, BadShapesAreRefused) {
  auto h = torch::randn({4, 2});
  auto idx = torch::tensor({0, 1}, torch::kInt64);
  EXPECT_THROW(scatter_aggregate(h, idx, torch::tensor({0}, torch::kInt64), torch::Tensor(), 4), std::invalid_argument);
  EXPECT_THROW(sliced_aggregate(h, idx, idx, torch::rand({3}), 4, 1), std::invalid_argument);
  EXPECT_THROW(sliced_aggregate(h, idx, idx, torch::Tensor(), 4, 0), std::invalid_argument);
}

TEST(PowerLawGraph, HasTheAskedSizeAHeavyTailAndNoSelfLoops) {
  PowerLawGraphSpec spec;
  spec.nodes = 5000;
  spec.directed_edges = 100000;  // average degree 20
  const PowerLawGraph g = make_power_law_graph(spec);
  ASSERT_EQ(g.edge_index.size(0), 2);
  EXPECT_EQ(g.edge_index.size(1), 100000);
  const auto src = g.edge_index[0], dst = g.edge_index[1];
  EXPECT_EQ((src == dst).sum().item<std::int64_t>(), 0);
  EXPECT_GE(src.min().item<std::int64_t>(), 0);
  EXPECT_LT(std::max(src.max().item<std::int64_t>(), dst.max().item<std::int64_t>()), 5000);
  // Sorted by source (PyG's coalesced order), and symmetric: every a->b has its b->a.
  EXPECT_TRUE(torch::equal(src, std::get<0>(src.sort())));
  EXPECT_TRUE(torch::equal(std::get<0>((src * 5000 + dst).sort()), std::get<0>((dst * 5000 + src).sort())));
  // A heavy tail: the largest degree far above the mean (20), yet within the cap 2 sqrt(E) = 632.
  const auto deg = torch::bincount(src, {}, 5000);
  EXPECT_GT(g.max_degree, 5 * 20);
  EXPECT_LE(g.max_degree, 2 * 632);
  EXPECT_EQ(g.max_degree, deg.max().item<std::int64_t>());
  EXPECT_LT(g.repeated_share, 0.1);
  // The same seed, the same graph; another seed, another.
  EXPECT_TRUE(torch::equal(make_power_law_graph(spec).edge_index, g.edge_index));
  spec.seed = 2;
  EXPECT_FALSE(torch::equal(make_power_law_graph(spec).edge_index, g.edge_index));
  spec.gamma = 2;
  EXPECT_THROW(make_power_law_graph(spec), std::invalid_argument);
}

TEST(AggregationSchemes, EdgeSoftmaxNormalisesEachDestinationsIncomingEdges) {
  // Edges 0->2 (score 0), 1->2 (score ln 3), 2->0 (score 5), one head: node 2's weights are 1/4 and
  // 3/4 (e^0 : e^ln3 = 1 : 3), node 0's single edge gets 1.
  auto e = torch::tensor({0.f, std::log(3.f), 5.f}).view({3, 1});
  auto dst = torch::tensor({2, 2, 0}, torch::kInt64);
  auto a = edge_softmax(e, dst, 3);
  EXPECT_NEAR(a[0][0].item<float>(), 0.25f, 1e-6);
  EXPECT_NEAR(a[1][0].item<float>(), 0.75f, 1e-6);
  EXPECT_NEAR(a[2][0].item<float>(), 1.f, 1e-6);
  EXPECT_THROW(edge_softmax(e, torch::tensor({0}, torch::kInt64), 3), std::invalid_argument);
}
