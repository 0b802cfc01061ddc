#include "hw/compute_threads.hpp"

#include <dlfcn.h>
#include <malloc.h>
#include <torch/torch.h>

namespace coinfer::hw {

std::string set_compute_threads(int threads) {
  torch::set_num_threads(threads);
  std::string text = "torch=" + std::to_string(torch::get_num_threads());
  // Looked up at run time: OpenBLAS is a dependency of LibTorch, not of ours, and may be absent.
  using SetFn = void (*)(int);
  using GetFn = int (*)();
  auto set = reinterpret_cast<SetFn>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  auto get = reinterpret_cast<GetFn>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (set) set(threads);
  text += " openblas=" + (get ? std::to_string(get()) : std::string("n/a"));
  return text;
}

bool keep_tensor_memory() {
  const int a = ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  const int b = ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return a == 1 && b == 1;
}

std::string quantized_engine_name() {
  return c10::toString(at::globalContext().qEngine());
}

}  // namespace coinfer::hw
