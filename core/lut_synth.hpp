#pragma once
// Synthesises a LUT from a model spec and a device profile with a roofline-style formula (documented in
// traces/README.md). Synthesised tables say so in their provenance: they are not measurements.
#include <optional>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "core/operator_class.hpp"

namespace coinfer {

// One processor of a device or server type (traces/devices.yaml): what the synthesis formula needs.
struct ProcessorProfile {
  std::string name;              // its name within the type, e.g. "gpu"
  std::string kind;              // "cpu", "gpu" or "npu" ("" = not stated: an old-style profile)
  int cores = 0;                 // CPU cores, GPU CUDA cores / execution units, NPU tiles (0 = not stated)
  std::string description;       // hardware, with the source of the peak figures
  double peak_gflops = 0;        // peak of the unit that runs the GNN (fp32; an NPU's fp16, as its description says)
  double mem_gbps = 0;           // memory bandwidth it reaches, GB/s (1e9 bytes/s)
  double stage_overhead_ms = 0;  // fixed cost per stage (kernel launches, framework dispatch)
  double batch_half = 0;         // h: parallel utilisation u(b) = b(1+h)/(b+h); 0 = no gain from batching
  double latency_cv = 0.05;      // relative spread used for the synthesised p95/std
  // Efficiency: the fraction of peak reached. Either given, or calibrated so that a named model runs
  // whole on this processor in a published time, or copied from another (calibrated) processor.
  std::optional<double> efficiency;
  struct Calibration {
    std::string model, dataset;
    double whole_model_ms = 0;
    std::string source;  // the publication and table
  };
  std::optional<Calibration> calibration;
  std::string efficiency_from;  // "TYPE" (its default processor) or "TYPE.PROCESSOR"
  std::string efficiency_note;  // why this efficiency
  // Per operator class (traces/README.md "Operator classes"): where a profile gives them, a stage costs
  // the sum over its operators of launches x launch_us + max(F / gflops, B / gbps) + rows x ns_per_row, instead of the
  // roofline of the whole stage at one efficiency (no efficiency is given then).
  struct ClassRate {
    double gflops = 0;      // FLOP/s reached by this class, 1e9/s (0: its FLOPs are not what limits it)
    double gbps = 0;        // bytes/s it moves, 1e9/s (> 0)
    double ns_per_row = 0;  // ns per row read or written by index, on top of the bytes (gathers of short rows; 0: none)
    // The bandwidth by the bytes an operator moves, where measured (its working set against the caches):
    // (bytes, GB/s) points in increasing bytes; an operator's rate is interpolated in log(bytes), the
    // end points' below and above them. Empty: gbps at every size.
    std::vector<std::pair<double, double>> gbps_by_bytes;
    // The GB/s this class moves an operator of `bytes` at.
    double gbps_at(double bytes) const;
  };
  struct OperatorClasses {
    double launch_us = 0;                  // cost of launching one operator (framework dispatch + kernel launch), us
    ClassRate rates[kOperatorClassCount];  // by OperatorClass
    std::string source;                    // measured on what (or derived from which source)
    const ClassRate& rate(OperatorClass c) const { return rates[static_cast<int>(c)]; }
  };
  std::optional<OperatorClasses> operator_classes;
  // Power while idle and while computing, W, where a source states them per processor (0 = not stated).
  double idle_w = 0, busy_w = 0;
  std::string power_source;
};

// A device or server type (traces/devices.yaml): its processors, how data moves between them, its
// memory. A profile in the one-processor form (peak figures at the top, no `processors`) is one processor
// named "default" (kind: the optional top-level `kind`, else not stated); traces/README.md "Device
// profiles".
struct DeviceProfile {
  std::string type;                          // e.g. "jetson-tx2"
  std::string role;                          // "device" or "server"
  std::string description;                   // the board or machine, with the source of its figures
  std::vector<ProcessorProfile> processors;  // file order; at least one
  std::string default_processor;             // what a LUT without a processor describes (the first by default)
  bool processors_named = true;              // false: an old-style profile (its one processor's LUTs name none)
  // Memory. capacity_bytes 0 = not stated (no limit is simulated). gpu_shared: the GPU (or NPU) works in
  // the same memory as the CPU (a Jetson's unified LPDDR); otherwise gpu_bytes is its own memory.
  struct Memory {
    double capacity_bytes = 0;
    bool gpu_shared = true;
    double gpu_bytes = 0;
    std::string source;
  } memory;
  // How a tensor moves between two processors of this type: shared memory without a copy, or a copy
  // at `gbps` (GB/s) after `latency_us`.
  struct Interconnect {
    bool zero_copy = true;
    double gbps = 0, latency_us = 0;
    std::string source;
  } interconnect;
  std::vector<double> power_modes_w;  // the board's power budgets (e.g. a Jetson's nvpmodel modes), W
  std::string power_source;
  // The whole board's power when idle and while any processor computes (W), with where the figures come
  // from: a device of this type without devices[].power.idle_w/busy_w uses them. Both 0: not stated.
  struct BoardPower {
    double idle_w = 0, busy_w = 0;
    std::string source;
  } board_power;

  // The processor named `name` ("" = the default one); nullptr when the type has none of that name.
  const ProcessorProfile* processor(const std::string& name = "") const;
  // Seconds to move `bytes` from one of its processors to another (0 with zero copy).
  double copy_seconds(double bytes) const;
};

struct SynthOptions {
  int max_batch = 16;
};

// Seconds for one stage at batch b: overhead + max(F/(eta*P), M/(eta*BW)) * (b+h)/(1+h); on a processor
// with operator classes overhead + sum over the stage's operators of
// launches*launch + (max(F_o/gflops_c, B_o/gbps_c) + rows_o*ns_per_row_c) * (b+h)/(1+h) (efficiency unused).
double synth_stage_seconds(const StageSpec& stage, const ProcessorProfile& processor, double efficiency, int batch);
// The class formula's seconds for one operator at batch b on `processor` (which has operator classes).
double operator_seconds(const OperatorCost& op, const ProcessorProfile& processor, int batch);
// Efficiency that makes the whole model take `whole_model_ms` at batch 1 on this processor (a processor
// with operator classes has none: std::invalid_argument).
// Throws std::invalid_argument if the per-stage overheads alone exceed the target.
double calibrate_efficiency(const ModelSpec& spec, const ProcessorProfile& processor, double whole_model_ms);
// Builds the full table for `processor` of `profile`: every range [i,j), batches 1..max_batch, bytes
// per split, peak memory, provenance kind "synthesised" with the formula, the profile, the processor
// and how the efficiency was obtained. The table's key is the profile's type and the processor's name
// (none for an old-style profile).
LutTable synthesise_lut(const ModelSpec& spec, const DeviceProfile& profile, const ProcessorProfile& processor, double efficiency,
                        const std::string& efficiency_how, const SynthOptions& options);

}  // namespace coinfer
