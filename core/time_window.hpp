#pragma once
// Time intervals clipped to a window (seconds on one clock): what the energy accounting integrates.
#include <algorithm>

namespace coinfer {

// The length of [a, b] inside [lo, hi] (0 when they do not meet).
inline double overlap_seconds(double a, double b, double lo, double hi) { return std::max(0.0, std::min(b, hi) - std::max(a, lo)); }

}  // namespace coinfer
