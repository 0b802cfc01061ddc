#include "hw/lut_profiler.hpp"
#include "models/model_runner.hpp"

#include "hw/compute_threads.hpp"

#include <torch/torch.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "core/metrics.hpp"
#include "core/text_util.hpp"
#include "hw/frame.hpp"
#include "hw/protocol.hpp"
#include "hw/tracking_allocator.hpp"
#include "hw/system_meter.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"

namespace coinfer::hw {

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// A batch of b samples: point clouds stacked [b, N, F]; graphs as one disjoint union whose graphs each
// pool on their own (SplitState::graph_nodes): the forward pass the real server runs for a batch.
// (Node-capacity variants pool the padded union as one: their batches run one input at a time.)
models::GraphSample batch_of(const ModelSpec& spec, int b, std::uint64_t seed, const std::string& file, int first = 0) {
  std::vector<torch::Tensor> xs, eis;
  std::int64_t offset = 0;
  for (int i = first; i < first + b; ++i) {
    models::LabelledSample s;
    if (file.empty()) {
      s = models::generate_sample(spec.dataset, seed, i);
    } else if (spec.dataset.kind == "image") {
      throw std::invalid_argument("image datasets take generated inputs only (no input file: " + file + ")");
    } else if (spec.dataset.kind == "point_cloud") {
      static PointCloudFile f;  // loaded once
      static std::string loaded;
      if (loaded != file) f = load_pointnet_h5(file), loaded = file;
      s.sample = models::sample_from_file(f, i % f.clouds, spec.dataset.nodes);
    } else {
      static GraphFile f;
      static std::string loaded;
      if (loaded != file) f = load_graph_h5(file), loaded = file;
      s.sample = models::sample_from_file(f);
    }
    xs.push_back(s.sample.x);
    if (s.sample.edge_index.defined()) {
      eis.push_back(s.sample.edge_index + offset);
      offset += s.sample.x.size(0);
    }
  }
  models::GraphSample g;
  g.x = torch::cat(xs, 0);
  if (!eis.empty()) {
    g.edge_index = torch::cat(eis, 1);
    g.graphs = b;
    // Each graph pools on its own, as the real server runs a stacked batch (hw/batch_runner.hpp).
    if (b > 1 && spec.variant.node_capacity <= 0)
      for (const torch::Tensor& x : xs) g.graph_nodes.push_back(x.size(0));
  }
  return g;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The bytes the middleware sends for one request crossing each split (batch 1), as the device
// runtime and the server build them (hw/protocol.hpp task and result payloads, hw/frame.hpp framing
// and zstd), over several inputs; and the time this machine takes to compress and decompress them.
// Returns the number of inputs.
// The input on the model's device.
models::GraphSample on_device(models::GraphSample g, const torch::Device& device) {
  g.x = g.x.to(device);
  if (g.edge_index.defined()) g.edge_index = g.edge_index.to(device);
  return g;
}

// --processor's LibTorch device, or why it cannot be used here.
torch::Device profiling_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name != "cuda") throw std::invalid_argument("unknown LibTorch device '" + name + "' (allowed: cpu, cuda)");
  if (!models::cuda_available())
    throw std::invalid_argument("--processor cuda: torch::cuda::is_available() is false here: this LibTorch (" + std::string(TORCH_VERSION) +
                                ") was built without CUDA or no GPU is visible; build coinfer against a CUDA LibTorch on the GPU board "
                                "(hw/README.md \"Building on the boards\"), or profile its CPU with --processor cpu");
  return torch::Device(torch::kCUDA, 0);
}

// Splits whose state is larger than the middleware's largest frame (kDefaultMaxPayload) cannot be
// sent by the testbed at all: they get no wire bytes (NaN) and are listed in `oversized`.
int measure_wire_bytes(models::GnnModel& model, const ModelSpec& spec, const ProfileOptions& o, LutTable& t, std::vector<int>& oversized) {
  const int n = spec.num_stages();
  std::vector<bool> too_large(n + 1, false);
  const int inputs = std::max(o.repeats, 10);
  std::vector<std::vector<double>> wire(n + 1);
  std::vector<double> compress_s(n + 1, 0), decompress_s(n + 1, 0);
  for (int w = 0; w < inputs; ++w) {
    models::SplitState st = model.start(on_device(batch_of(spec, 1, o.seed, o.input_file, w), model.device()));
    for (int k = 0; k <= n; ++k) {
      if (k > 0) model.run(st, k);
      const double now = unix_now();
      const std::string payload = k < n ? pack_task(TaskHeader{k, o.device_type, now}, models::serialize(st))
                                        : pack_result(ResultHeader{true, "", 1, "", now, now, now, now}, models::serialize(st));
      if (payload.size() > kDefaultMaxPayload) {
        too_large[k] = true;
        continue;
      }
      auto t0 = std::chrono::steady_clock::now();
      const std::optional<std::string> z = payload.size() >= kCompressThreshold ? compress_payload(payload) : std::nullopt;
      compress_s[k] += seconds_since(t0);
      const std::string header =
          encode_header(k < n ? MsgType::task : MsgType::result, 1, z.has_value(), z ? z->size() : payload.size(), payload.size());
      if (z) {
        t0 = std::chrono::steady_clock::now();
        const std::string back = decode_payload(parse_header(reinterpret_cast<const unsigned char*>(header.data())), *z);
        decompress_s[k] += seconds_since(t0);
        if (back != payload) throw std::runtime_error("wire bytes: zstd round trip differs");
      }
      wire[k].push_back(static_cast<double>(header.size() + (z ? z->size() : payload.size())));
    }
  }
  const auto& levels = t.quantile_levels();
  for (int k = 0; k <= n; ++k) {
    if (too_large[k] || wire[k].empty()) {
      oversized.push_back(k);
      continue;
    }
    std::vector<double> q(levels.size());
    for (size_t i = 0; i < levels.size(); ++i) q[i] = percentile(wire[k], 100 * levels[i]);
    t.set_wire(k, q, compress_s[k] / inputs, decompress_s[k] / inputs);
  }
  return inputs;
}

}  // namespace

void check_profiling_device(const std::string& torch_device) { profiling_device(torch_device); }

LutTable profile_model(const ModelSpec& spec, const ProfileOptions& o) {
  if (o.batch_sizes.empty()) throw std::invalid_argument("no batch sizes");
  for (size_t i = 0; i < o.batch_sizes.size(); ++i)
    if (o.batch_sizes[i] != static_cast<int>(i) + 1) throw std::invalid_argument("batch sizes must be 1..B without holes");
  if (o.repeats < 1 || o.warmup < 0 || o.threads < 1) throw std::invalid_argument("need repeats >= 1, warmup >= 0, threads >= 1");
  torch::NoGradGuard no_grad;
  const std::string threads_text = set_compute_threads(o.threads);
  TrackingAllocator::install();
  const torch::Device device = profiling_device(o.torch_device);
  const bool on_cpu = device.is_cpu();
  models::GnnModel model(spec, o.seed);
  if (o.feature_chunks > 0) model.set_feature_chunks(o.feature_chunks);  // else the variant's fd<P> stands
  model.to(device);
  // CUDA runs asynchronously: a timed run ends when the device has finished it.
  const auto sync = [on_cpu] {
    if (!on_cpu) torch::cuda::synchronize();
  };
  const int n = spec.num_stages();
  const int B = static_cast<int>(o.batch_sizes.size());
  LutTable t({o.device_type, spec.name, spec.dataset.name, o.processor}, n, B);
  const std::vector<double>& levels = standard_quantile_levels();
  t.set_quantile_levels(levels);
  auto wanted = [&](int i, int j) {
    if (o.whole_model_only) return i == 0 && j == n;
    if (o.single_stages_only) return j == i + 1;
    return true;
  };
  const int ranges = o.whole_model_only ? 1 : o.single_stages_only ? n : n * (n + 1) / 2;
  double total_work = 0, done_work = 0;
  long long resumed = 0, entries = 0;
  for (int b : o.batch_sizes) total_work += static_cast<double>(ranges) * b;
  std::vector<double> bytes(n + 1, 0);
  // peak[i][j][b - 1]: bytes above the input state (NaN: not measured).
  std::vector<std::vector<std::vector<double>>> peak(n + 1, std::vector<std::vector<double>>(n + 1, std::vector<double>(B, NAN)));
  std::vector<double> zeros(n, 0), values(n, 0);  // per stage: exact zeros and values seen in its output
  for (int b : o.batch_sizes) {
    const models::GraphSample input = on_device(batch_of(spec, b, o.seed, o.input_file), device);
    // States at every split, computed once (untimed).
    std::vector<models::SplitState> at(n + 1);
    at[0] = model.start(input);
    for (int k = 1; k <= n; ++k) {
      at[k] = at[k - 1];
      model.run(at[k], k);
      // Stage k-1's output, where it is a floating-point tensor (not a KNN stage's indices).
      const auto out = at[k].tensors.find(k - 1);
      if (out != at[k].tensors.end() && out->second.defined()) {
        const torch::Tensor v = out->second.is_quantized() ? out->second.dequantize() : out->second;
        if (v.is_floating_point()) {
          zeros[static_cast<size_t>(k - 1)] += static_cast<double>(v.eq(0).sum().item<int64_t>());
          values[static_cast<size_t>(k - 1)] += static_cast<double>(v.numel());
        }
      }
    }
    if (b == 1)
      for (int k = 0; k <= n; ++k) bytes[k] = static_cast<double>(models::GnnModel::payload_bytes(at[k]));
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j <= n; ++j) {
        if (!wanted(i, j)) continue;
        ++entries;
        const auto earlier = o.resume.find({i, j, b});
        if (earlier != o.resume.end()) {  // measured by the interrupted run
          const ProfiledEntry& e = earlier->second;
          if (e.quantiles.size() != levels.size()) throw std::invalid_argument("a resumed entry has other quantile levels");
          t.set_latency(i, j, b, e.stats);
          t.set_quantiles(i, j, b, e.quantiles);
          // Journals of older profiles recorded the peak at batch 1 only (0 elsewhere).
          if (on_cpu && (b == 1 || e.peak_bytes > 0) && std::isfinite(e.peak_bytes)) peak[i][j][static_cast<size_t>(b - 1)] = e.peak_bytes;
          ++resumed;
          done_work += b;
          if (o.progress)
            o.progress(done_work, total_work,
                       "batch " + std::to_string(b) + " range [" + std::to_string(i) + "," + std::to_string(j) + ") (resumed)");
          continue;
        }
        std::vector<double> samples;
        for (int r = 0; r < o.warmup + o.repeats; ++r) {
          models::SplitState st = at[i];
          auto& alloc = TrackingAllocator::instance();
          const size_t base = alloc.current();
          alloc.reset_peak();
          sync();
          const auto t0 = std::chrono::steady_clock::now();
          model.run(st, j);
          sync();
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (on_cpu) {
            double& p = peak[i][j][static_cast<size_t>(b - 1)];
            p = std::max(std::isnan(p) ? 0.0 : p, static_cast<double>(alloc.peak() - base));
          }
          if (r >= o.warmup) samples.push_back(s);
        }
        double sum = 0, sq = 0;
        for (double s : samples) sum += s;
        const double mean = sum / samples.size();
        for (double s : samples) sq += (s - mean) * (s - mean);
        std::vector<double> sorted = samples;
        LatencyStats st{mean, percentile(sorted, 50), percentile(sorted, 95), samples.size() > 1 ? std::sqrt(sq / (samples.size() - 1)) : 0.0,
                        static_cast<long long>(samples.size())};
        t.set_latency(i, j, b, st);
        std::vector<double> q(levels.size());
        for (size_t k = 0; k < levels.size(); ++k) q[k] = percentile(sorted, 100 * levels[k]);
        t.set_quantiles(i, j, b, q);
        if (o.measured) o.measured({i, j, b}, ProfiledEntry{st, q, peak[i][j][static_cast<size_t>(b - 1)]});
        done_work += b;
        if (o.progress)
          o.progress(done_work, total_work, "batch " + std::to_string(b) + " range [" + std::to_string(i) + "," + std::to_string(j) + ")");
      }
  }
  for (int k = 0; k <= n; ++k) t.bytes_per_split()[k] = bytes[k];
  std::vector<int> oversized_splits;
  const int wire_inputs = o.single_stages_only ? 0 : measure_wire_bytes(model, spec, o, t, oversized_splits);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j <= n; ++j)
      if (wanted(i, j))
        for (int b = 1; b <= B; ++b)
          if (!std::isnan(peak[i][j][static_cast<size_t>(b - 1)])) t.set_peak_memory(i, j, b, peak[i][j][static_cast<size_t>(b - 1)]);
  for (int k = 0; k < n; ++k)
    if (values[static_cast<size_t>(k)] > 0) t.set_stage_output_sparsity(k, zeros[static_cast<size_t>(k)] / values[static_cast<size_t>(k)]);
  Provenance& pv = t.provenance();
  pv.kind = "measured";
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  pv.attributes["note"] = "MEASURED by coinfer profile on this machine with the LibTorch model";
  pv.attributes["cpu"] = cpu_model_name();
  pv.attributes["cores"] = std::to_string(::sysconf(_SC_NPROCESSORS_ONLN));
  pv.attributes["threads"] = std::to_string(o.threads) + " (" + threads_text + ")";
  pv.attributes["malloc"] = "glibc, mmap and trim thresholds 1 GiB (hw/compute_threads.hpp keep_tensor_memory)";
  pv.attributes["host"] = host;
  struct utsname uts {};
  ::uname(&uts);
  pv.attributes["machine"] = uts.machine;
  // Under qemu-user emulation (scripts/board.sh sets COINFER_EMULATED) the times are the emulated
  // board's, and the cpu line names the machine that emulates it.
  if (const char* emulated = std::getenv("COINFER_EMULATED"); emulated && *emulated)
    pv.attributes["emulated"] = std::string(emulated) + " (times are the emulated program's; cpu names the emulating machine)";
  pv.attributes["libtorch"] = TORCH_VERSION;
  const std::string config = at::show_config();
  const auto blas = config.find("BLAS_INFO=");
  std::string blas_lib;
  std::error_code ec;
  auto target = std::filesystem::read_symlink(std::string("/etc/alternatives/libblas.so.3-") + uts.machine + "-linux-gnu", ec);
  if (!ec) blas_lib = " (libblas.so.3 -> " + target.string() + ")";
  pv.attributes["blas"] =
      (blas == std::string::npos ? "unknown" : config.substr(blas + 10, config.find_first_of(",\n", blas) - blas - 10)) + blas_lib;
  pv.attributes["date"] = utc_now();
  pv.attributes["command"] = o.command_line;
  if (resumed > 0)
    pv.attributes["resumed"] = std::to_string(resumed) + " of " + std::to_string(entries) +
                               " (range, batch) entries were measured by an earlier run of the same profile that was interrupted";
  pv.attributes["timing"] = "steady_clock around each range run; " + std::to_string(o.warmup) + " warm-up + " + std::to_string(o.repeats) +
                            " timed runs per (range, batch)";
  pv.attributes["ranges"] = o.whole_model_only     ? "whole model [0,n) only (a calibration, not a complete LUT)"
                            : o.single_stages_only ? "single stages [i,i+1) only (module samples, not a complete LUT)"
                                                   : "every range [i,j)";
  pv.attributes["inputs"] = o.input_file.empty()
                                ? "synthetic " + spec.dataset.name + "-like samples (models/README.md), seed " + std::to_string(o.seed)
                                : "samples from the file " + o.input_file;
  if (o.batch_sizes.size() > 1)
    pv.attributes["batches"] = spec.dataset.kind == "point_cloud" || spec.dataset.kind == "image"
                                   ? "a batch of b: b clouds (images) stacked along dimension 0, one forward pass (hw/batch_runner.hpp)"
                               : spec.variant.node_capacity <= 0
                                   ? "a batch of b: one disjoint union of b graphs, each pooled on its own, one forward pass (hw/batch_runner.hpp)"
                                   : "a batch of b: one union padded to b x the node capacity, pooled as one; the real server runs padded "
                                     "inputs one at a time, so these entries are not its work";
  pv.attributes["distribution"] =
      "quantiles of the timed runs at 23 levels (0, 0.01, 0.05 .. 0.95, 0.99, 1), linear between runs as percentile() interpolates";
  if (wire_inputs > 0)
    pv.attributes["wire_bytes"] =
        "bytes the middleware sends per request at batch 1 (frame + task or result header + serialised state, zstd level 1 when a probe shrinks it), "
        "quantiles over " +
        std::to_string(wire_inputs) + " inputs; compress/decompress: mean seconds on this machine";
  if (!oversized_splits.empty()) {
    std::string list;
    for (int k : oversized_splits) list += (list.empty() ? "" : ", ") + std::to_string(k);
    pv.attributes["wire_bytes_missing"] = (oversized_splits.size() == 1 ? "split " : "splits ") + list +
                                          ": the state at batch 1 is larger than the middleware's largest frame (" +
                                          std::to_string(kDefaultMaxPayload >> 20) + " MiB), so the testbed cannot send it; no wire bytes";
  }
  pv.attributes["bytes_per_split"] = "payload bytes of the real serialised split state at batch 1";
  pv.attributes["peak_memory"] = on_cpu ? "peak bytes from LibTorch's CPU allocator above the input state, every batch size"
                                        : "not measured (the model ran on CUDA; LibTorch's CPU allocator does not see its memory)";
  pv.attributes["stage_output_sparsity"] =
      "fraction of exact zeros in each stage's output over every profiled input (all batch sizes); "
      "stages whose output is not floating point (KNN indices) have none";
  pv.attributes["processor"] =
      (o.processor.empty() ? std::string("the device type's only processor") : o.processor) + ", run by LibTorch on " + device.str();
  pv.attributes["feature_chunks"] = std::to_string(model.feature_chunks());
  pv.attributes["role"] = "device";
  pv.attributes["cpu_cap"] = o.cpu_cap.empty() ? "none" : "emulated slower device: " + o.cpu_cap;
  // The number alone, so that a testbed can cap its device processes the same way (coinfer validate).
  pv.attributes["cpu_cap_cores"] = o.cpu_cap_cores > 0 ? std::to_string(o.cpu_cap_cores) : "0";
  pv.attributes["background_load"] = o.background_load > 0 ? std::to_string(o.background_load) + ": other work took this share of the " +
                                                                 std::to_string(o.cpu_cap_cores) + " capped cores (the process ran under a cap of " +
                                                                 std::to_string(o.cpu_cap_cores * (1 - o.background_load)) +
                                                                 " cores: a load event's rule on the testbed, core/background_load.hpp)"
                                                           : "0";
  return t;
}

}  // namespace coinfer::hw
