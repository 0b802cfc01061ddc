#include "sched/learned_plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

#include "core/input_error.hpp"

namespace coinfer {

namespace {

// The plugin's symbol `symbol`; `file` and `key` name what needed it in the error.
void* plugin_symbol(const char* symbol, const std::string& file, const std::string& key, const std::string& what) {
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
    if (void* entry = ::dlsym(h, symbol)) return entry;
    last_error = std::string(p.string()) + " lacks " + symbol;
  }
  throw InputError(SourceLocation{file, 0, 0}, key,
                   what + " needs the LibTorch plugin libcoinfer_learned.so, which this build lacks (looked in " + tried +
                       (last_error.empty() ? "" : "; " + last_error) + "); scripts/setup.sh installs libtorch-dev, then rebuild");
}

}  // namespace

std::unique_ptr<Estimator> load_gin_estimator(const std::string& model_file, const AnalyticEstimator& analytic,
                                              const std::vector<std::string>& device_types, const std::vector<std::string>& models,
                                              double max_latency_ms, std::vector<std::string>& warnings) {
  auto make = reinterpret_cast<MakeGinEstimatorFn>(plugin_symbol(kMakeGinEstimatorSymbol, model_file, "scheduler.estimator", "estimator gin"));
  std::string error;
  bool input_error = false;
  Estimator* e = make(model_file.c_str(), &analytic, &device_types, &models, max_latency_ms, &warnings, &error, &input_error);
  if (!e) {
    if (input_error) throw InputError(error);
    throw std::runtime_error(error);
  }
  return std::unique_ptr<Estimator>(e);
}

std::unique_ptr<SacActor> load_sac_actor(const std::string& policy_file, const std::vector<std::string>& models, bool allow_data_parallel,
                                         bool online) {
  auto make = reinterpret_cast<MakeSacActorFn>(plugin_symbol(kMakeSacActorSymbol, policy_file, "scheduler.policy", "scheduler sac"));
  std::string error;
  bool input_error = false;
  SacActor* a = make(policy_file.c_str(), &models, allow_data_parallel, online, &error, &input_error);
  if (!a) {
    if (input_error) throw InputError(error);
    throw std::runtime_error(error);
  }
  return std::unique_ptr<SacActor>(a);
}

std::unique_ptr<SparoaActor> load_sparoa_policy(const std::string& policy_file) {
  auto make = reinterpret_cast<MakeSparoaPolicyFn>(plugin_symbol(kMakeSparoaPolicySymbol, policy_file, "scheduler.policy", "rule sac"));
  std::string error;
  bool input_error = false;
  SparoaActor* a = make(policy_file.c_str(), &error, &input_error);
  if (!a) {
    if (input_error) throw InputError(error);
    throw std::runtime_error(error);
  }
  return std::unique_ptr<SparoaActor>(a);
}

SacBatchingPolicy load_sac_batching_policy(const std::string& policy_file, const std::string& key) {
  auto make = reinterpret_cast<MakeSacBatchingActorFn>(plugin_symbol(kMakeSacBatchingActorSymbol, policy_file, key, "a SAC batching policy"));
  std::string info_json, error;
  bool input_error = false;
  SacActor* a = make(policy_file.c_str(), &info_json, &error, &input_error);
  if (!a) {
    if (input_error) throw InputError(error);
    throw std::runtime_error(error);
  }
  SacBatchingPolicy p;
  p.actor.reset(a);
  p.info = sac_batching_info_from_json(info_json);  // checked by the plugin already
  return p;
}

}  // namespace coinfer
