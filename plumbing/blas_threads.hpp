#pragma once
// OpenBLAS's own thread pool. Debian's LibTorch computes through pthread OpenBLAS, which starts one
// thread per core at load time and ignores torch::set_num_threads; its idle threads spin on
// sched_yield. On a busy machine that spinning starves the thread doing the work (coinfer train sac's
// gradient steps ran 4.5x slower beside two busy processes, bench/RESULTS.md "Batching learned by SAC"),
// and a pool sized by the machine's cores makes sums, and so trained weights, differ between machines.
// Torch-free: looked up at run time, so a program without OpenBLAS loaded is left alone.
#include <string>

namespace coinfer {

// Sets the pool to `threads` (at least 1) when OpenBLAS is loaded. Returns "openblas=N" (its count
// afterwards) or "openblas=n/a". Call before the first computation; does not block.
std::string set_blas_threads(int threads);

}  // namespace coinfer
