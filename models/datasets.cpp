#include "models/datasets.hpp"

#include <cmath>
#include <random>
#include <set>
#include <stdexcept>

namespace coinfer::models {

namespace {

// splitmix64: portable, seedable (std:: distributions differ between standard libraries).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
  double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }
};

torch::Tensor point_cloud(std::int64_t cls, std::int64_t n, Rng& rng) {
  const int shape = static_cast<int>(cls % 8), variant = static_cast<int>(cls / 8);
  const double sx = 1.0, sy = 1.0 + 0.25 * variant, sz = 1.0 - 0.15 * variant;
  auto x = torch::empty({n, 3});
  auto a = x.accessor<float, 2>();
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = rng.uniform(), v = rng.uniform(), w = rng.uniform();
    double p[3];
    switch (shape) {
      case 0: {  // sphere
        const double t = std::acos(1 - 2 * u), f = 2 * M_PI * v;
        p[0] = std::sin(t) * std::cos(f), p[1] = std::sin(t) * std::sin(f), p[2] = std::cos(t);
        break;
      }
      case 1: {  // cube surface
        const int face = static_cast<int>(w * 6);
        const double c = face % 2 ? 1 : -1;
        p[face / 2] = c, p[(face / 2 + 1) % 3] = 2 * u - 1, p[(face / 2 + 2) % 3] = 2 * v - 1;
        break;
      }
      case 2:  // cylinder
        p[0] = std::cos(2 * M_PI * u), p[1] = std::sin(2 * M_PI * u), p[2] = 2 * v - 1;
        break;
      case 3: {  // cone
        const double h = std::sqrt(v);
        p[0] = h * std::cos(2 * M_PI * u), p[1] = h * std::sin(2 * M_PI * u), p[2] = 1 - 2 * h;
        break;
      }
      case 4: {  // torus
        const double R = 1, r = 0.3, t = 2 * M_PI * u, f = 2 * M_PI * v;
        p[0] = (R + r * std::cos(f)) * std::cos(t), p[1] = (R + r * std::cos(f)) * std::sin(t), p[2] = r * std::sin(f);
        break;
      }
      case 5:  // wavy plane
        p[0] = 2 * u - 1, p[1] = 2 * v - 1, p[2] = 0.2 * std::sin(3 * p[0]) * std::cos(3 * p[1]);
        break;
      case 6: {  // helix tube
        const double t = 4 * M_PI * u, f = 2 * M_PI * v;
        p[0] = std::cos(t) + 0.2 * std::cos(f) * std::cos(t), p[1] = std::sin(t) + 0.2 * std::cos(f) * std::sin(t),
        p[2] = t / (2 * M_PI) - 1 + 0.2 * std::sin(f);
        break;
      }
      default: {  // two spheres (a dumbbell)
        const double t = std::acos(1 - 2 * u), f = 2 * M_PI * v, c = w < 0.5 ? -0.6 : 0.6;
        p[0] = 0.5 * std::sin(t) * std::cos(f) + c, p[1] = 0.5 * std::sin(t) * std::sin(f), p[2] = 0.5 * std::cos(t);
      }
    }
    a[i][0] = static_cast<float>(p[0] * sx + 0.01 * rng.normal());
    a[i][1] = static_cast<float>(p[1] * sy + 0.01 * rng.normal());
    a[i][2] = static_cast<float>(p[2] * sz + 0.01 * rng.normal());
  }
  x = x - x.mean(0, true);
  return x / x.norm(2, 1).max().clamp_min(1e-6);
}

// Exactly `edges` directed edges on `n` nodes, no self loops.
torch::Tensor graph_edges(std::int64_t n, std::int64_t edges, Rng& rng) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;  // undirected
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  auto add = [&](std::int64_t a, std::int64_t b) {
    if (a == b) return false;
    auto key = std::minmax(a, b);
    if (!seen.insert(key).second) return false;
    pairs.push_back(key);
    return true;
  };
  const std::int64_t want = edges / 2;
  if (n <= 64) {
    for (std::int64_t i = 0; i < n && static_cast<std::int64_t>(pairs.size()) < want; ++i)
      for (std::int64_t d = 1; d <= 2 && i + d < n; ++d) add(i, i + d);  // a +-2 word window
  } else {
    // Preferential attachment: each new node links to m existing ones chosen in proportion to degree.
    const std::int64_t m = std::max<std::int64_t>(1, want / n);
    std::vector<std::int64_t> endpoints;
    for (std::int64_t i = 1; i < n && static_cast<std::int64_t>(pairs.size()) < want; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        std::int64_t t = endpoints.empty() || rng.uniform() < 0.1 ? rng.below(i) : endpoints[rng.below(endpoints.size())];
        if (add(i, t)) endpoints.insert(endpoints.end(), {i, t});
      }
  }
  for (int guard = 0; static_cast<std::int64_t>(pairs.size()) < want && guard < 100 * want + 100; ++guard) add(rng.below(n), rng.below(n));
  auto ei = torch::empty({2, edges}, torch::kInt64);
  auto a = ei.accessor<std::int64_t, 2>();
  std::int64_t k = 0;
  for (const auto& [u, v] : pairs) {
    if (k + 1 >= edges + (edges % 2 ? 0 : 1)) break;
    a[0][k] = u, a[1][k] = v, ++k;
    a[0][k] = v, a[1][k] = u, ++k;
  }
  for (; k < edges; ++k) {  // odd count: one more directed edge
    std::int64_t u = rng.below(n), v = (u + 1) % n;
    a[0][k] = u, a[1][k] = v;
  }
  return ei;
}

}  // namespace

LabelledSample generate_sample(const DatasetSpec& d, std::uint64_t seed, std::int64_t index) {
  Rng rng{seed * 0x2545F4914F6CDD1DULL + static_cast<std::uint64_t>(index) * 0x9E3779B97F4A7C15ULL + 17};
  LabelledSample out;
  if (d.kind == "image") {
    // A synthetic image [1, C, side, side] of standard normal pixels (the statistics of a normalised
    // ImageNet input; no image content: the timing does not depend on it), its label cycling the classes.
    const auto side = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(d.nodes))));
    out.label = index % d.classes;
    auto x = torch::empty({d.features, side * side});
    auto a = x.accessor<float, 2>();
    for (std::int64_t c = 0; c < d.features; ++c)
      for (std::int64_t i = 0; i < side * side; ++i) a[c][i] = static_cast<float>(rng.normal());
    out.sample.x = x.view({1, d.features, side, side});
    return out;
  }
  if (d.kind == "point_cloud") {
    out.label = index % d.classes;
    auto x = point_cloud(out.label, d.nodes, rng);
    if (d.features > 3) x = torch::cat({x, torch::zeros({d.nodes, d.features - 3})}, 1);
    out.sample.x = x.unsqueeze(0);
    return out;
  }
  out.sample.edge_index = graph_edges(d.nodes, d.edges, rng);
  auto x = torch::empty({d.nodes, d.features});
  auto a = x.accessor<float, 2>();
  for (std::int64_t i = 0; i < d.nodes; ++i)
    for (std::int64_t j = 0; j < d.features; ++j) a[i][j] = static_cast<float>(rng.normal());
  out.sample.x = x;
  out.label = rng.below(d.classes);
  out.node_labels = torch::empty({d.nodes}, torch::kInt64);
  for (std::int64_t i = 0; i < d.nodes; ++i) out.node_labels[i] = rng.below(d.classes);
  return out;
}

GraphSample sample_from_file(const PointCloudFile& f, std::int64_t cloud, std::int64_t points) {
  if (cloud < 0 || cloud >= f.clouds)
    throw std::invalid_argument("cloud index " + std::to_string(cloud) + " is outside 0.." + std::to_string(f.clouds - 1));
  if (points <= 0) points = f.points;
  if (points > f.points)
    throw std::invalid_argument("the file has " + std::to_string(f.points) + " points per cloud, " + std::to_string(points) + " asked");
  auto all = torch::from_blob(const_cast<float*>(f.data.data()), {f.clouds, f.points, 3}, torch::kFloat32);
  GraphSample g;
  g.x = all.select(0, cloud).narrow(0, 0, points).clone().unsqueeze(0);
  return g;
}

GraphSample sample_from_file(const GraphFile& f) {
  GraphSample g;
  g.x = torch::from_blob(const_cast<float*>(f.x.data()), {f.nodes, f.features}, torch::kFloat32).clone();
  g.edge_index = torch::from_blob(const_cast<std::int64_t*>(f.edge_index.data()), {2, f.edges}, torch::kInt64).clone();
  return g;
}

}  // namespace coinfer::models
