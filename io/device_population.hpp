#pragma once
// A devices[] entry with `count: N` whose keys vary from device to device: a population stated in a
// few lines instead of N entries (scenarios/README.md "Device populations"). These keys may be given
// a distribution instead of a value:
//   type                     {choice: [rpi4b, jetson_nano], weights: [3, 1]}   (weights optional)
//   join_at_s                {uniform: [0, 5]} or {choice: [...]}              seconds
//   link.bandwidth_mbps      {uniform: [10, 40]} or {choice: [...]}            Mbit/s
//   link.latency_ms          {uniform: [1, 20]} or {choice: [...]}             ms
//   workload.rate_per_s      {uniform: [0.5, 4]} or {choice: [...]}            requests/s (poisson)
//   workload.in_flight       {uniform: [1, 4]} (integers) or {choice: [...]}   (closed_loop)
// Device c of entry e draws from its own stream (scenario seed, StreamPurpose::device_population,
// e * 2^32 + c): six uniforms in the order above, whether or not each key is drawn, so adding a
// distribution to one key does not change the draws of another; changing `seed` changes the
// population. Every value a distribution can give is checked as a plain value would be (each choice,
// both ends of a range), at its own place in the file, before any device is made; a device is then
// its type's prototype with its numbers set, so a million devices cost a copy each, not a parse.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/scenario.hpp"
#include "io/yaml_util.hpp"

namespace coinfer {

class DevicePopulation {
 public:
  // Reads one device from an entry node (the loader's devices[] reader; throws InputError).
  using ReadOne = std::function<DeviceSpec(const YAML::Node& entry)>;
  // Whether `entry` gives any key a distribution (a map where a value is expected).
  static bool has_distributions(const YAML::Node& entry);
  // Parses and checks the entry's distributions (InputError naming the file, line and key) and reads
  // one prototype per type choice. `entry_index` is the entry's place in devices[].
  DevicePopulation(const YamlReader& r, const YAML::Node& entry, const std::string& path, std::uint64_t seed, int entry_index,
                   const ReadOne& read_one);
  // Device `copy` of the entry (its id, entry and where left as the prototype's: set by the caller).
  DeviceSpec device(long long copy) const;

 private:
  struct Distribution {
    bool given = false;
    bool uniform = false;
    double lo = 0, hi = 0;
    std::vector<YAML::Node> values;  // choice: each value's node (for the checks and the type prototypes)
    std::vector<double> numbers;     // choice of numbers: the values
    std::vector<double> cumulative;  // choice: cumulative weights, ending at 1
    // The index of the choice a uniform draw u in (0, 1) picks.
    std::size_t pick(double u) const;
    double number(double u, bool integer) const;
  };
  Distribution read_distribution(const YamlReader& r, const YAML::Node& node, const std::string& key, bool text, bool integer) const;
  // One device read from the entry with the given keys (index into kKeys) set to the given value
  // nodes; the entry is as it was afterwards, whether the read succeeded or threw.
  DeviceSpec read_with_values(const YAML::Node& entry, const std::vector<std::pair<int, YAML::Node>>& set, const ReadOne& read_one) const;

  std::uint64_t seed_ = 0;
  int entry_index_ = 0;
  std::vector<Distribution> dist_;      // per drawn key, in kKeys order
  std::vector<DeviceSpec> prototypes_;  // per type choice (one when the type is not drawn)
};

}  // namespace coinfer
