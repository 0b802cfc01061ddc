#pragma once
// Loads the learned estimator (sched/gin_estimator.hpp) from the plugin libcoinfer_learned.so at run
// time, so that `coinfer` itself never links LibTorch and starts without it: the plugin is looked for
// beside the program, then in <program>/../lib/coinfer (an installed tree). Torch-free.
#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.hpp"
#include "sched/analytic_estimator.hpp"
#include "sched/sac_batching.hpp"
#include "sched/sac_mdp.hpp"
#include "sched/sparoa_mdp.hpp"

namespace coinfer {

// The GIN estimator of `model_file` over `analytic` (which must outlive it). `device_types`, `models`
// ("model/dataset") and `max_latency_ms` (the largest node latency the scenario's graphs can have) are
// the scenario's, checked against the training range: what lies outside it is appended to `warnings`. Throws InputError (bad or foreign model file, plugin missing
// because this build has no LibTorch) naming the file.
std::unique_ptr<Estimator> load_gin_estimator(const std::string& model_file, const AnalyticEstimator& analytic,
                                              const std::vector<std::string>& device_types, const std::vector<std::string>& models,
                                              double max_latency_ms, std::vector<std::string>& warnings);

// The plugin's entry point (extern "C", versioned): returns nullptr and fills `error` (and
// `input_error` = true for bad input) on failure.
using MakeGinEstimatorFn = Estimator* (*)(const char* model_file, const AnalyticEstimator* analytic, const std::vector<std::string>* device_types,
                                          const std::vector<std::string>* models, double max_latency_ms, std::vector<std::string>* warnings,
                                          std::string* error, bool* input_error);
constexpr const char* kMakeGinEstimatorSymbol = "coinfer_make_gin_estimator_v2";

// The SAC policy network of `policy_file` (a file from `coinfer train sac`). `models` ("model/dataset")
// are the scenario's: one the policy was not trained on is an InputError, as are a file of another
// layout and an action mapping other than `allow_data_parallel`. With `online`, the actor learns: it is
// the agent of the policy's training checkpoint (POLICY.ckpt), whose absence is an InputError. Throws
// InputError naming the file.
std::unique_ptr<SacActor> load_sac_actor(const std::string& policy_file, const std::vector<std::string>& models, bool allow_data_parallel,
                                         bool online = false);
using MakeSacActorFn = SacActor* (*)(const char* policy_file, const std::vector<std::string>* models, bool allow_data_parallel, bool online,
                                     std::string* error, bool* input_error);
constexpr const char* kMakeSacActorSymbol = "coinfer_make_sac_actor_v4";  // v4: SacActor::placement_policy

// SparOA's operator-level policy of `policy_file` (a file from `coinfer train sparoa`). Throws InputError
// naming the file (and `scheduler.policy` when the plugin is missing).
std::unique_ptr<SparoaActor> load_sparoa_policy(const std::string& policy_file);
using MakeSparoaPolicyFn = SparoaActor* (*)(const char* policy_file, std::string* error, bool* input_error);
constexpr const char* kMakeSparoaPolicySymbol = "coinfer_make_sparoa_policy_v1";

// The SAC batching policy of `policy_file` (POLICY.batching from `coinfer train sac --learn-batching`).
// Throws InputError naming the file (another format or layout) and `key` when the plugin is missing.
SacBatchingPolicy load_sac_batching_policy(const std::string& policy_file, const std::string& key);
// Fills `info_json` (sac_batching_info_to_json) with the file's record.
using MakeSacBatchingActorFn = SacActor* (*)(const char* policy_file, std::string* info_json, std::string* error, bool* input_error);
constexpr const char* kMakeSacBatchingActorSymbol = "coinfer_make_sac_batching_actor_v1";

}  // namespace coinfer
