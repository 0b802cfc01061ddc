#pragma once
// Turns what a real run left behind (each device's journal of request records, the server's
// decisions) into a RunResults in the simulator's schema: requests of every device in creation
// order with ids renumbered 0.., per-device bytes and last strategy, the scenario's events and
// bandwidth schedule, and the summary over the measurement window. A pure function (no files, no
// processes): the emulated testbed uses it, and it is tested without root.
#include <string>
#include <utility>
#include <vector>

#include "core/request_record.hpp"
#include "core/run_results.hpp"
#include "core/scenario.hpp"

namespace coinfer::hw {

// journals[i]: the records of scenario device i (empty when its journal is missing). Energy is not
// measured on the testbed: NaN.
// Reads the device journals named by `paths` (one per scenario device; "" = none) onto the server's
// clock (hw/clock_sync.hpp) and notes each board's clock in `clocks`; warns (log category `warn_as`)
// when an estimate is missing or its uncertainty exceeds `tolerance_s`.
// Power readings of one board: (t, W), t in seconds since the run's time zero on the server's clock.
using PowerReadings = std::vector<std::pair<double, double>>;

// `power`, if given, receives each device's power readings (moved onto the server's clock too).
std::vector<std::vector<RequestRecord>> read_journals_server_clock(const Scenario& sc, const std::vector<std::string>& paths,
                                                                   std::vector<ClockRecord>& clocks, double tolerance_s, const std::string& warn_as,
                                                                   std::vector<PowerReadings>* power = nullptr);

// Energy (J) over [from_s, to_s] from power readings (trapezoids; the readings at the ends extended to
// the window's edges). NaN, with the reason in `why`, when there are none or they do not cover the
// window: the first after from_s + 2 s, the last before to_s - 2 s, or a gap over 2 s.
double energy_from_power(const PowerReadings& readings, double from_s, double to_s, std::string* why);

// power[i], when given and not empty, measures device i's energy over the measurement window (its
// whole board, radio included: energy_compute_j holds it, energy_radio_j is 0); otherwise NaN.
RunResults merge_journals(const Scenario& sc, const std::vector<std::vector<RequestRecord>>& journals, std::vector<DecisionRecord> decisions,
                          double end_s, const std::vector<PowerReadings>* power = nullptr);

}  // namespace coinfer::hw
