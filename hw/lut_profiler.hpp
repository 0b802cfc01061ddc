#pragma once
// Measures a LUT on this machine (ACE-GNN Sec. III-B data pre-collection): the real LibTorch model,
// every stage range [i,j) and batch size, warm-up then timed runs (mean, p50, p95, std), the real
// serialised bytes at every split, the peak tensor memory of every range and batch size, the
// activation sparsity of every stage's output, and the provenance.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/lut.hpp"
#include "core/model_spec.hpp"

namespace coinfer::hw {

// One measured (range, batch) entry: what a LUT holds for it.
struct ProfiledEntry {
  LatencyStats stats;
  std::vector<double> quantiles;  // at standard_quantile_levels()
  double peak_bytes = 0;          // bytes above the input state (CPU only; NaN on CUDA)
};
using ProfiledKey = std::tuple<int, int, int>;  // (i, j, batch): range [i, j) at that batch size

struct ProfileOptions {
  std::string device_type = "this-machine";
  std::vector<int> batch_sizes = {1, 2, 3, 4, 5, 6, 7, 8};  // must be 1..B without holes
  int warmup = 2;
  int repeats = 10;
  int threads = 1;           // intra-op threads (torch::set_num_threads)
  int feature_chunks = 0;    // feature decomposition slices while profiling; 0: the model variant's own (fd<P> or 1)
  std::uint64_t seed = 1;    // inputs and weights
  std::string command_line;  // recorded in the provenance
  std::string cpu_cap;       // description of a CPU cap in force (emulating a slower device), or empty
  double cpu_cap_cores = 0;  // the cap in cores (0 = none)
  // Background load: the share of the capped cores other work takes while profiling;
  // the process then runs under a cap of cpu_cap_cores x (1 - background_load), the testbed's rule.
  double background_load = 0;
  bool whole_model_only = false;    // measure only [0, n) (a calibration: validate compares it with a LUT)
  bool single_stages_only = false;  // measure only [i, i+1) (module latency samples for the regressors)
  std::string input_file;           // a real dataset file (PointNet or graph HDF5 layout) instead of synthetic samples
  // Which processor the table describes (its LUT key, traces/README.md; "" = the device type's only
  // processor) and the LibTorch device that runs the model: "cpu", or "cuda" (a CUDA LibTorch with a GPU
  // visible: torch::cuda::is_available(); otherwise profile_model throws std::invalid_argument saying so).
  std::string processor;
  std::string torch_device = "cpu";
  // Progress: (ranges done, ranges in all, text).
  // Called after each measured (range, batch size) with (work done, total work, what): a unit of
  // work is one sample, so a range at batch b counts b (the cost grows with the batch).
  std::function<void(double, double, const std::string&)> progress;
  // Resuming an interrupted profile (coinfer profile's OUT.partial): entries in `resume` are taken as
  // they are instead of being measured again (the provenance counts them); each entry measured now is
  // handed to `measured` as soon as it is done, so that the caller can journal it.
  std::map<ProfiledKey, ProfiledEntry> resume;
  std::function<void(const ProfiledKey&, const ProfiledEntry&)> measured;
};

// Whether ProfileOptions::torch_device can run here: std::invalid_argument saying why not (cuda
// without a CUDA LibTorch or a visible GPU).
void check_profiling_device(const std::string& torch_device);

// Throws std::invalid_argument for bad options (batch sizes not 1..B, repeats < 1, ...).
LutTable profile_model(const ModelSpec& spec, const ProfileOptions& options);

}  // namespace coinfer::hw
