#pragma once
// Measures a processor's rate per operator class on this machine's CPU with LibTorch (coinfer profile
// --operator-classes; traces/README.md "Operator classes"): the launch cost (the median time of the
// smallest operator of each class), then for each class one representative operator at four sizes
// (the shipped models' tensor sizes, ~0.25-64 MiB), the median of timed runs at each, and the class's
// rate at each size = work / (time - launch): the class's bandwidth by bytes moved, and its median (work = the bytes, or for the dense
// class's compute rate the FLOPs, counted as core/stage_operators.cpp counts them). Blocks for tens of seconds; uses LibTorch's intra-op threads as set by `threads`.
#include <functional>
#include <string>
#include <vector>

#include "core/lut_synth.hpp"

namespace coinfer::hw {

struct OperatorClassOptions {
  int threads = 1;   // LibTorch intra-op threads
  int repeats = 15;  // timed runs per size (the median is kept)
  int warmup = 3;
  std::function<void(double done, double all, const std::string& what)> progress;
};

// One measured line: which operator, what its work counts, and the (work, median seconds) points.
struct ClassLine {
  std::string cls;   // class name, with "(flops)" for the dense class's compute line
  std::string what;  // the LibTorch operator and its shapes
  std::string work;  // "bytes" or "flops"
  std::vector<std::pair<double, double>> points;
  double rate_per_s = 0;                                // work per second: the median over the sizes
  std::vector<std::pair<double, double>> rate_by_work;  // (work, work per second) at each size
  double intercept_s = 0;                               // the launch cost subtracted from each point
};

struct OperatorClassMeasurement {
  ProcessorProfile::OperatorClasses classes;  // source left for the caller to complete
  std::vector<ClassLine> lines;
  std::vector<std::pair<std::string, double>> launches;  // the smallest operators' median seconds
  // The model runner's cost per stage beyond its operators' (a processor's stage_overhead_ms): a one-row,
  // one-Linear stage run by models::GnnModel, less one launch.
  double stage_overhead_ms = 0;
};

OperatorClassMeasurement measure_operator_classes(const OperatorClassOptions& options);

}  // namespace coinfer::hw
