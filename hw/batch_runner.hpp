#pragma once
// Runs one batch of server tasks (serialised split states of one model, all at the same split) with
// a worker's own LibTorch model copies, as one forward pass — what the LUT measured for that batch
// size (hw/lut_profiler.cpp): point-cloud states stacked along dimension 0; graph states as one
// disjoint union whose graphs each pool on their own (SplitState::graph_nodes). States that cannot be
// stacked (padded node-capacity or int8 states, mixed shapes) run one after another. The real server
// and an idle helper device both run batches this way. Torch stays inside the .cpp.
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
  // Runs every state to stage `end` (< 0: the model's end; an edge's part of pp(k,m) ends at m,
  // core/cloud_handoff.hpp) and returns the serialised states there, one per input, in order: at the
  // end, final states; before it, each request's own state at `end` again (a stacked batch split back
  // by rows), ready for the cloud. Throws std::exception when a state cannot be decoded or the model
  // fails (the whole batch fails).
  std::vector<std::string> run(const ModelSpec& spec, const std::vector<const std::string*>& states, int end = -1);

 private:
  std::map<ModelKey, std::unique_ptr<models::GnnModel>> models_;
};

}  // namespace coinfer::hw
