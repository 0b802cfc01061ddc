#pragma once
// Independent pseudo-random streams, each named by (seed, purpose, index).
//
// Why: a stream seeded as `seed * C + index` and advanced by adding a constant (plain splitmix64)
// makes seed s+1 the stream of seed s shifted by one draw, so a sweep "over seeds" repeats one sample.
// Here the three names are mixed into a 64-bit key by chained splitmix64 finalisers (each a bijection
// with full avalanche), with the purpose and the index entering through different odd constants, and
// the key seeds xoshiro256** (Blackman & Vigna) through four splitmix64 outputs. Neighbouring seeds
// or indices give unrelated keys, hence unrelated points in a 2^256-1 period: no shifted overlap.
// tests/unit/test_random_stream.cpp checks overlap, lag correlation and the exponential law.
//
// Portable and exact: the same (seed, purpose, index) gives the same numbers on every platform and
// standard library (no <random> distributions), so the real runtime replays the simulator's streams.
#include <cstdint>

namespace coinfer {

// What a stream is for. Values are part of the stream's identity: never renumber, only append.
enum class StreamPurpose : std::uint64_t {
  arrivals = 1,                // open-loop inter-arrival gaps of one device (index = device index)
  service_time = 2,            // sampled service times: index = device index, or kServerStreamBase + server index
  scheduler = 3,               // a scheduler's own randomness (index = 0)
  wire_bytes = 4,              // bytes a request puts on the wire, drawn per request (index = device index)
  module_sampling = 5,         // random model variants for module latency samples (index = variant)
  regressor = 6,               // a latency regressor's initial weights, data split and batches (index = module)
  predictor_systems = 7,       // random systems of a predictor sample set (index = system)
  predictor_schemes = 8,       // random schemes for one system of a sample set (index = system)
  predictor_training = 9,      // a GIN predictor's weights, split and batches (index = 0 system, 1 relative)
  sac_episode = 10,            // coinfer train sac: an episode's seed and random traces (index = episode)
  sac_updates = 11,            // coinfer train sac: the mini-batches and sampling noise of an update round (index = round)
  calibration = 12,            // the dataset samples an INT8 model variant is calibrated on (index = 0)
  soak_load = 13,              // tests/soak/serve_soak: a simulated device's sessions (index = device), garbage peers (index = 1000 + peer)
  sparoa_episode = 14,         // SparOA's operator scheduler: an episode's exploration (index = episode)
  sparoa_thresholds = 15,      // coinfer train thresholds: the sparsity drawn for a sample sequence (index = sequence)
  server_failure = 16,         // servers[].failures: a server's times up and down (index = server index)
  mobility = 17,               // devices[].movement random_waypoint: start, destinations, speeds, pauses (index = device index)
  sac_batching = 18,           // coinfer train sac --learn-batching: the batching agent's seed (index 0)
  handover_copy = 19,          // the real runtime's filler bytes of a transfer sent again after a handover (index = task id; seed 0); content only
  graph_generation = 20,       // models/power_law_graph: a synthetic graph's endpoints and node order (index = 0)
  paper_module_sampling = 21,  // coinfer medn sample: a module's sampled configurations (index = module's rank in the paper's list)
  background_load = 22,        // coinfer medn sample: the background load levels (index = module's rank)
  device_population = 23,      // devices[] entries with distributions: a device's drawn keys (index = entry * 2^32 + copy)
  test = 99,                   // tests only
};

// Service-time streams of servers start here (device indices stay below limits::kMaxDevices).
constexpr std::uint64_t kServerStreamBase = 1ULL << 32;

// splitmix64's output function: a bijection on 64-bit words with full avalanche.
std::uint64_t mix64(std::uint64_t z);

class RandomStream {
 public:
  RandomStream(std::uint64_t seed, StreamPurpose purpose, std::uint64_t index);
  std::uint64_t next_u64();
  // Uniform in the open interval (0, 1), 53 random bits.
  double next_unit();
  // Exponential with the given rate (> 0), by inversion of next_unit(): mean 1/rate.
  double next_exponential(double rate_per_s);

 private:
  std::uint64_t s_[4];
};

}  // namespace coinfer
