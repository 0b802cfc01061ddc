#pragma once
// What one edge server expects a batch to take, on its own workers and on each of its helper devices:
// the LUTs that describe them and the formulas, written once for both engines. The engines only supply
// what they observe: the batch's input bytes and the helper's bandwidth.
//   server:  time.seconds(server LUT of the device's model, split, n, batch size)
//   helper:  helper_batch_seconds(input bytes, helper bandwidth, helper LUT, split, batch size)
//            (core/helper_forwarding.hpp); +infinity when no LUT describes the helper for that model.
// Bindings: device d may run several models (its model as named, then the variants its scheduler may
// choose, sim/device.hpp); binding b is the index into run_models[d]. A helper must have a LUT for
// binding 0 (checked when the scenario is checked against its LUTs); for the variants only where one
// exists. Times in seconds. Holds pointers into `luts`, which must outlive it.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/execution_time.hpp"
#include "core/lut.hpp"
#include "core/scenario.hpp"
#include "core/server_lut_index.hpp"

namespace coinfer {

class ServerTiming {
 public:
  // `run_models[d]`: the models device d may run, binding order (its model as named first); a device
  // of another server may have any list (it is not looked up). Throws LutMissingError when a helper
  // lacks the LUT of its origin's model as named (binding 0); a missing server LUT is null (the
  // engines check the scenario against its LUTs first).
  ServerTiming(const Scenario& s, int server, const LutSet& luts, const std::vector<std::vector<std::string>>& run_models,
               const ExecutionTimeModel& time = lut_mean_time());
  // The same with the run's shared index of server tables and its helper pairs (helper_pairs(s)),
  // computed once for all servers: a run of many servers builds each in time proportional to its own
  // helpers, not to the devices.
  ServerTiming(const Scenario& s, int server, const LutSet& luts, std::shared_ptr<const ServerLutIndex> tables,
               const std::vector<std::pair<int, int>>& helper_pairs, const std::vector<std::vector<std::string>>& run_models,
               const ExecutionTimeModel& time = lut_mean_time());
  // The run_models of a scenario whose devices run only the model they name.
  static std::vector<std::vector<std::string>> named_models(const Scenario& s);

  // This server's LUT for device `device`'s binding (any device: a scheme may move it here); null
  // where no LUT describes this server's type for that model.
  const LutTable* server_lut(int device, int binding = 0) const;
  // This server's expected seconds for a batch of `size` inputs of that binding, server part from
  // `split` to `end` (< 0: the model's end; an edge's part of pp(k,m) ends at m); 0 without a LUT.
  double batch_seconds(int device, int binding, int split, int size, int end = -1) const;
  // Helper `helper`'s expected seconds for such a batch whose inputs are `input_bytes` in all, at
  // `bytes_per_s`; +infinity when it has no LUT for that model (it is then never chosen).
  double helper_seconds(int helper, int device, int binding, int split, int size, double input_bytes, double bytes_per_s) const;
  // The helper's LUT for the origin device's binding; null when none.
  const LutTable* helper_lut(int helper, int device, int binding = 0) const;
  // The largest batch of that binding and split here: SparOA's dynamic batching (core/dynamic_batching.hpp)
  // on this server's LUT when the server's batch.policy is sparoa (computed once per LUT and split);
  // 0 otherwise (the batching's max_size). Thread-safe.
  int batch_limit(int device, int binding, int split, int end = -1) const;
  // Whether some device of this server may help (core/helper_forwarding.hpp helper_pairs).
  bool may_have_helpers() const { return may_have_helpers_; }
  const ExecutionTimeModel& time() const { return *time_; }

 private:
  int server_ = 0;
  std::shared_ptr<const ServerLutIndex> tables_;                      // every server's tables (shared)
  std::map<std::tuple<int, int, int>, const LutTable*> helper_luts_;  // (helper, origin, binding)
  bool may_have_helpers_ = false;
  const ExecutionTimeModel* time_;
  std::optional<DynamicBatchingParams> dynamic_;  // the server's policy (none: fixed)
  int max_size_ = 1;                              // its batch.max_size: B0 and the ceiling
  mutable std::mutex limits_mutex_;
  mutable std::map<std::tuple<const LutTable*, int, int>, int> limits_;  // (LUT, split, end) -> size
};

}  // namespace coinfer
