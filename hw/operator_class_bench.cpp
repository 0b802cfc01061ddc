#include "hw/operator_class_bench.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "hw/compute_threads.hpp"
#include "hw/tracking_allocator.hpp"
#include "models/gnn_model.hpp"

namespace coinfer::hw {
namespace {

constexpr double kF = 4, kI = 8;  // float32, int64 bytes (as core/stage_operators.cpp counts them)

// Median seconds of `run` over `repeats` timed calls after `warmup` untimed ones.
double median_seconds(const std::function<void()>& run, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const auto a = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The rate: the median over the sizes of work / (time - launch). A straight line through the points
// does not describe them: the rate changes as the tensors outgrow each cache level, so the sizes are
// those of the shipped models' tensors (~0.25-16 MiB) and the class's rate is its typical one there.
void fit(ClassLine& line, double launch_s) {
  std::vector<double> rates;
  for (const auto& [x, y] : line.points) {
    rates.push_back(x / std::max(y - launch_s, 1e-9));
    line.rate_by_work.emplace_back(x, rates.back());
  }
  std::sort(rates.begin(), rates.end());
  line.rate_per_s = rates[rates.size() / 2];
  line.intercept_s = launch_s;
}

// One class's line: for each size, make the operator's tensors with `setup(size)` (returns the work and
// the operator to time).
using Timed = std::pair<double, std::function<void()>>;
ClassLine measure_line(const std::string& cls, const std::string& what, const std::string& work, const std::vector<long>& sizes,
                       const std::function<Timed(long)>& setup, const OperatorClassOptions& o, double launch_s, double& done, double all) {
  ClassLine line{cls, what, work, {}, 0, {}, 0};
  for (long size : sizes) {
    const Timed t = setup(size);
    line.points.emplace_back(t.first, median_seconds(t.second, o.warmup, o.repeats));
    if (o.progress) o.progress(++done, all, cls + " " + std::to_string(size));
  }
  fit(line, launch_s);
  return line;
}

}  // namespace

OperatorClassMeasurement measure_operator_classes(const OperatorClassOptions& o) {
  if (o.threads < 1 || o.repeats < 1 || o.warmup < 0) throw std::invalid_argument("operator classes: need threads >= 1, repeats >= 1, warmup >= 0");
  set_compute_threads(o.threads);
  torch::NoGradGuard no_grad;
  torch::manual_seed(1);
  OperatorClassMeasurement m;
  keep_tensor_memory();          // as coinfer-profile and the runtime run the models: freed tensors reused, no page faults
  TrackingAllocator::install();  // and through the same allocator (it counts every tensor's bytes)
  const std::vector<long> rows = {1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18};  // rows of 64 floats: 0.25-64 MiB
  const std::vector<long> square = {64, 128, 256, 384, 512};
  double done = 0;
  const double all = 8 * 5 + 7;
  double launch_s = 0;
  double irregular_rate = 0, irregular_ns_per_row = 0;
  std::vector<std::pair<double, double>> irregular_by_bytes;
  // The launch cost: the smallest operator of each class (one element, one row).
  {
    auto one = torch::randn({1, 1}), row = torch::randn({1, 64});
    auto i0 = torch::zeros({1}, torch::kLong);
    const std::vector<std::pair<std::string, std::function<void()>>> small = {
        {"matmul [1,1]", [one] { (void)torch::matmul(one, one); }},
        {"index_select 1 row", [row, i0] { (void)row.index_select(0, i0); }},
        {"add [1,1]", [one] { (void)(one + one); }},
        {"amax [1,64]", [row] { (void)row.amax(1); }},
        {"topk 1 of [1,64]", [row] { (void)row.topk(1, -1); }},
        {"cat [1,64] x2",
         [row] {
           (void)torch::cat({row, row}, 1);
         }},
    };
    std::vector<double> t;
    for (const auto& [what, run] : small) {
      m.launches.emplace_back(what, median_seconds(run, o.warmup * 10, o.repeats * 10));
      t.push_back(m.launches.back().second);
      if (o.progress) o.progress(++done, all, "launch " + what);
    }
    std::sort(t.begin(), t.end());
    launch_s = 0.5 * (t[2] + t[3]);  // the median of six
    m.classes.launch_us = launch_s * 1e6;
  }
  // Dense: square matrix products (compute) and a thin product, 3 columns into 64 (its bytes).
  m.lines.push_back(measure_line(
      "dense", "matmul [n,n] x [n,n]", "flops", square,
      [](long n) {
        auto a = torch::randn({n, n}), b = torch::randn({n, n});
        return Timed{2.0 * n * n * n, [a, b] { (void)torch::matmul(a, b); }};
      },
      o, launch_s, done, all));
  m.lines.push_back(measure_line(
      "dense", "linear [r,3] x [3,64]", "bytes", rows,
      [](long r) {
        auto a = torch::randn({r, 3}), w = torch::randn({64, 3}), bias = torch::randn({64});
        return Timed{kF * (r * 3 + r * 64 + 3 * 64 + 64), [a, w, bias] { (void)torch::nn::functional::linear(a, w, bias); }};
      },
      o, launch_s, done, all));
  // Irregular: gather rows by random index, then scatter-add them back (PyG's aggregation), 4 edges per
  // row, rows of 64 floats and of 4 floats (the same indices): the two widths separate the cost per row
  // (ns_per_row) from the cost per byte (gbps).
  const auto irregular = [](long width) {
    return [width](long r) {
      const long n = r / 4, w = width;
      auto h = torch::randn({n, w});
      auto src = torch::randint(n, {r}, torch::kLong), dst = torch::randint(n, {r}, torch::kLong);
      auto idx = dst.unsqueeze(1).expand({r, w});
      const double bytes = (kF * 2 * r * w + kI * r) + (kF * (r * w + 2 * n * w) + kI * r);
      return Timed{bytes, [h, src, idx, n, w] { (void)torch::zeros({n, w}).scatter_add_(0, idx, h.index_select(0, src)); }};
    };
  };
  m.lines.push_back(measure_line("irregular", "zeros + index_select + scatter_add, rows of 64, 4 edges per row", "bytes", rows, irregular(64), o,
                                 launch_s, done, all));
  m.lines.push_back(measure_line("irregular", "zeros + index_select + scatter_add, rows of 4, 4 edges per row (the same rows)", "bytes (rows of 4)",
                                 rows, irregular(4), o, launch_s, done, all));
  {
    // Per size: t - 3 launches = 2 r x per_row + bytes / rate at both widths (2 r rows by index: the
    // gather's and the scatter's); the two equations give both. Medians over the sizes.
    const ClassLine& wide = m.lines[m.lines.size() - 2];
    const ClassLine& narrow = m.lines.back();
    std::vector<double> rates, per_row;
    std::vector<std::pair<double, double>> by_bytes;
    for (size_t i = 0; i < rows.size(); ++i) {
      const double r = static_cast<double>(rows[i]);
      const double tw = wide.points[i].second - 3 * launch_s, tn = narrow.points[i].second - 3 * launch_s;
      const double bw = wide.points[i].first, bn = narrow.points[i].first;
      double g = tw > tn ? (bw - bn) / (tw - tn) : bw / std::max(tw, 1e-9);
      double x = (tn - bn / g) / (2 * r);
      if (!(x > 0)) x = 0, g = bw / std::max(tw, 1e-9);
      rates.push_back(g);
      per_row.push_back(x);
      by_bytes.emplace_back(bw, g / 1e9);
    }
    std::sort(rates.begin(), rates.end());
    std::sort(per_row.begin(), per_row.end());
    irregular_rate = rates[rates.size() / 2];
    irregular_ns_per_row = per_row[per_row.size() / 2] * 1e9;
    irregular_by_bytes = by_bytes;
  }
  m.lines.push_back(measure_line(
      "elementwise", "add [r,64] + [r,64]", "bytes", rows,
      [](long r) {
        auto a = torch::randn({r, 64}), b = torch::randn({r, 64});
        return Timed{kF * 3 * r * 64, [a, b] { (void)(a + b); }};
      },
      o, launch_s, done, all));
  m.lines.push_back(measure_line(
      "reduction", "amax over k of [n,20,64] (DGCNN's neighbour max)", "bytes", rows,
      [](long r) {
        const long n = r / 20;
        auto a = torch::randn({n, 20, 64});
        return Timed{kF * (n * 20 * 64 + n * 64), [a] { (void)a.amax(1); }};
      },
      o, launch_s, done, all));
  m.lines.push_back(measure_line(
      "select", "topk 20 of each row of [n,n] (KNN)", "bytes", {128, 256, 512, 1024, 2048},
      [](long n) {
        auto d = torch::randn({n, n});
        return Timed{kF * (n * n + n * 20) + kI * n * 20, [d] { (void)d.topk(20, -1, true); }};
      },
      o, launch_s, done, all));
  m.lines.push_back(measure_line(
      "movement", "cat [r,32], [r,32] along columns", "bytes", rows,
      [](long r) {
        auto a = torch::randn({r, 32}), b = torch::randn({r, 32});
        return Timed{kF * 2 * 2 * r * 32, [a, b] { (void)torch::cat({a, b}, 1); }};
      },
      o, launch_s, done, all));
  // The model runner's cost per stage beyond its operators (the stage's input gathered, its output kept,
  // the dead tensors dropped): a one-stage model of one Linear layer on one row of one feature, whose
  // time is that cost plus one launch (its work is nothing). Not one of the shipped models.
  {
    const ModelSpec tiny = one_stage_model("operator-class-stage", {"one-row", "graph", "node_classification", 1, 0, 1, 1, "a single row"}, "fc", 1);
    const models::GnnModel model(tiny, 1);
    models::GraphSample in;
    in.x = torch::randn({1, 1});
    in.edge_index = torch::zeros({2, 0}, torch::kLong);
    const models::SplitState start = model.start(in);
    const double t = median_seconds(
        [&] {
          models::SplitState st = start;
          model.run(st, 1);
        },
        o.warmup * 10, o.repeats * 10);
    m.stage_overhead_ms = std::max(0.0, t - launch_s) * 1e3;
    if (o.progress) o.progress(++done, all, "stage overhead");
  }
  auto& r = m.classes.rates;
  const auto rate = [&](const std::string& cls, const std::string& work) {
    for (const ClassLine& l : m.lines)
      if (l.cls == cls && l.work == work) return l.rate_per_s / 1e9;
    return 0.0;
  };
  // Each class's bandwidth by the bytes its operator moved (GB/s): the curve the synthesis interpolates.
  const auto curve = [&](const std::string& cls) {
    std::vector<std::pair<double, double>> v;
    for (const ClassLine& l : m.lines)
      if (l.cls == cls && l.work == "bytes")
        for (const auto& [bytes, per_s] : l.rate_by_work) v.emplace_back(bytes, per_s / 1e9);
    return v;
  };
  r[static_cast<int>(OperatorClass::dense)] = {rate("dense", "flops"), rate("dense", "bytes"), 0, curve("dense")};
  for (OperatorClass c : {OperatorClass::elementwise, OperatorClass::reduction, OperatorClass::select, OperatorClass::movement})
    r[static_cast<int>(c)] = {0, rate(kOperatorClassNames.name(c), "bytes"), 0, curve(kOperatorClassNames.name(c))};
  r[static_cast<int>(OperatorClass::irregular)] = {0, irregular_rate / 1e9, irregular_ns_per_row, irregular_by_bytes};
  return m;
}

}  // namespace coinfer::hw
