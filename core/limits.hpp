#pragma once
// Bounds on what a user can type, each with the reason. Inputs beyond them are refused at load time
// (exit 2, naming file, line, key, the bound and the reason) instead of running out of memory or never
// ending. scenarios/README.md and traces/README.md list them for users.
#include <cstddef>

namespace coinfer::limits {

// Devices in one scenario (after `count:` expansion): ~7-9 KB each in the simulator (a device is no actor,
// and no SimGrid host where coinfer carries its transfers: its state, links and scenario entry;
// bench/memory_budget.py), so 1,000,000 devices ran 2 simulated seconds in 6.2 GiB (bench/RESULTS.md
// "Tenth pass"), plus ~30 bytes per simulated request.
constexpr long long kMaxDevices = 1000000;
// Workers of one server: each is a SimGrid actor; no edge server runs more concurrent batches.
constexpr long long kMaxWorkers = 256;
constexpr long long kMaxCores = 4096;
// A batch larger than any LUT can describe (LUT files hold at most this max_batch).
constexpr long long kMaxBatch = 4096;
// Link bandwidths (Mbit/s; 1 Tbit/s, beyond any link a device or server has) and one-way latencies
// (ms; 1,000 s): typos such as 40,000,000 Mbit/s are refused rather than simulated.
constexpr double kMaxBandwidthMbps = 1e6;
// The shared access point carries every device's traffic: its bound is the sum of every device link at
// its bound, up and down, so that an access point which can never bind can be written at any population.
constexpr double kMaxAccessPointMbps = 2 * kMaxBandwidthMbps * static_cast<double>(kMaxDevices);  // 2e12 Mbit/s
constexpr double kMaxLatencyMs = 1e6;
// Poisson arrivals per second of one device.
constexpr double kMaxRatePerS = 1e6;
// Closed-loop requests a device keeps in flight.
constexpr long long kMaxInFlight = 1000;
// Simulated seconds of one run (~3 years).
constexpr double kMaxDurationS = 1e8;
// Rescheduling decisions one run may take: duration_s / period_s must stay below this.
constexpr double kMaxPeriodicDecisions = 100000;
// Scenario events, and rows of one bandwidth or arrival trace file.
constexpr std::size_t kMaxEvents = 100000;
constexpr std::size_t kMaxTraceRows = 1000000;
// Size of any one input file we parse line by line (scenarios, traces, CSV imports): refuses /dev/zero
// and multi-gigabyte files before reading them.
constexpr long long kMaxTextFileBytes = 64LL << 20;
// Requests one simulation may create: written out as they finish, each costs ~30 bytes of memory
// (bench/memory_budget.py) and ~300 bytes of results.h5, so ~3 GB of results at the bound (a million
// devices for 2 simulated seconds of bench/sim_speed.py's workload create ~8 million: bench/RESULTS.md
// "Tenth pass"); a run that would create more (a closed loop on a near-zero LUT latency, a huge
// Poisson rate) stops creating requests and is refused afterwards with exit 2.
constexpr long long kMaxRequests = 10000000;
// LUT latencies (seconds): a measured stage never takes less than 100 ns or more than a day.
constexpr double kMinLutLatencyS = 1e-7;
constexpr double kMaxLutLatencyS = 86400;
// Bytes one sample sends across a split (1 TB) and peak memory of one range (1 PB).
constexpr double kMaxSplitBytes = 1e12;
constexpr double kMaxPeakMemoryBytes = 1e15;
// A device's memory (devices[].memory_gb), GB: far beyond any board.
constexpr double kMaxMemoryGb = 1e6;
// LUT tables: (num_stages + 1)^2 x max_batch latency cells of one table.
constexpr long long kMaxLutCells = 1LL << 22;
// Quantile levels of one LUT table's latency distributions, and quantile values of one table in all
// (128 MiB of doubles).
constexpr long long kMaxLutQuantileLevels = 1001;
constexpr long long kMaxLutQuantileValues = 1LL << 24;
// LUT files read in an isolated process: its address-space cap and time limit.
constexpr long long kLutReaderMemoryBytes = 4LL << 30;
constexpr int kLutReaderTimeoutS = 60;
// Text values of a scenario (paths included), and names and ids (which become HDF5 strings, mailbox
// names and, for the scenario's name, a folder name).
constexpr std::size_t kMaxTextValueBytes = 4096;
constexpr std::size_t kMaxNameBytes = 255;

}  // namespace coinfer::limits
