#include "plumbing/blas_threads.hpp"

#include <dlfcn.h>

#include <algorithm>

namespace coinfer {

std::string set_blas_threads(int threads) {
  // Looked up at run time: OpenBLAS is a dependency of LibTorch, not of ours, and may be absent.
  using SetFn = void (*)(int);
  using GetFn = int (*)();
  auto set = reinterpret_cast<SetFn>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  auto get = reinterpret_cast<GetFn>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (set) set(std::max(1, threads));
  return "openblas=" + (get ? std::to_string(get()) : std::string("n/a"));
}

}  // namespace coinfer
