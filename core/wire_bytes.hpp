#pragma once
// How many bytes one request puts on the wire when it crosses split k, for every engine that moves
// requests (the simulator's transfers; later, estimators). A LUT measured by `coinfer profile`
// carries the middleware's real wire bytes per split as a distribution over inputs (LutTable::
// wire_bytes_quantiles: framing, headers, the serialised state, zstd where it shrinks); otherwise the
// model spec's raw tensor bytes are all we know. Units: bytes per request (batch 1), seconds.
#include "core/lut.hpp"

namespace coinfer {

// One request's bytes across split k: the u-quantile (u in (0, 1), from the caller's seeded stream)
// of `lut`'s wire distribution at k when it has one, else `tensor_bytes` (the spec's
// ModelSpec::bytes_at_split(k), which callers compute once: it walks the stages).
double request_wire_bytes(const LutTable* lut, int split, double tensor_bytes, double u);
// Whether `lut` knows the wire bytes at split k (false: the spec's tensor bytes are used).
bool knows_wire_bytes(const LutTable* lut, int split);

}  // namespace coinfer
