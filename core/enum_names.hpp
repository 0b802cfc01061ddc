#pragma once
// The names of an enum's values, written once per enum as one list, and read both ways: value -> name
// (for output files, messages and logs) and name -> value (for parsing what a user or a peer wrote).
//
//   enum class AggregationScheme { standard, csr, sliced };
//   constexpr auto kSchemeNames = enum_names<AggregationScheme>({"standard", "csr", "sliced"});
//   kSchemeNames.name(AggregationScheme::csr)  -> "csr"
//   kSchemeNames.value("sliced")               -> AggregationScheme::sliced (std::nullopt for an unknown name)
//   kSchemeNames.listed()                      -> "standard, csr, sliced" (for error messages)
//
// The list names the values in their declaration order, from `first` (default: the value 0) on, for
// enums whose values are consecutive. `static_assert(kXNames.names_each_of(first, last))` beside it
// checks at compile time that the list has one name per value from first to last, and no name twice.
// Header-only; no allocation except in listed(); the names are string literals (static storage).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace coinfer {

template <typename E, std::size_t N>
class EnumNames {
 public:
  const char* names[N];  // names[i] names the value first + i
  long first = 0;

  // The name of `value`; `unknown` where the list has none (only a value cast from a bad integer).
  constexpr const char* name(E value, const char* unknown = "?") const {
    const long i = static_cast<long>(value) - first;
    return i >= 0 && i < static_cast<long>(N) ? names[i] : unknown;
  }
  // The value called `name` (exact, case-sensitive), or nullopt.
  constexpr std::optional<E> value(std::string_view name) const {
    for (std::size_t i = 0; i < N; ++i)
      if (name == names[i]) return static_cast<E>(first + static_cast<long>(i));
    return std::nullopt;
  }
  // Every name in the list's order, joined by ", ".
  std::string listed() const {
    std::string out;
    for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
  }
  // True when the list starts at `first_value` and has one name per value up to `last_value`, and no
  // name twice.
  constexpr bool names_each_of(E first_value, E last_value) const {
    if (static_cast<long>(first_value) != first || static_cast<long>(last_value) - first + 1 != static_cast<long>(N)) return false;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (std::string_view(names[i]) == names[j]) return false;
    return true;
  }
};

// The names of E's values `first`, first + 1, ... in that order (N is the list's length).
template <typename E, std::size_t N>
constexpr EnumNames<E, N> enum_names(const char* const (&names)[N], E first = E{}) {
  EnumNames<E, N> t{};
  for (std::size_t i = 0; i < N; ++i) t.names[i] = names[i];
  t.first = static_cast<long>(first);
  return t;
}

}  // namespace coinfer
