#pragma once
// Synthesises a LUT from a model spec and a device profile with a roofline-style formula (documented in
// traces/README.md). Synthesised tables say so in their provenance: they are not measurements.
#include <optional>
#include <string>

#include "core/lut.hpp"
#include "core/model_spec.hpp"

namespace coinfer {

// Hardware description of a device or server type (traces/devices.yaml).
struct DeviceProfile {
  std::string type;          // e.g. "rpi4b"
  std::string role;          // "device" or "server"
  std::string description;   // hardware, with the source of the peak figures
  double peak_gflops = 0;    // fp32 peak of the unit that runs the GNN
  double mem_gbps = 0;       // memory bandwidth, GB/s (1e9 bytes/s)
  double stage_overhead_ms = 0;  // fixed cost per stage (kernel launches, framework dispatch)
  double batch_half = 0;     // h: parallel utilisation u(b) = b(1+h)/(b+h); 0 = no gain from batching
  double latency_cv = 0.05;  // relative spread used for the synthesised p95/std
  // Efficiency: the fraction of peak reached. Either given, or calibrated so that a named model runs
  // whole on this type in a published time, or copied from another (calibrated) profile.
  std::optional<double> efficiency;
  struct Calibration {
    std::string model, dataset;
    double whole_model_ms = 0;
    std::string source;  // the publication and table
  };
  std::optional<Calibration> calibration;
  std::string efficiency_from;  // another profile's type
  std::string efficiency_note;  // why this efficiency
};

struct SynthOptions {
  int max_batch = 16;
};

// Seconds for one stage at batch b: overhead + max(F/(eta*P), M/(eta*BW)) * (b+h)/(1+h).
double synth_stage_seconds(const StageSpec& stage, const DeviceProfile& profile, double efficiency, int batch);
// Efficiency that makes the whole model take `whole_model_ms` at batch 1 on this profile.
// Throws std::invalid_argument if the per-stage overheads alone exceed the target.
double calibrate_efficiency(const ModelSpec& spec, const DeviceProfile& profile, double whole_model_ms);
// Builds the full table: every range [i,j), batches 1..max_batch, bytes per split, peak memory,
// provenance kind "synthesised" with the formula, the profile and how the efficiency was obtained.
LutTable synthesise_lut(const ModelSpec& spec, const DeviceProfile& profile, double efficiency,
                        const std::string& efficiency_how, const SynthOptions& options);

}  // namespace coinfer
