#pragma once
// A real GNN in LibTorch, built from the same model spec the simulator reads (models/specs/*.yaml), so
// stages and the bytes crossing each split agree. Split execution: start() makes the state at split 0,
// run(state, k) advances it to split k (dropping tensors no later stage needs), and the state
// serialises (split_state.hpp) into the bytes that cross the split.
//
// Inputs: point clouds are x [B, N, features] (no graph; KNN graphs are built inside the model);
// graphs are x [N, features] with edge_index [2, E] (int64, edges src -> dst). Torch is only included
// by models/ (and later hw/): keep this header out of widely included code.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <vector>

#include "core/model_spec.hpp"
#include "models/split_state.hpp"

namespace coinfer::models {

struct GraphSample {
  torch::Tensor x;
  torch::Tensor edge_index;  // undefined for point clouds
};

class GnnModel {
 public:
  // Parameters are initialised deterministically from `seed` (no pretrained weights can be loaded here).
  // Throws std::invalid_argument naming the stage if the spec cannot be realised.
  GnnModel(const ModelSpec& spec, std::uint64_t seed = 1);

  int num_stages() const { return spec_.num_stages(); }
  const ModelSpec& spec() const { return spec_; }

  // Feature decomposition (the feature-decomposition paper's Algorithm 1): message aggregation of
  // gcn/gat/sage stages runs over P chunks of the feature dimension, cutting the peak memory of the
  // gathered messages by about P. Results equal the unchunked ones up to float rounding.
  void set_feature_chunks(int p);
  int feature_chunks() const { return chunks_; }

  SplitState start(const GraphSample& input) const;
  // Runs stages [state.next_stage, end). Throws std::out_of_range if end is outside next_stage..n.
  void run(SplitState& state, int end) const;
  torch::Tensor output(const SplitState& state) const;  // the last stage's output; state must be at n
  torch::Tensor forward(const GraphSample& input) const;
  // The learnable tensors of a stage (weights, biases, attention vectors), sharing storage with the
  // model: tests set them to hand-chosen values; the profiler counts them.
  std::vector<torch::Tensor> stage_parameters(int stage) const;
  // Bytes of the tensors a state holds (the payload of serialize() without framing).
  static std::uint64_t payload_bytes(const SplitState& state);

 private:
  torch::Tensor stage_input(const SplitState& st, int s) const;
  torch::Tensor run_stage(const SplitState& st, int s) const;
  torch::Tensor aggregate_messages(const torch::Tensor& messages_src, const torch::Tensor& src,
                                   const torch::Tensor& dst, const torch::Tensor& weight, int64_t n) const;
  const torch::Tensor& gcn_norm(const torch::Tensor& edge_index, int64_t n) const;
  void drop_dead(SplitState& st) const;

  ModelSpec spec_;
  int chunks_ = 1;
  mutable std::vector<std::vector<torch::nn::Linear>> linears_;  // per stage (forward() is not const)
  std::vector<std::vector<torch::Tensor>> params_;       // per stage: extra parameters (GAT attention)
  // PreG/CacheG: the normalised adjacency of a graph is computed once and reused by every layer.
  mutable std::map<std::pair<const void*, int64_t>, std::pair<torch::Tensor, torch::Tensor>> norm_cache_;
};

}  // namespace coinfer::models
