#pragma once
// Helpers for simulation tests: hand-made LUTs for dgcnn/modelnet40 (9 stages) with round numbers, a
// scenario written to a temporary folder, and one run (one SimGrid engine per test process).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <string>

#include "core/lut.hpp"
#include "io/lut_h5.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "sim/simulation.hpp"

namespace coinfer::test {

constexpr double kTol = 1e-6;  // seconds; SimGrid's timing precision is 1e-9 s

// dgcnn/modelnet40 bytes per sample (tests/unit/test_model_spec.cpp derives them):
constexpr double kRawBytes = 12288;    // split 0: 1024 points x 3 floats
constexpr double kPooledBytes = 8192;  // split 6: 2048 floats after pooling
constexpr double kResultBytes = 160;   // split 9: 40 floats

class SimSetup {
 public:
  SimSetup() {
    char tmpl[] = "/tmp/coinfer-sim-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~SimSetup() { std::filesystem::remove_all(dir_); }
  const std::string& dir() const { return dir_; }

  // LUT for `type`: every stage takes stage_s at batch 1; a batch of b takes
  // (sum of stages) * (1 + batch_slope * (b-1)).
  void write_lut(const std::string& type, double stage_s, double batch_slope = 0.5, int max_batch = 8) {
    const int n = 9;
    LutTable t({type, "dgcnn", "modelnet40"}, n, max_batch);
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j <= n; ++j)
        for (int b = 1; b <= max_batch; ++b) {
          double m = (j - i) * stage_s * (1 + batch_slope * (b - 1));
          t.set_latency(i, j, b, {m, m, m, 0, 1});
        }
    t.provenance().kind = "synthesised";
    t.provenance().attributes["note"] = "test LUT";
    write_lut_file(dir_ + "/" + type + ".h5", {t});
  }

  // LUT for `type` whose entries carry a distribution: stages [0,9) at batch b take the quantile
  // function (levels, values_s) scaled by (1 + batch_slope (b-1)); a range of k stages takes k/9 of it.
  // The mean column is the distribution's exact mean (core/execution_time.hpp distribution_mean).
  void write_distributed_lut(const std::string& type, const std::vector<double>& levels, const std::vector<double>& values_s,
                             double batch_slope = 0.5, int max_batch = 8) {
    const int n = 9;
    LutTable t({type, "dgcnn", "modelnet40"}, n, max_batch);
    t.set_quantile_levels(levels);
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j <= n; ++j)
        for (int b = 1; b <= max_batch; ++b) {
          std::vector<double> q = values_s;
          for (double& v : q) v *= (j - i) / 9.0 * (1 + batch_slope * (b - 1));
          double mean = 0;
          for (size_t k = 0; k + 1 < levels.size(); ++k) mean += (levels[k + 1] - levels[k]) * (q[k] + q[k + 1]) / 2;
          t.set_latency(i, j, b, {mean, mean, mean, 0, 100});
          t.set_quantiles(i, j, b, q);
        }
    t.provenance().kind = "synthesised";
    t.provenance().attributes["note"] = "test LUT with a distribution";
    write_lut_file(dir_ + "/" + type + ".h5", {t});
  }

  // As write_lut, plus measured wire bytes: every split k sends the quantile function
  // (levels, bytes) per request, compressing takes compress_s and decompressing decompress_s.
  void write_lut_with_wire(const std::string& type, double stage_s, const std::vector<double>& levels, const std::vector<double>& bytes,
                           double compress_s, double decompress_s) {
    const int n = 9, max_batch = 8;
    LutTable t({type, "dgcnn", "modelnet40"}, n, max_batch);
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j <= n; ++j)
        for (int b = 1; b <= max_batch; ++b) {
          double m = (j - i) * stage_s * (1 + 0.5 * (b - 1));
          t.set_latency(i, j, b, {m, m, m, 0, 1});
        }
    t.set_quantile_levels(levels);
    for (int k = 0; k <= n; ++k) t.set_wire(k, bytes, compress_s, decompress_s);
    t.provenance().kind = "synthesised";
    t.provenance().attributes["note"] = "test LUT with wire bytes";
    write_lut_file(dir_ + "/" + type + ".h5", {t});
  }

  void write_file(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }
  std::string read_file(const std::string& name) const {
    std::ifstream in(dir_ + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Runs a scenario whose text may use LUTDIR for this folder.
  RunResults run(std::string yaml, const std::vector<std::string>& sets = {}, const sim::SimulationOptions& options = {}) {
    for (size_t p; (p = yaml.find("LUTDIR")) != std::string::npos;) yaml.replace(p, 6, dir_);
    write_file("scenario.yaml", yaml);
    Scenario s = load_scenario(dir_ + "/scenario.yaml", sets);
    ModelCatalog models = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
    LutSet luts = load_luts(s.luts);
    return sim::run_simulation(s, models, luts, options);
  }

 private:
  std::string dir_;
};

// The LUTs most tests use: device stages 10 ms each, server stages 1 ms each (9 stages of dgcnn).
inline void write_standard_luts(SimSetup& s) {
  s.write_lut("testdev", 0.010);
  s.write_lut("testsrv", 0.001);
}

// A one-server scenario: server "srv" of type testsrv with a 1000 Mbit/s, 0.1 ms link; access point
// 1000 Mbit/s; `devices` is the YAML list body.
inline std::string scenario(const std::string& devices, const std::string& batch = "{window_ms: 0, max_size: 1}", double duration_s = 1,
                            double warmup_s = 0, int workers = 1, const std::string& extra = "") {
  return "name: t\nseed: 1\nduration_s: " + std::to_string(duration_s) + "\nwarmup_s: " + std::to_string(warmup_s) +
         "\nluts: [LUTDIR]\nservers:\n  - {id: srv, type: testsrv, workers: " + std::to_string(workers) + ", batch: " + batch +
         ", link: {bandwidth_mbps: 1000, latency_ms: 0.1}}\naccess_point: {bandwidth_mbps: 1000}\ndevices:\n" + devices + extra;
}

// A device entry: testdev running dgcnn on an 8 Mbit/s (1e6 B/s), 5 ms link.
inline std::string device(const std::string& id, const std::string& strategy, const std::string& workload = "{arrival: closed_loop, in_flight: 1}",
                          const std::string& link = "{bandwidth_mbps: 8, latency_ms: 5}") {
  return "  - {id: " + id + ", type: testdev, model: dgcnn, dataset: modelnet40, link: " + link + ", strategy: " + strategy +
         ", workload: " + workload + "}\n";
}

}  // namespace coinfer::test
