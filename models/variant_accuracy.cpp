#include "models/variant_accuracy.hpp"

#include <stdexcept>

#include "models/datasets.hpp"
#include "models/gnn_model.hpp"

namespace coinfer::models {

VariantAccuracy measure_variant_accuracy(const ModelSpec& base, const ModelSpec& variant, int samples, std::uint64_t seed) {
  if (base.base_name() != variant.base_name() || base.dataset.name != variant.dataset.name)
    throw std::invalid_argument("variant accuracy: " + variant.name + "/" + variant.dataset.name + " is not a variant of " + base.name + "/" +
                                base.dataset.name);
  if (samples < 1) throw std::invalid_argument("variant accuracy needs at least one sample");
  torch::NoGradGuard no_grad;
  const GnnModel ref(base, seed), var(variant, seed);
  VariantAccuracy a;
  double abs_sum = 0, ref_sum = 0, entries = 0, rows = 0, agree = 0;
  for (int i = 0; i < samples; ++i) {
    const GraphSample g = generate_sample(base.dataset, seed, 1000 + i).sample;
    auto out0 = ref.forward(g);
    auto y0 = out0.reshape({-1, out0.size(-1)});
    auto y1 = var.forward(g).reshape({-1, y0.size(-1)});
    if (y0.sizes() != y1.sizes()) throw std::logic_error("variant " + variant.name + " changed the output's shape");
    auto d = (y1 - y0).abs();
    a.max_abs_error = std::max(a.max_abs_error, d.max().item<double>());
    abs_sum += d.sum().item<double>();
    ref_sum += y0.abs().sum().item<double>();
    entries += static_cast<double>(d.numel());
    rows += static_cast<double>(y0.size(0));
    agree += y0.argmax(1).eq(y1.argmax(1)).sum().item<double>();
  }
  a.samples = samples;
  a.mean_abs_error = abs_sum / entries;
  a.output_scale = ref_sum / entries;
  a.top1_agreement = agree / rows;
  return a;
}

}  // namespace coinfer::models
