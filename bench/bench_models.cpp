// C++ half of bench/model_speed.py: times the LibTorch models' forward pass and writes, for the Python
// reference, each model's stage list (JSON) and its exact input (HDF5 graph/point-cloud layouts).
// usage: bench_models OUT_DIR THREADS REPEATS [model/dataset ...]
// prints: "model dataset median_ms" per model, then "memory gcn yelp P peak_bytes" lines.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench/forward_timing.hpp"
#include "hw/compute_threads.hpp"
#include "hw/tracking_allocator.hpp"
#include "io/dataset_h5.hpp"
#include "io/data_root.hpp"
#include "io/model_spec_loader.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"

using namespace coinfer;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s OUT_DIR THREADS REPEATS [model/dataset ...]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  hw::set_compute_threads(std::atoi(argv[2]));
  // As shipped (coinfer-rt, coinfer-profile), unless the caller compares against glibc's defaults.
  if (!std::getenv("COINFER_MALLOC_DEFAULTS") && !hw::keep_tensor_memory()) std::fprintf(stderr, "mallopt refused\n");
  const int repeats = std::atoi(argv[3]);
  torch::NoGradGuard no_grad;
  ModelCatalog cat = ModelCatalog::load(data_path("models"));
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 4; i < argc; ++i) {
    std::string a = argv[i];
    pairs.emplace_back(a.substr(0, a.find('/')), a.substr(a.find('/') + 1));
  }
  if (pairs.empty())
    for (const auto& m : cat.model_names())
      for (const auto& d : cat.datasets_for(m)) pairs.emplace_back(m, d);
  for (const auto& [name, ds] : pairs) {
    ModelSpec spec = cat.instantiate(name, ds);
    if (spec.dataset.kind == "image") {  // the python3-torch side implements the GNNs only
      std::cerr << "skipped " << name << "/" << ds << ": image models are not in the python3-torch comparison\n";
      continue;
    }
    models::GnnModel model(spec, 1);
    models::GraphSample g = models::generate_sample(spec.dataset, 1, 0).sample;
    nlohmann::json j;
    j["model"] = name;
    j["dataset"] = ds;
    j["kind"] = spec.dataset.kind;
    j["stages"] = nlohmann::json::array();
    for (const auto& s : spec.stages)
      j["stages"].push_back(
          {{"op", s.op}, {"in", s.in_width}, {"out", s.out_width}, {"k", s.k}, {"heads", s.heads}, {"mode", s.pool_mode}, {"inputs", s.inputs}});
    std::ofstream(out + "/" + name + "_" + ds + ".json") << j.dump();
    if (spec.dataset.kind == "point_cloud") {
      PointCloudFile p;
      p.clouds = 1;
      p.points = g.x.size(1);
      auto x = g.x.contiguous();
      p.data.assign(x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
      p.labels = {0};
      write_pointnet_h5(out + "/" + name + "_" + ds + ".h5", p);
    } else {
      GraphFile f;
      f.nodes = g.x.size(0);
      f.features = g.x.size(1);
      f.edges = g.edge_index.size(1);
      auto x = g.x.contiguous();
      auto e = g.edge_index.contiguous();
      f.x.assign(x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
      f.edge_index.assign(e.data_ptr<int64_t>(), e.data_ptr<int64_t>() + e.numel());
      write_graph_h5(out + "/" + name + "_" + ds + ".h5", f);
    }
    std::printf("%s %s %.4f\n", name.c_str(), ds.c_str(), bench::median_forward_ms(model, g, repeats));
    std::fflush(stdout);
  }
  // Peak memory of the Yelp-like GCN and GAT with and without feature decomposition (the counting
  // allocator is installed only now, so that it does not weigh on the timings above).
  hw::TrackingAllocator::install();
  for (const char* name : {"gcn", "gat"}) {
    ModelSpec spec = cat.instantiate(name, "yelp");
    models::GnnModel model(spec, 1);
    models::GraphSample g = models::generate_sample(spec.dataset, 1, 0).sample;
    for (int p : {1, 2, 4, 8}) {
      model.set_feature_chunks(p);
      auto& a = hw::TrackingAllocator::instance();
      const size_t base = a.current();
      a.reset_peak();
      model.forward(g);
      std::printf("memory %s yelp %d %zu %.4f\n", name, p, a.peak() - base, bench::median_forward_ms(model, g, std::max(3, repeats / 2)));
    }
  }
  return 0;
}
