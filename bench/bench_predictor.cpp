// Inference and decision time of ACE-GNN's learned predictors, one intra-op thread:
//   per call         GinEstimator::score (the system predictor, one graph) and compare (one pair)
//   batched round    GinEstimator::best_of with K candidates against an incumbent (one forward pass),
//                    reported per candidate pair (target <= 0.5 ms)
//   decision         HierarchicalScheduler::decide with the analytic and the gin estimator at 3, 9, 30
//                    and 100 devices (mixed Raspberry Pi / Jetson boards on DGCNN and GCoDE, links 1 ..
//                    100 Mbit/s, one GTX 1060 with 2 workers), the reference being the analytic run
// usage: bench_predictor MODEL.pt [REPEATS]      (medians of REPEATS, default 50; decisions: 5)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "sched/gin_estimator.hpp"
#include "sched/hierarchical_scheduler.hpp"

using namespace coinfer;

namespace {

double median_ms(const std::function<void()>& f, int repeats) {
  f();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

SystemState system_of(int devices) {
  SystemState s;
  ServerState sv{"edge", "gtx1060"};
  sv.workers = 2;
  s.servers.push_back(sv);
  const char* types[] = {"rpi4b", "rpi3b", "jetson-tx2", "jetson-nano"};
  for (int i = 0; i < devices; ++i) {
    DeviceState d{"d" + std::to_string(i), types[i % 4], i % 2 ? "gcode" : "dgcnn", "modelnet40", "edge"};
    d.link_bandwidth_mbps = std::round(100 * std::exp(std::log(1.0) + (std::log(100.0) - std::log(1.0)) * ((i * 37) % 100) / 100.0)) / 100;
    d.link_latency_ms = 2;
    d.strategy = Strategy::offload();
    s.devices.push_back(d);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.pt [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 2 ? std::max(3, std::atoi(argv[2])) : 50;
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  const LutSet luts = load_luts({data_path("traces/lut")});
  ModelSpecs specs;
  for (const char* m : {"dgcnn", "gcode"}) specs.emplace(ModelKey{m, "modelnet40"}, catalog.instantiate(m, "modelnet40"));
  const AnalyticEstimator analytic(luts, specs);
  GinPredictor predictor = GinPredictor::load(argv[1]);
  const auto& meta = predictor.meta();
  std::printf("predictor %s: layout %s, hidden %d, %d GIN layers, system %s, relative %s\n", argv[1], meta.config.layout.c_str(), meta.config.hidden,
              meta.config.layers, meta.has_system ? "yes" : "no", meta.has_relative ? "yes" : "no");
  const GinEstimator gin(analytic, std::move(predictor), argv[1]);

  const SystemState s3 = system_of(3);
  Scheme a, b;
  for (const auto& d : s3.devices) a.strategies[d.id] = Strategy::offload(), b.strategies[d.id] = Strategy::data_parallel();
  std::printf("\n| operation (3 devices, 11-node graphs) | median ms | analytic estimator, ms |\n|---|---|---|\n");
  std::printf("| score (one graph) | %.3f | %.3f |\n", median_ms([&] { gin.score(s3, a); }, repeats),
              median_ms([&] { analytic.score(s3, a); }, repeats));
  std::printf("| compare (one pair) | %.3f | %.3f |\n", median_ms([&] { gin.compare(s3, a, b); }, repeats),
              median_ms([&] { analytic.compare(s3, a, b); }, repeats));
  std::printf("\n| batched round: K candidates vs the incumbent | median ms | per pair, ms |\n|---|---|---|\n");
  const std::vector<Strategy> opts = {Strategy::local(), Strategy::offload(), Strategy::data_parallel(), Strategy::pp(1),
                                      Strategy::pp(2),   Strategy::pp(3),     Strategy::pp(4),           Strategy::pp(5)};
  for (int k : {1, 2, 8, 32, 128}) {
    std::vector<Scheme> cands;
    for (int i = 0; i < k; ++i) {
      Scheme c;
      int x = i;
      for (const auto& d : s3.devices) c.strategies[d.id] = opts[static_cast<size_t>(x % 8)], x /= 8;
      cands.push_back(c);
    }
    const double ms = median_ms([&] { gin.best_of(s3, a, cands); }, std::max(3, repeats / (k > 32 ? 5 : 1)));
    std::printf("| K = %d | %.3f | %.4f |\n", k, ms, ms / k);
  }
  std::printf("\n| devices | hierarchical + analytic, ms | hierarchical + gin, ms | ratio | same scheme |\n|---|---|---|---|---|\n");
  for (int n : {3, 9, 30, 100}) {
    const SystemState s = system_of(n);
    HierarchicalScheduler ha(analytic, analytic), hg(analytic, gin);
    Scheme sa, sg;
    const int reps = n >= 30 ? 3 : 5;
    const double ta = median_ms([&] { sa = ha.decide(s); }, reps);
    const double tg = median_ms([&] { sg = hg.decide(s); }, reps);
    std::printf("| %d | %.1f | %.1f | %.2f | %s |\n", n, ta, tg, tg / ta, sa.strategies == sg.strategies ? "yes" : "no");
  }
  return 0;
}
