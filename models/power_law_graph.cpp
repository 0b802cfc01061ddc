#include "models/power_law_graph.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/random_stream.hpp"

namespace coinfer::models {

namespace {

// Walker's alias method: O(1) draws in proportion to the weights.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& w) : prob_(w.size()), alias_(w.size()) {
    const size_t n = w.size();
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<double> scaled(n);
    std::vector<std::uint32_t> small, large;
    for (size_t i = 0; i < n; ++i) {
      scaled[i] = w[i] * static_cast<double>(n) / total;
      (scaled[i] < 1 ? small : large).push_back(static_cast<std::uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back(), l = large.back();
      small.pop_back();
      prob_[s] = scaled[s], alias_[s] = l;
      scaled[l] -= 1 - scaled[s];
      if (scaled[l] < 1) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (std::uint32_t i : large) prob_[i] = 1, alias_[i] = i;
    for (std::uint32_t i : small) prob_[i] = 1, alias_[i] = i;
  }
  std::int64_t draw(RandomStream& rng) const {
    const double u = rng.next_unit() * static_cast<double>(prob_.size());
    const auto i = std::min(static_cast<size_t>(u), prob_.size() - 1);
    return (u - static_cast<double>(i)) < prob_[i] ? static_cast<std::int64_t>(i) : static_cast<std::int64_t>(alias_[i]);
  }

 private:
  std::vector<double> prob_;
  std::vector<std::uint32_t> alias_;
};

}  // namespace

PowerLawGraph make_power_law_graph(const PowerLawGraphSpec& spec) {
  if (spec.nodes < 2) throw std::invalid_argument("a graph needs at least 2 nodes");
  if (spec.directed_edges < 2) throw std::invalid_argument("a graph needs at least 2 directed edges");
  if (!(spec.gamma > 2)) throw std::invalid_argument("the degree exponent gamma must be > 2");
  const std::int64_t n = spec.nodes, pairs = spec.directed_edges / 2;
  // w_i = (i + i0)^-a with a = 1/(gamma-1). The heaviest node's expected degree is
  // 2 * pairs * w_0 / sum(w); i0 grows until that is at most 2 sqrt(2 pairs) (and n - 1).
  const double a = 1.0 / (spec.gamma - 1);
  const double cap = std::min(static_cast<double>(n - 1), 2 * std::sqrt(2.0 * static_cast<double>(pairs)));
  std::vector<double> w(static_cast<size_t>(n));
  double i0 = 1;
  for (int guard = 0; guard < 60; ++guard, i0 *= 2) {
    double total = 0;
    for (std::int64_t i = 0; i < n; ++i) total += w[static_cast<size_t>(i)] = std::pow(static_cast<double>(i) + i0, -a);
    if (2.0 * static_cast<double>(pairs) * w[0] / total <= cap) break;
  }
  RandomStream rng(spec.seed, StreamPurpose::graph_generation, 0);
  // Shuffled node ids (Fisher-Yates), so heavy nodes are not the first rows.
  std::vector<std::int64_t> id(static_cast<size_t>(n));
  std::iota(id.begin(), id.end(), 0);
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(id[static_cast<size_t>(i)], id[rng.next_u64() % static_cast<std::uint64_t>(i + 1)]);
  const AliasTable table(w);
  std::vector<std::int64_t> key(static_cast<size_t>(2 * pairs));  // src * n + dst
  for (std::int64_t k = 0; k < pairs; ++k) {
    std::int64_t u = table.draw(rng), v = table.draw(rng);
    for (int guard = 0; u == v && guard < 1000; ++guard) v = table.draw(rng);
    if (u == v) v = (u + 1) % n;
    u = id[static_cast<size_t>(u)], v = id[static_cast<size_t>(v)];
    key[static_cast<size_t>(2 * k)] = u * n + v;
    key[static_cast<size_t>(2 * k + 1)] = v * n + u;
  }
  std::sort(key.begin(), key.end());
  PowerLawGraph g;
  g.nodes = n;
  g.edge_index = torch::empty({2, 2 * pairs}, torch::kInt64);
  std::int64_t* src = g.edge_index[0].data_ptr<std::int64_t>();
  std::int64_t* dst = g.edge_index[1].data_ptr<std::int64_t>();
  std::int64_t repeats = 0, run = 0;
  for (size_t k = 0; k < key.size(); ++k) {
    src[k] = key[k] / n, dst[k] = key[k] % n;
    if (k > 0 && key[k] == key[k - 1]) ++repeats;
    run = (k > 0 && src[k] == src[k - 1]) ? run + 1 : 1;
    g.max_degree = std::max(g.max_degree, run);
  }
  g.repeated_share = static_cast<double>(repeats) / static_cast<double>(key.size());
  return g;
}

}  // namespace coinfer::models
