#pragma once
// Sets how many threads the compute libraries may use: LibTorch's intra-op pool and, when LibTorch's
// BLAS is Debian's pthread OpenBLAS, OpenBLAS's own pool (which ignores torch::set_num_threads and
// would otherwise start one thread per core). Returns a text for provenance records, e.g.
// "torch=1 openblas=1" or "torch=1 openblas=n/a".
#include <string>

namespace coinfer::hw {

std::string set_compute_threads(int threads);

// glibc malloc serves every block above 128 KiB-32 MiB (its dynamic mmap threshold) with a fresh
// mmap and returns freed heap tops to the OS, so each large LibTorch temporary costs page faults on
// every forward pass (half the time of a GAT forward on the SIoT-like graph). This raises the mmap and
// trim thresholds to 1 GiB: freed tensor memory is kept for reuse (RSS stays at its peak). Returns
// false if glibc refused. Called by coinfer-profile, coinfer-rt and the model benchmark.
bool keep_tensor_memory();

// The quantised engine LibTorch uses for INT8 variants ("onednn" on x86, "qnnpack" on ARM, ...).
std::string quantized_engine_name();

}  // namespace coinfer::hw
