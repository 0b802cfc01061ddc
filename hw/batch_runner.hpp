#pragma once
// Runs one batch of server tasks (serialised split states of one model, all at the same split) with
// a worker's own LibTorch model copies. Point-cloud states (every tensor [1, ...], no graph) run as
// one batch along dimension 0; graph states run one after another (a disjoint union would pool
// across graphs). Torch stays inside the .cpp.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model_spec.hpp"

namespace coinfer::models {
class GnnModel;
}

namespace coinfer::hw {

class BatchRunner {
 public:
  BatchRunner();
  ~BatchRunner();
  // Serialised final states, one per input, in order. Throws std::exception when a state cannot be
  // decoded or the model fails (the whole batch fails).
  std::vector<std::string> run(const ModelSpec& spec, const std::vector<const std::string*>& states);

 private:
  std::map<std::string, std::unique_ptr<models::GnnModel>> models_;  // by "model/dataset"
};

}  // namespace coinfer::hw
