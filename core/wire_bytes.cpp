#include "core/wire_bytes.hpp"

#include "core/execution_time.hpp"

namespace coinfer {

double request_wire_bytes(const LutTable* lut, int split, double tensor_bytes, double u) {
  if (const double* q = lut ? lut->wire_bytes_quantiles(split) : nullptr) return quantile_at(lut->quantile_levels(), q, u);
  return tensor_bytes;
}

bool knows_wire_bytes(const LutTable* lut, int split) { return lut && lut->wire_bytes_quantiles(split) != nullptr; }

}  // namespace coinfer
