// Execution variants against the base model on this machine: for each model and
// dataset and each variant, the median forward time, the peak tensor memory of one forward (LibTorch's
// CPU allocator, hw/tracking_allocator: the first forward on the input of a fresh model, whose weights
// and INT8 calibration come before the measurement) and the output error against the base model with the same
// weights (models/variant_accuracy.hpp), all in one run so the ratios compare like with like.
// usage: bench_variants THREADS REPEATS [model/dataset ...]   (default: every pair, every variant that applies)
// prints one markdown row per variant: model/dataset, variant, ms, x base, peak MiB, x base, max err, mean err, top-1.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench/forward_timing.hpp"
#include "hw/compute_threads.hpp"
#include "hw/tracking_allocator.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"
#include "models/variant_accuracy.hpp"

using namespace coinfer;

namespace {

// Peak of a fresh model's first forward: it builds what it keeps per graph (normalisation, masks),
// which later forwards reuse, so a warm model's peak would leave out a dense mask.
double peak_mib(const ModelSpec& spec, const models::GraphSample& g) {
  const models::GnnModel m(spec, 1);  // weights (and INT8 calibration) before the measurement
  auto& a = hw::TrackingAllocator::instance();
  const size_t base = a.current();
  a.reset_peak();
  m.forward(g);
  return static_cast<double>(a.peak() - base) / (1 << 20);
}

// The variants worth measuring for a model on a dataset.
std::vector<std::string> variants_for(const ModelSpec& m) {
  std::vector<std::string> v;
  bool gcn = false, gat = false, graph = false;
  for (const auto& s : m.stages) gcn |= s.op == "gcn", gat |= s.op == "gat", graph |= s.op == "gcn" || s.op == "gat" || s.op == "sage";
  const double n = static_cast<double>(m.dataset.nodes);
  // The mask (and GAT's logits) under ~500 MB: Yelp-like GCN/SAGE yes (400 MB), SIoT-like (16,216
  // nodes: 1 GB per mask, and its INT8 product runs in LibTorch's reference kernel) no.
  const bool dense_fits = n * n * 4 * (gat ? 8 : 1) < 5e8;
  if (graph && dense_fits) v.push_back("dense_mask");
  if (graph) {
    // NodePad as GraNNite's Cora experiment: about 10 % more nodes than the graph has (MR: its 64 maximum).
    const long long cap = m.dataset.nodes <= 64 ? 64 : static_cast<long long>(n * 1.1);
    v.push_back("cap" + std::to_string(cap));
  }
  if (gcn) v.push_back("symmetric");
  if (graph && dense_fits) v.push_back("dense_mask+uncached");  // GraNNite's out-of-the-box mapping
  v.push_back("int8");
  if (graph && dense_fits) v.push_back("dense_mask+int8");
  if (gat && dense_fits) v.push_back("dense_mask+grax1");
  if (gat) v.push_back("grax2");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s THREADS REPEATS [model/dataset ...]\n", argv[0]);
    return 2;
  }
  const std::string threads = hw::set_compute_threads(std::atoi(argv[1]));
  if (!hw::keep_tensor_memory()) std::fprintf(stderr, "mallopt refused\n");
  const int repeats = std::max(1, std::atoi(argv[2]));
  hw::TrackingAllocator::install();
  torch::NoGradGuard no_grad;
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    pairs.emplace_back(a.substr(0, a.find('/')), a.substr(a.find('/') + 1));
  }
  if (pairs.empty())
    for (const auto& m : cat.model_names())
      for (const auto& d : cat.datasets_for(m)) pairs.emplace_back(m, d);
  std::printf("# threads: %s; quantised engine: %s; %d timed forwards per row (median), 2 warm-up\n", threads.c_str(),
              hw::quantized_engine_name().c_str(), repeats);
  std::printf(
      "| model/dataset | variant | forward (ms) | x base | peak (MiB) | x base | max abs err | mean abs err (mean |out|) | top-1 agreement |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [name, ds] : pairs) {
    const ModelSpec& base_spec = cat.spec(name, ds);
    const models::GraphSample g = models::generate_sample(base_spec.dataset, 1, 0).sample;
    const models::GnnModel base(base_spec, 1);
    const double base_ms = bench::median_forward_ms(base, g, repeats), base_mib = peak_mib(base_spec, g);
    std::printf("| %s/%s | (fp32, sparse) | %.3f | 1 | %.2f | 1 | - | - | - |\n", name.c_str(), ds.c_str(), base_ms, base_mib);
    std::fflush(stdout);
    for (const auto& v : variants_for(base_spec)) {
      const ModelSpec& spec = cat.spec(name + "@" + v, ds);
      const models::GnnModel model(spec, 1);
      const double ms = bench::median_forward_ms(model, g, repeats), mib = peak_mib(spec, g);
      const models::VariantAccuracy a = models::measure_variant_accuracy(base_spec, spec, 2, 1);
      std::printf("| %s/%s | %s | %.3f | %.2f | %.2f | %.2f | %.2g | %.2g (%.2g) | %.3f |\n", name.c_str(), ds.c_str(), v.c_str(), ms, ms / base_ms,
                  mib, base_mib > 0 ? mib / base_mib : 0.0, a.max_abs_error, a.mean_abs_error, a.output_scale, a.top1_agreement);
      std::fflush(stdout);
    }
  }
  return 0;
}
