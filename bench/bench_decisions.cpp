// Decision time of every search scheduler with the analytic estimator, at
// 3 / 9 / 30 / 100 / 1,000 devices: mixed Raspberry Pi / Jetson boards alternating DGCNN and GCoDE,
// links 1 .. 100 Mbit/s (log-spaced), one GTX 1060 (2 workers, batch window 10 ms, at most 4) per 100
// devices (--devices-per-server: another share). Also the cost of one prediction (AnalyticEstimator::predict) at each size, the reference
// every decision is made of, and a fingerprint of each decision (to check that a faster estimator
// decides the same). A scheduler whose decision, extrapolated quadratically from the previous size,
// would take longer than --budget seconds is not run at that size (the table says so).
// usage: bench_decisions [--repeats N] [--budget S] [--sizes 3,9,30,100,1000] [--only NAME[,NAME]] [--devices-per-server N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "core/text_util.hpp"
#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "sched/dp_scheduler.hpp"
#include "sched/gcode_scheduler.hpp"
#include "sched/greedy_scheduler.hpp"
#include "sched/hierarchical_scheduler.hpp"
#include "sched/oracle_scheduler.hpp"
#include "sched/learned_plugin.hpp"
#include "sched/sac_scheduler.hpp"

using namespace coinfer;

namespace {

// Median wall time (ms) of `repeats` calls after one warm-up call; stops early past `budget_s` total.
double median_ms(const std::function<void()>& f, int repeats, double budget_s) {
  std::vector<double> t;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i <= repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0 || repeats == 0) t.push_back(ms);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget_s && !t.empty()) break;
    if (i == 0 && ms > 1e3 * budget_s) {  // the warm-up alone exceeds the budget: it is the measurement
      t.push_back(ms);
      break;
    }
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

SystemState system_of(int devices, int per_server) {
  SystemState s;
  const int servers = std::max(1, devices / per_server);
  for (int j = 0; j < servers; ++j) {
    ServerState sv{"edge" + std::to_string(j), "gtx1060"};
    sv.workers = 2;
    sv.batch_window_ms = 10;
    sv.batch_max_size = 4;
    s.servers.push_back(sv);
  }
  const char* types[] = {"rpi4b", "rpi3b", "jetson-tx2", "jetson-nano"};
  for (int i = 0; i < devices; ++i) {
    DeviceState d{"d" + std::to_string(i), types[i % 4], i % 2 ? "gcode" : "dgcnn", "modelnet40", "edge" + std::to_string(i % servers)};
    d.link_bandwidth_mbps = std::round(100 * std::exp(std::log(100.0) * ((i * 37) % 100) / 100.0)) / 100;
    d.link_latency_ms = 2;
    d.strategy = Strategy::offload();
    s.devices.push_back(d);
  }
  return s;
}

// FNV-1a of the scheme's text: equal decisions, equal fingerprints.
unsigned long long fingerprint(const Scheme& s) {
  unsigned long long h = 1469598103934665603ull;
  for (char c : s.to_string()) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// A scheduler used through another that outlives it (sac: the policy file is loaded once, as in a run).
class Borrowed : public Scheduler {
 public:
  explicit Borrowed(Scheduler& s) : s_(s) {}
  std::string name() const override { return s_.name(); }
  Scheme decide(const SystemState& state) override { return s_.decide(state); }

 private:
  Scheduler& s_;
};

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  double budget_s = 30;
  std::vector<int> sizes = {3, 9, 30, 100, 1000};
  std::vector<std::string> only;  // empty: every scheduler
  int per_server = 100;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--budget" && i + 1 < argc)
      budget_s = std::atof(argv[++i]);
    else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (const auto& x : split(argv[++i], ',')) sizes.push_back(std::atoi(x.c_str()));
    } else if (a == "--devices-per-server" && i + 1 < argc) {
      per_server = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--only" && i + 1 < argc) {
      only = split(argv[++i], ',');
    } else {
      std::fprintf(stderr, "usage: %s [--repeats N] [--budget S] [--sizes 3,9,30,100,1000] [--only NAME[,NAME]] [--devices-per-server N]\n", argv[0]);
      return 2;
    }
  }
  const ModelCatalog catalog = ModelCatalog::load(data_path("models"));
  const LutSet luts = load_luts({data_path("traces/lut")});
  ModelSpecs specs;
  for (const char* m : {"dgcnn", "gcode"}) specs.emplace(ModelKey{m, "modelnet40"}, catalog.spec(m, "modelnet40"));
  const AnalyticEstimator est(luts, specs);

  struct Entry {
    std::string name;
    std::function<std::unique_ptr<Scheduler>()> make;
  };
  // sac: the shipped policy (sched/policies/sac_paper.pt) through the LibTorch plugin, when this build has it.
  std::unique_ptr<Scheduler> sac;
  try {
    sac = std::make_unique<SacScheduler>(
        est, load_sac_actor(data_path("sched/policies/sac_paper.pt"), {"dgcnn/modelnet40", "gcode/modelnet40"}, true), SacSchedulerOptions{});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sac not measured: %s\n", e.what());
  }
  std::vector<Entry> schedulers = {
      {"hierarchical", [&] { return std::make_unique<HierarchicalScheduler>(est, est); }},
      {"greedy", [&] { return std::make_unique<GreedyScheduler>(est, est); }},
      {"dp", [&] { return std::make_unique<DpScheduler>(est, est); }},
      {"gcode", [&] { return std::make_unique<GcodeScheduler>(est); }},
      {"oracle", [&] { return std::make_unique<OracleScheduler>(est); }},
  };
  if (sac) schedulers.push_back({"sac", [&] { return std::make_unique<Borrowed>(*sac); }});
  if (!only.empty()) {
    for (const auto& name : only)
      if (std::none_of(schedulers.begin(), schedulers.end(), [&](const Entry& e) { return e.name == name; })) {
        std::fprintf(stderr, "--only: no scheduler named '%s' is measured here\n", name.c_str());
        return 2;
      }
    schedulers.erase(std::remove_if(schedulers.begin(), schedulers.end(),
                                    [&](const Entry& e) { return std::find(only.begin(), only.end(), e.name) == only.end(); }),
                     schedulers.end());
  }
  std::printf("decision time, ms (median of up to %d; fingerprint of the decision in brackets)\n\n| devices | one prediction |", repeats);
  for (const auto& e : schedulers) std::printf(" %s |", e.name.c_str());
  std::printf("\n|---|---|");
  for (size_t k = 0; k < schedulers.size(); ++k) std::printf("---|");
  std::printf("\n");
  std::map<std::string, double> last_ms;
  std::map<std::string, int> last_n;
  for (int n : sizes) {
    const SystemState s = system_of(n, per_server);
    std::vector<Scheme> uniform(3);
    for (const auto& d : s.devices) {
      uniform[0].strategies[d.id] = Strategy::offload();
      uniform[1].strategies[d.id] = Strategy::local();
      uniform[2].strategies[d.id] = Strategy::data_parallel();
    }
    int next = 0;
    std::printf("| %d | %.3f |", n, median_ms([&] { est.predict(s, uniform[static_cast<size_t>(next++ % 3)]); }, 30, budget_s));
    for (const auto& e : schedulers) {
      if (last_ms.count(e.name) && last_ms[e.name] >= 1e12) {
        std::printf(" refused at fewer devices |");
        continue;
      }
      if (last_ms.count(e.name)) {
        const double expected_s = last_ms[e.name] / 1e3 * std::pow(static_cast<double>(n) / last_n[e.name], 2);
        if (expected_s > budget_s) {
          std::printf(" not run (~%.0f s expected) |", expected_s);
          continue;
        }
      }
      Scheme chosen;
      std::string refused;
      double ms = 0;
      try {
        // A fresh scheduler per decision: what the first decision of a run costs (gcode keeps presets).
        // Each call decides on a state of its own (a later time, as every decision of a run has), so
        // no prediction the estimator remembers from the previous call is reused.
        double tick = 0;
        ms = median_ms(
            [&] {
              SystemState later = s;
              later.time_s += (tick += 1e-3);
              chosen = e.make()->decide(later);
            },
            repeats, budget_s);
      } catch (const std::exception& ex) {
        refused = ex.what();
      }
      if (!refused.empty()) {
        std::printf(" refused (%s) |", refused.substr(0, refused.find(" (")).c_str());
        last_ms[e.name] = 1e12;
        last_n[e.name] = n;
        continue;
      }
      last_ms[e.name] = ms;
      last_n[e.name] = n;
      std::printf(" %.3g [%04llx] |", ms, fingerprint(chosen) & 0xffff);
      std::fflush(stdout);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
