#pragma once
// Sets how many threads the compute libraries may use: LibTorch's intra-op pool and, when LibTorch's
// BLAS is Debian's pthread OpenBLAS, OpenBLAS's own pool (which ignores torch::set_num_threads and
// would otherwise start one thread per core). Returns a text for provenance records, e.g.
// "torch=1 openblas=1" or "torch=1 openblas=n/a".
#include <string>

namespace coinfer::hw {

std::string set_compute_threads(int threads);

}  // namespace coinfer::hw
