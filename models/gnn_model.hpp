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
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/model_spec.hpp"
#include "models/split_state.hpp"

namespace coinfer::models {

struct GraphSample {
  torch::Tensor x;
  torch::Tensor edge_index;  // undefined for point clouds
  // Graphs in a disjoint union (a batch): a node-capacity variant holds graphs x capacity nodes.
  std::int64_t graphs = 1;
  // The node count of each graph of the union, in row order (SplitState::graph_nodes); empty: the
  // union pools as one graph.
  std::vector<std::int64_t> graph_nodes;
};

// An input with more nodes than a node-capacity variant holds (GrAd + NodePad): refused, never truncated.
class NodeCapacityError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class GnnModel {
 public:
  // Parameters are initialised deterministically from `seed` (no pretrained weights can be loaded here);
  // a variant (spec.variant, core/model_variant.hpp) has the same parameters as its base model.
  // An INT8 variant is calibrated at once on kDefaultCalibrationSamples synthetic samples of the
  // spec's dataset (models/datasets.hpp, seeds from StreamPurpose::calibration), so every process that
  // builds it from the same spec and seed gets the same scales; calibrate() replaces them.
  // Throws std::invalid_argument naming the stage if the spec cannot be realised.
  GnnModel(const ModelSpec& spec, std::uint64_t seed = 1);
  static constexpr int kDefaultCalibrationSamples = 16;

  // QuantGr's static calibration: runs the variant in float32 on `samples`, records the largest
  // magnitude at every quantisation point (each linear's input and output, each stage's output, each
  // dense aggregation's output) and packs the weights as int8 with one scale per output channel.
  // Scales are symmetric: absmax / 127 around zero point 128 (quint8 activations, the engine's
  // format). Throws std::invalid_argument when `samples` is empty ("INT8 needs calibration data") or
  // the variant is not INT8. Call again after changing parameters.
  void calibrate(const std::vector<GraphSample>& samples);
  bool calibrated() const { return calibrated_; }

  int num_stages() const { return spec_.num_stages(); }
  const ModelSpec& spec() const { return spec_; }

  // Feature decomposition (the feature-decomposition paper's Algorithm 1): message aggregation of
  // gcn/gat/sage stages runs over P chunks of the feature dimension, cutting the peak memory of the
  // gathered messages by about P. Results equal the unchunked ones up to float rounding.
  void set_feature_chunks(int p);
  // Moves the parameters to `device` (CPU, or a CUDA device of a CUDA LibTorch: a GPU
  // placement); inputs must be there too (start() refuses others, naming both). INT8 variants run on
  // the CPU only (LibTorch's quantized engines): std::invalid_argument for another device.
  void to(const torch::Device& device);
  const torch::Device& device() const { return device_; }
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
  // Transformers (models/README.md "Transformers"): a stage's Linears and tensors (parameters, then
  // Swin's bias index and shift mask), and one stage on its input (an image, or tokens [B, T, D]).
  void transformer_parameters(const StageSpec& s, std::vector<torch::nn::Linear>& lin, std::vector<torch::Tensor>& extra) const;
  torch::Tensor run_transformer_stage(int s, const torch::Tensor& x) const;
  torch::Tensor aggregate_messages(const torch::Tensor& messages_src, const torch::Tensor& src, const torch::Tensor& dst, const torch::Tensor& weight,
                                   int64_t n) const;
  // {src, dst} (self loops appended) and the weight of each: 1/sqrt(deg src deg dst). Per graph, or
  // made anew in every call with the `uncached` variant (as dense_mask).
  std::vector<torch::Tensor> gcn_norm(const torch::Tensor& edge_index, int64_t n) const;
  // Variants (core/model_variant.hpp).
  torch::Tensor linear(int stage, int j, const torch::Tensor& x) const;  // fp32 or int8 (QuantGr)
  struct AbsMax;
  // mask @ h; INT8: both quantised (h with its calibrated range), the product by quantized::matmul.
  torch::Tensor dense_aggregate(int stage, const torch::Tensor& mask, const torch::Tensor& h, const AbsMax& h_range) const;
  // The dense mask of a graph (StaGr), cached per graph: "gcn" normalised with self loops, "sage" row
  // means without, "gat" 0/1 with self loops.
  torch::Tensor dense_mask(const std::string& kind, const torch::Tensor& edge_index, int64_t n) const;
  torch::Tensor gcn_symmetric(const torch::Tensor& h, const torch::Tensor& edge_index, int64_t n) const;  // SymG
  torch::Tensor gat_dense(int stage, const torch::Tensor& x, const torch::Tensor& edge_index, int64_t n) const;
  struct AbsMax {  // largest magnitude seen at one quantisation point while calibrating
    double value = 0;
    void observe(const torch::Tensor& t);
    double scale() const;  // absmax / 127 (/ 63 on x86 without VNNI: gnn_model.cpp), at least 1e-8
  };
  torch::Tensor quantize(const torch::Tensor& x, const AbsMax& range) const;
  torch::Tensor float_of(const torch::Tensor& t) const { return t.is_quantized() ? t.dequantize() : t; }
  void drop_dead(SplitState& st) const;

  ModelSpec spec_;
  int chunks_ = 1;
  torch::Device device_ = torch::kCPU;
  mutable std::vector<std::vector<torch::nn::Linear>> linears_;  // per stage (forward() is not const)
  std::vector<std::vector<torch::Tensor>> params_;               // per stage: extra parameters (GAT attention)
  // Per-graph precomputations, reused by every layer and every run on the same graph: PreG/CacheG's
  // normalisation ("norm": {src+loops, dst+loops} stacked, weights), StaGr's masks ("mask:gcn",
  // "mask:sage", "mask:gat") and SymG's half normalisation ("sym"). An entry holds its edge_index
  // tensor, so no other graph can reuse that storage (and address) while the entry lives; the cache
  // keeps the kGraphCacheEntries most recent entries. A graph tensor must not be changed in place.
  // With the `uncached` variant nothing is kept: every stage of every run makes its own (GraNNite's
  // out-of-the-box mapping).
  struct GraphCacheEntry {
    std::string kind;
    torch::Tensor edge_index;
    int64_t n = 0;
    std::vector<torch::Tensor> value;
  };
  static constexpr size_t kGraphCacheEntries = 16;
  const std::vector<torch::Tensor>* cached(const std::string& kind, const torch::Tensor& edge_index, int64_t n) const;
  std::vector<torch::Tensor> remember(const std::string& kind, const torch::Tensor& edge_index, int64_t n, std::vector<torch::Tensor> value) const;
  mutable std::vector<GraphCacheEntry> graph_cache_;  // oldest first
  // QuantGr: calibration ranges per stage (linear inputs/outputs, stage output, dense aggregation
  // output) and the packed int8 weights per stage and linear.
  struct StageRanges {
    std::vector<AbsMax> lin_in, lin_out;
    AbsMax out, agg;
  };
  mutable std::vector<StageRanges> ranges_;
  std::vector<std::vector<c10::IValue>> packed_;
  mutable bool calibrating_ = false;
  bool calibrated_ = false;
};

}  // namespace coinfer::models
