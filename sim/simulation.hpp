#pragma once
// Runs one scenario in SimGrid and returns every request's record, energies and events.
// One simulation per process (SimGrid allows one engine per process). Blocks until the simulated run
// ends: arrivals stop at duration_s; requests still unfinished drain_s later are recorded as failed.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/run_results.hpp"
#include "core/scenario.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::sim {

struct SimulationOptions {
  // Called about every 5 % of the simulated duration with (simulated seconds, requests created).
  std::function<void(double, long long)> progress;
  // SimGrid's own settings, applied after coinfer's (so they win): "--cfg" values "key:value"
  // (e.g. "network/model:LV08") and "--log" values (e.g. "root.thresh:info"). An unknown key or a
  // malformed setting is an InputError before anything runs.
  std::vector<std::string> engine_config, engine_log;
  // Where the requests go as they finish, when set: blocks of records in id order (moved from), handed
  // over during the run as soon as the requests are over and nobody holds them (sim/request_ledger.hpp),
  // the rest after the engine ends. RunResults::requests then stays empty; its summaries are the same
  // (RunResults::request_count, failure_reasons, ...). Unset: every record is in RunResults::requests.
  std::function<void(std::vector<RequestRecord>&)> stream_requests;
  // Requests per chunk of the run's ledger (sim/request_ledger.hpp): what is handed over at a time.
  // Results do not depend on it; tests make it small so that short runs hand requests over mid-run.
  std::size_t request_chunk = 4096;
};

// Everything run_simulation checks before it starts, without running: models, LUT entries, the
// scheduler's name and parameters (and the oracle's size limit). Throws InputError.
void validate_simulation(const Scenario& scenario, const ModelCatalog& models, const LutSet& luts);

// The LUTs whose distributions this run draws service times from: with `service_time: sampled`, the
// tables it executes on (devices', their servers', helpers') that have distributions. Empty under
// `mean` or when no such table has one (every execution then takes its entry's mean).
std::vector<LutKey> sampled_service_luts(const Scenario& scenario, const LutSet& luts);

// Throws InputError for scenario/LUT inconsistencies (before anything runs).
RunResults run_simulation(const Scenario& scenario, const ModelCatalog& models, const LutSet& luts, const SimulationOptions& options = {});

}  // namespace coinfer::sim
