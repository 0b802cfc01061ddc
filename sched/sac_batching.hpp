#pragma once
// Batching learned by the SAC scheduler (sched/README.md "SAC", "Batching learned"):
// beside the device agents (sched/sac_mdp.hpp) each edge server is an agent of a second policy whose
// action chooses the server's batch window and maximum size among the scenario's candidates
// (scheduler.batch_windows_ms x scheduler.batch_sizes). It acts after the devices, on the strategies
// they just chose, and is rewarded with the mean reward of the devices bound to it over the window
// (sac_transitions). Torch-free: the simulator, the real server and the learner use these functions; the
// network is a SacActor from the learned plugin. Deterministic; advances no simulated time.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/scheme.hpp"
#include "core/system_state.hpp"
#include "sched/batching_choice.hpp"
#include "sched/sac_mdp.hpp"

namespace coinfer {

class AnalyticEstimator;

// The server observation's layout. Changing any feature's meaning or order changes the version; a
// batching policy file records the version and the names, and one of another layout is refused at load.
constexpr int kSacBatchingLayoutVersion = 1;
const std::vector<std::string>& sac_batching_feature_names();
int sac_batching_feature_count();

// The candidates a batching action indexes, for a server whose largest allowed size is `size_limit`:
// every (window, size) of `choices` with 1 <= size <= size_limit, ordered by window then size (ascending),
// duplicates dropped. An empty list in `choices` stands for `current`'s value. Never empty: when no
// size fits the limit, `current` alone.
std::vector<BatchSpec> sac_batching_candidates(const BatchingChoices& choices, const BatchSpec& current, int size_limit);

// a in [0, 1] -> candidate index min(floor(a * count), count - 1) (a non-finite a: 0); and back, the
// centre of a slot ((index + 0.5) / count).
int sac_batching_slot(double action, int count);
double sac_batching_slot_action(int index, int count);

struct SacBatchingObservation {
  std::string server;                 // id
  std::vector<BatchSpec> candidates;  // what the action indexes (sac_batching_candidates)
  std::vector<std::string> devices;   // the connected devices with inputs of their own bound to it (the reward's)
  std::vector<float> features;        // sac_batching_feature_count() values
};

// One observation per server of `state` that is up and has at least one device bound to it, in state
// order. `strategies`: the devices' strategies as just decided (a device not named keeps its state's).
// Reads the servers' LUTs through `est` (its batch-1 time and its time per request at the size limit).
std::vector<SacBatchingObservation> sac_batching_observe(const SystemState& state, const AnalyticEstimator& est,
                                                         const std::map<std::string, Strategy>& strategies, const BatchingChoices& choices);

// A batching policy file (format "coinfer-sac-batching-policy", written by `coinfer train sac
// --learn-batching` as POLICY.batching): the actor and what it was trained for. Its candidates are the
// ones its actions index: a scenario using it must list the same (or none: then these).
constexpr const char* kSacBatchingPolicyFormat = "coinfer-sac-batching-policy";
struct SacBatchingPolicyInfo {
  int layout_version = kSacBatchingLayoutVersion;
  std::vector<std::string> feature_names = sac_batching_feature_names();
  int hidden = 64;
  BatchingChoices candidates;
  std::string provenance;
  int episodes = 0;
  std::vector<std::string> scenarios;  // names of the training scenarios
};
std::string sac_batching_info_to_json(const SacBatchingPolicyInfo& info);
// Throws std::invalid_argument "KEY: why" for a missing or mistyped key, another layout, a width out of
// range or no candidates.
SacBatchingPolicyInfo sac_batching_info_from_json(const std::string& text);

// A batching policy loaded for deciding: its network (the learned plugin's) and its record.
struct SacBatchingPolicy {
  std::shared_ptr<const SacActor> actor;
  SacBatchingPolicyInfo info;
};

}  // namespace coinfer
