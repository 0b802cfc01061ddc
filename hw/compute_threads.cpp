#include "hw/compute_threads.hpp"

#include <malloc.h>
#include <torch/torch.h>

#include "plumbing/blas_threads.hpp"

namespace coinfer::hw {

std::string set_compute_threads(int threads) {
  torch::set_num_threads(threads);
  return "torch=" + std::to_string(torch::get_num_threads()) + " " + set_blas_threads(threads);
}

bool keep_tensor_memory() {
  const int a = ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  const int b = ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return a == 1 && b == 1;
}

std::string quantized_engine_name() { return c10::toString(at::globalContext().qEngine()); }

}  // namespace coinfer::hw
