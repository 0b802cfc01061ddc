#pragma once
// summary.json (documented in sim/README.md): per device and "total": throughput_rps, latency_ms
// {mean,p50,p95,p99}, energy_j_per_inference, completed, failed. Deterministic key order and formatting.
#include <string>

#include "core/run_results.hpp"

namespace coinfer {

std::string summary_json_text(const RunResults& r);
void write_summary_json(const std::string& path, const RunResults& r);
// timing.json: the run's wall-clock figures (engine time, each decision's time); not deterministic.
std::string timing_json_text(const RunResults& r);

}  // namespace coinfer
