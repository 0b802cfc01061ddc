#pragma once
// Strong types for the scenario's indices: a device's place in Scenario::devices (DeviceIndex) and a
// server's in Scenario::servers (ServerIndex). Made only explicitly from an int; compared and ordered
// like one; `value` for arithmetic and I/O, `at()` for indexing. A device index does not convert to a
// server index, nor either to an int: passing one where the other is meant does not compile.
#include <cstddef>

namespace coinfer {

template <class Tag>
struct ScenarioIndex {
  int value = -1;  // -1: none
  constexpr ScenarioIndex() = default;
  constexpr explicit ScenarioIndex(int v) : value(v) {}
  constexpr bool valid() const { return value >= 0; }
  constexpr std::size_t at() const { return static_cast<std::size_t>(value); }
  // Within [0, n): an index into a vector of n (a scenario's devices or servers).
  constexpr bool within(std::size_t n) const { return value >= 0 && static_cast<std::size_t>(value) < n; }
  friend constexpr bool operator==(ScenarioIndex a, ScenarioIndex b) { return a.value == b.value; }
  friend constexpr bool operator!=(ScenarioIndex a, ScenarioIndex b) { return a.value != b.value; }
  friend constexpr bool operator<(ScenarioIndex a, ScenarioIndex b) { return a.value < b.value; }
};

struct DeviceIndexTag;
struct ServerIndexTag;
using DeviceIndex = ScenarioIndex<DeviceIndexTag>;
using ServerIndex = ScenarioIndex<ServerIndexTag>;

}  // namespace coinfer
