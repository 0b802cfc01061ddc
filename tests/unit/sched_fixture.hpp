#pragma once
// Hand-built LUTs, devices and states for the scheduler tests: dgcnn/modelnet40 (9 stages; bytes at
// split k: 12,288 B raw input at 0, 256 KB .. 4 MB at 1..5, 8,192 / 2,048 / 1,024 B at 6 / 7 / 8, 160 B
// result) with round per-stage times.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/model_spec_loader.hpp"
#include "sched/analytic_estimator.hpp"
#include "test_support.hpp"

namespace coinfer::test {

// Every stage takes stage_s; a batch of b takes (1 + slope (b-1)) times a single sample.
inline LutTable lut(const std::string& type, double stage_s, double slope = 0.5) {
  LutTable t({type, "dgcnn", "modelnet40"}, 9, 8);
  for (int i = 0; i < 9; ++i)
    for (int j = i + 1; j <= 9; ++j)
      for (int b = 1; b <= 8; ++b) {
        double m = (j - i) * stage_s * (1 + slope * (b - 1));
        t.set_latency(i, j, b, {m, m, m, 0, 1});
      }
  return t;
}

struct Fixture {
  LutSet luts;
  std::unique_ptr<AnalyticEstimator> est;
  explicit Fixture(Objective o = Objective::throughput) {
    luts.add(lut("slow", 0.100), "mem");  // whole model 0.9 s
    luts.add(lut("fast", 0.005), "mem");  // whole model 45 ms
    luts.add(lut("srv", 0.001), "mem");   // whole model 9 ms
    luts.add(lut("busy", 0.010), "mem");  // whole model 90 ms
    luts.add(lut("mid", 0.011), "mem");   // whole model 99 ms
    ModelSpecs specs;
    specs.emplace(ModelKey{"dgcnn", "modelnet40"}, catalog().instantiate("dgcnn", "modelnet40"));
    est = std::make_unique<AnalyticEstimator>(luts, specs, o);
  }
};

inline DeviceState device(const std::string& id, const std::string& type, double mbps, const std::string& server = "s0") {
  DeviceState d;
  d.id = id;
  d.type = type;
  d.model = "dgcnn";
  d.dataset = "modelnet40";
  d.server = server;
  d.strategy = Strategy::local();
  d.link_bandwidth_mbps = mbps;
  d.link_latency_ms = 0;
  d.in_flight = 1;
  return d;
}

inline SystemState state(std::vector<DeviceState> devices, const std::string& server_type = "srv", int workers = 1, double window_ms = 0,
                         int max_size = 1) {
  SystemState s;
  s.access_point_mbps = 1e6;
  s.access_point_latency_ms = 0;
  ServerState v;
  v.id = "s0";
  v.type = server_type;
  v.workers = workers;
  v.batch_window_ms = window_ms;
  v.batch_max_size = max_size;
  v.link_bandwidth_mbps = 1e6;
  v.link_latency_ms = 0;
  s.servers = {v};
  s.devices = std::move(devices);
  return s;
}

inline Scheme scheme(std::map<std::string, Strategy> m) {
  Scheme s;
  s.strategies = std::move(m);
  return s;
}

}  // namespace coinfer::test
