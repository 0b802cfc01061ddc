// The entry point of libcoinfer_learned.so (sched/learned_plugin.hpp): builds a GinEstimator.
#include "core/input_error.hpp"
#include "sched/gin_estimator.hpp"
#include "sched/learned_plugin.hpp"

extern "C" __attribute__((visibility("default"))) coinfer::Estimator* coinfer_make_gin_estimator_v2(
    const char* model_file, const coinfer::AnalyticEstimator* analytic, const std::vector<std::string>* device_types,
    const std::vector<std::string>* models, double max_latency_ms, std::vector<std::string>* warnings, std::string* error,
    bool* input_error) {
  static_assert(std::is_same_v<decltype(&coinfer_make_gin_estimator_v2), coinfer::MakeGinEstimatorFn>);
  try {
    coinfer::GinPredictor p = coinfer::GinPredictor::load(model_file);
    coinfer::GraphInput extremes;  // the scenario's largest node latency stands for its graphs
    extremes.latency_ms = {max_latency_ms};
    for (auto& w : p.range_warnings(extremes, *device_types, *models)) warnings->push_back(std::string(model_file) + ": " + w);
    return new coinfer::GinEstimator(*analytic, std::move(p), model_file);
  } catch (const coinfer::InputError& e) {
    *error = e.what();
    *input_error = true;
  } catch (const std::exception& e) {
    *error = std::string(model_file) + ": " + e.what();
    *input_error = false;
  }
  return nullptr;
}
