#pragma once
// Random architecture variants of a model spec (not execution variants: core/model_variant.hpp), for sampling module latencies (the MEDN paper's self-generated
// datasets: sampling parameters drawn at random, the module built and measured). A variant keeps the
// base model's ops and wiring and draws new sampling parameters: every hidden width scaled by a factor
// in {0.25, 0.5, 0.75, 1, 1.5, 2} (rounded to a multiple of 8, at least 8; a stage whose width is the
// dataset's class count keeps it), one neighbour count k in 4..40 for every stage that has one, and a
// dataset with nodes (and edges, keeping the mean degree) scaled by a factor in [0.25, 2] and the
// input feature width by one in {0.5, 1, 2}. Names get a "~v<index>" suffix. Deterministic in
// (seed, index): the draws come from RandomStream(seed, StreamPurpose::module_sampling, index).
#include <cstdint>

#include "core/model_spec.hpp"

namespace coinfer {

// `base` must have its costs derived; the variant has them derived too. Throws std::invalid_argument
// when the base cannot be varied (derive_costs refuses the result).
ModelSpec random_model_variant(const ModelSpec& base, std::uint64_t seed, std::uint64_t index);

}  // namespace coinfer
