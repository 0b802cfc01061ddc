// The entry point of libcoinfer_learned.so (sched/learned_plugin.hpp): builds a GinEstimator.
#include "core/input_error.hpp"
#include "sched/gin_estimator.hpp"
#include "sched/learned_plugin.hpp"
#include "sched/sac_agent.hpp"
#include "sched/sparoa_learner.hpp"

#include <algorithm>

extern "C" __attribute__((visibility("default"))) coinfer::Estimator* coinfer_make_gin_estimator_v2(
    const char* model_file, const coinfer::AnalyticEstimator* analytic, const std::vector<std::string>* device_types,
    const std::vector<std::string>* models, double max_latency_ms, std::vector<std::string>* warnings, std::string* error, bool* input_error) {
  static_assert(std::is_same_v<decltype(&coinfer_make_gin_estimator_v2), coinfer::MakeGinEstimatorFn>);
  try {
    coinfer::GinPredictor p = coinfer::GinPredictor::load(model_file);
    coinfer::GraphInput extremes;  // the scenario's largest node latency stands for its graphs
    extremes.latency_ms = {max_latency_ms};
    for (auto& w : p.range_warnings(extremes, *device_types, *models))
      warnings->push_back(std::string(model_file) + ": " + w + " (its predictions there are extrapolations)");
    for (auto& w : p.trust_warnings()) warnings->push_back(std::string(model_file) + ": " + w);
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

// The SAC policy network (sched/sac_agent.hpp) for `coinfer::load_sac_actor`.
extern "C" __attribute__((visibility("default"))) coinfer::SacActor* coinfer_make_sac_actor_v4(const char* policy_file,
                                                                                               const std::vector<std::string>* models,
                                                                                               bool allow_data_parallel, bool online,
                                                                                               std::string* error, bool* input_error) {
  static_assert(std::is_same_v<decltype(&coinfer_make_sac_actor_v4), coinfer::MakeSacActorFn>);
  try {
    auto actor = std::make_unique<coinfer::TorchSacActor>(policy_file);
    const auto& info = actor->info();
    for (const auto& m : *models)
      if (std::find(info.models.begin(), info.models.end(), m) == info.models.end()) {
        std::string trained;
        for (const auto& t : info.models) trained += (trained.empty() ? "" : ", ") + t;
        throw coinfer::InputError(coinfer::SourceLocation{policy_file, 0, 0}, "models",
                                  "the policy was trained for " + (trained.empty() ? std::string("no model") : trained) + ", not " + m +
                                      " (its stage count and action slots differ); train it on a scenario with " + m);
      }
    if (info.allow_data_parallel != allow_data_parallel)
      throw coinfer::InputError(coinfer::SourceLocation{policy_file, 0, 0}, "allow_data_parallel",
                                std::string("the policy's actions ") + (info.allow_data_parallel ? "include" : "exclude") +
                                    " a data_parallel slot; scheduler.data_parallel must be " + (info.allow_data_parallel ? "true" : "false"));
    if (online) return new coinfer::OnlineSacActor(policy_file, info);
    return actor.release();
  } catch (const coinfer::InputError& e) {
    *error = e.what();
    *input_error = true;
  } catch (const std::exception& e) {
    *error = std::string(policy_file) + ": " + e.what();
    *input_error = false;
  }
  return nullptr;
}

// SparOA's operator-level policy (sched/sparoa_learner.hpp) for `coinfer::load_sparoa_policy`.
extern "C" __attribute__((visibility("default"))) coinfer::SparoaActor* coinfer_make_sparoa_policy_v1(const char* policy_file, std::string* error,
                                                                                                      bool* input_error) {
  static_assert(std::is_same_v<decltype(&coinfer_make_sparoa_policy_v1), coinfer::MakeSparoaPolicyFn>);
  try {
    return new coinfer::SparoaPolicy(policy_file);
  } catch (const coinfer::InputError& e) {
    *error = e.what();
    *input_error = true;
  } catch (const std::exception& e) {
    *error = std::string(policy_file) + ": " + e.what();
    *input_error = false;
  }
  return nullptr;
}

// A SAC batching policy (sched/sac_batching.hpp) for `coinfer::load_sac_batching_policy`.
extern "C" __attribute__((visibility("default"))) coinfer::SacActor* coinfer_make_sac_batching_actor_v1(const char* policy_file,
                                                                                                        std::string* info_json, std::string* error,
                                                                                                        bool* input_error) {
  static_assert(std::is_same_v<decltype(&coinfer_make_sac_batching_actor_v1), coinfer::MakeSacBatchingActorFn>);
  try {
    auto actor = std::make_unique<coinfer::TorchSacBatchingActor>(policy_file);
    *info_json = coinfer::sac_batching_info_to_json(actor->info());
    return actor.release();
  } catch (const coinfer::InputError& e) {
    *error = e.what();
    *input_error = true;
  } catch (const std::exception& e) {
    *error = std::string(policy_file) + ": " + e.what();
    *input_error = false;
  }
  return nullptr;
}
