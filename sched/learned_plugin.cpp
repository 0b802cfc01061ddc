#include "sched/learned_plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

#include "core/input_error.hpp"

namespace coinfer {

namespace {

MakeGinEstimatorFn plugin_entry(const std::string& model_file) {
  static MakeGinEstimatorFn entry = nullptr;
  if (entry) return entry;
  namespace fs = std::filesystem;
  const fs::path exe_dir = fs::canonical("/proc/self/exe").parent_path();
  std::string tried, last_error;
  for (const fs::path& p : {exe_dir / "libcoinfer_learned.so", exe_dir / ".." / "lib" / "coinfer" / "libcoinfer_learned.so"}) {
    tried += (tried.empty() ? "" : ", ") + p.string();
    if (!fs::exists(p)) continue;
    // The handle is kept for the life of the process (estimators made by it may live until exit).
    void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      last_error = ::dlerror();
      continue;
    }
    entry = reinterpret_cast<MakeGinEstimatorFn>(::dlsym(h, kMakeGinEstimatorSymbol));
    if (entry) return entry;
    last_error = std::string(p.string()) + " lacks " + kMakeGinEstimatorSymbol;
  }
  throw InputError(SourceLocation{model_file, 0, 0}, "scheduler.estimator",
                   "estimator gin needs the LibTorch plugin libcoinfer_learned.so, which this build lacks (looked in " + tried +
                       (last_error.empty() ? "" : "; " + last_error) + "); scripts/setup.sh installs libtorch-dev, then rebuild");
}

}  // namespace

std::unique_ptr<Estimator> load_gin_estimator(const std::string& model_file, const AnalyticEstimator& analytic,
                                              const std::vector<std::string>& device_types,
                                              const std::vector<std::string>& models, double max_latency_ms,
                                              std::vector<std::string>& warnings) {
  MakeGinEstimatorFn make = plugin_entry(model_file);
  std::string error;
  bool input_error = false;
  Estimator* e = make(model_file.c_str(), &analytic, &device_types, &models, max_latency_ms, &warnings, &error, &input_error);
  if (!e) {
    if (input_error) throw InputError(error);
    throw std::runtime_error(error);
  }
  return std::unique_ptr<Estimator>(e);
}

}  // namespace coinfer
