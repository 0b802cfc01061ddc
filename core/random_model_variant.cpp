#include "core/random_model_variant.hpp"

#include <algorithm>
#include <cmath>

#include "core/random_stream.hpp"

namespace coinfer {

ModelSpec random_model_variant(const ModelSpec& base, std::uint64_t seed, std::uint64_t index) {
  RandomStream rng(seed, StreamPurpose::module_sampling, index);
  auto pick = [&](std::initializer_list<double> v) {
    return *(v.begin() + std::min<size_t>(v.size() - 1, static_cast<size_t>(rng.next_unit() * v.size())));
  };
  ModelSpec m = base;
  const std::string tag = "~v" + std::to_string(index);
  m.name += tag;
  m.dataset.name += tag;
  const double node_scale = 0.25 + 1.75 * rng.next_unit();
  long long nodes = std::max<long long>(4, std::llround(static_cast<double>(base.dataset.nodes) * node_scale));
  const bool image = base.dataset.kind == "image";
  if (image) {  // a square image: its side scaled by the root of the scale
    long long side = std::max<long long>(8, std::llround(std::sqrt(static_cast<double>(base.dataset.nodes) * node_scale)));
    // Transformers: the side stays a multiple of the patch; windows and patch merging keep the base
    // image's (their token grids must split into whole windows and halve at every merge).
    for (const StageSpec& s : base.stages) {
      if (s.op == "patch_embed" && s.kernel > 0) side = std::max<long long>(s.kernel, std::llround(static_cast<double>(side) / s.kernel) * s.kernel);
      if (s.window > 0 || s.op == "patch_merge") side = std::llround(std::sqrt(static_cast<double>(base.dataset.nodes)));
    }
    nodes = side * side;
  }
  const double degree = base.dataset.nodes > 0 ? static_cast<double>(base.dataset.edges) / static_cast<double>(base.dataset.nodes) : 0;
  m.dataset.nodes = nodes;
  m.dataset.edges = std::llround(degree * static_cast<double>(nodes) / 2) * 2;  // both directions of each link
  m.dataset.features = std::max(1, static_cast<int>(std::lround(base.dataset.features * pick({0.5, 1, 2}))));
  if (base.dataset.kind == "point_cloud") m.dataset.features = std::max(3, m.dataset.features);
  const int k = 4 + static_cast<int>(rng.next_unit() * 37);  // 4..40
  // An image model's widths scale together: a residual sum's inputs stay equal, a depthwise stage's
  // groups follow its width.
  const double image_width_scale = image ? pick({0.25, 0.5, 0.75, 1, 1.5, 2}) : 1;
  for (StageSpec& s : m.stages) {
    s.in_width = 0;  // derived again from the new widths
    if (s.k > 0) s.k = std::min<int>(k, static_cast<int>(nodes) - 1);
    if (s.out_width > 0 && s.out_width != base.dataset.classes) {
      const bool depthwise = s.groups > 1 && s.groups == s.out_width;
      const double w = s.out_width * (image ? image_width_scale : pick({0.25, 0.5, 0.75, 1, 1.5, 2}));
      s.out_width = std::max(8, static_cast<int>(std::lround(w / 8)) * 8);
      if (depthwise) s.groups = s.out_width;
    }
    if (s.hidden > 0) s.hidden = std::max(8, static_cast<int>(std::lround(s.hidden * image_width_scale / 8)) * 8);  // an mlp's, with its width
  }
  derive_costs(m);
  return m;
}

}  // namespace coinfer
