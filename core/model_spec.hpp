#pragma once
// Model spec: the ordered stages of a GNN instantiated on a dataset, with per-sample FLOPs and the bytes
// that cross each possible split. The same spec feeds the simulator (communication volumes, LUT synthesis)
// and the LibTorch model builder. Units: bytes, FLOPs (multiply-add = 2 FLOPs), all per input sample.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model_key.hpp"
#include "core/model_variant.hpp"
#include "core/operator_class.hpp"

namespace coinfer {

// Statistics of a dataset that the cost formulas need (see models/README.md).
struct DatasetSpec {
  std::string name;
  std::string kind;     // "point_cloud", "graph" or "image"
  std::string task;     // "graph_classification", "node_classification" or "image_classification"
  long long nodes = 0;  // nodes (points; an image's pixels, side x side) per sample
  long long edges = 0;  // directed edges per sample (graphs; point clouds build theirs with KNN)
  int features = 0;     // input feature width
  int classes = 0;
  std::string source;  // where these statistics come from
};

// Level of a stage's output tensor: one row per node, or one row per sample (after pooling).
enum class TensorLevel { node, graph };

struct StageSpec {
  std::string name;
  std::string op;         // edgeconv | knn | aggregate | combine | linear | pool | fc | gcn | gat | sage | graph_prep | conv | maxpool | add | se
                          // | patch_embed | layernorm | attention | mlp | patch_merge
  int in_width = 0;       // feature width read from the main input
  int out_width = 0;      // feature width produced (0 for knn, whose output is a graph)
  int k = 0;              // neighbours (edgeconv, knn, aggregate)
  int heads = 1;          // attention heads (gat, attention); out_width is the concatenated width
  std::string pool_mode;  // pool: "max", "mean", "max+mean" or "class_token" (a token sequence's first row)
  // Images (models/README.md "Images"): a feature map is side x side rows (pixels) of `width` channels.
  int kernel = 0;          // conv, maxpool: the kernel's side (square), padded by kernel / 2 on each side
  int stride = 1;          // conv, maxpool
  int groups = 1;          // conv: channel groups (groups = the input width: depthwise)
  std::string activation;  // conv, add: "" (none), "relu", "relu6" or "hardswish" after it (conv: after its BatchNorm);
                           // fc: the activation of a hidden fc ("": relu; a last fc has none)
  int squeeze = 0;         // se: the squeeze-and-excitation block's bottleneck width (channels)
  // Transformers (models/README.md "Transformers"): after a patch_embed stage a sample is a sequence of
  // tokens ([B, T, D] in LibTorch), T rows of D features.
  int hidden = 0;            // mlp: the hidden width (Linear in -> hidden, GELU, Linear hidden -> in)
  bool class_token = false;  // patch_embed: prepend ViT's learned class token and add a learned position embedding
  int window = 0;            // attention: the side of its square windows of tokens (Swin); 0 = every token attends every token
  int shift = 0;             // attention: the windows shifted by this many tokens (Swin's shifted windows)
  std::vector<int> inputs;   // producing stage indices; -1 = the raw input sample
  bool needs_graph = false;  // consumes the dataset's static graph (gcn, gat, sage)
  TensorLevel out_level = TensorLevel::node;
  // Derived by model_cost.cpp (or overridden in the spec file):
  double out_rows = 0;         // rows of its output per sample: the nodes, a feature map's pixels, tokens, 1 after pooling
  bool tokens = false;         // its output is a sequence of tokens (patch_embed and the stages after it), not a feature map
  double flops = 0;            // per sample
  double out_bytes = 0;        // bytes of this stage's output tensor, per sample
  double weight_bytes = 0;     // parameters
  double traffic_bytes = 0;    // memory traffic estimate for the roofline (reads + writes + weights)
  double workspace_bytes = 0;  // transient memory beyond inputs/outputs (e.g. gathered edge features)
  // The gathered-message tensor of sparse aggregation (gcn, gat, sage without dense masks): E x F floats
  // at once, E x F/P with feature decomposition (variant fdP). In peak memory only: the roofline's
  // traffic was calibrated without it (models/README.md).
  double message_bytes = 0;
  // What the stage allocates above its live inputs at its peak (its output included: temporaries,
  // gathered messages, caches), per sample, derived from the LibTorch implementation phase by phase
  // (core/model_cost.cpp; measured against LibTorch's allocator by bench/memory_formula.py).
  double memory_bytes = 0;
  // Its operators by class (core/stage_operators.hpp; models/README.md "Operator classes"): what a
  // processor with per-class figures charges (traces/README.md "Operator classes").
  std::vector<OperatorCost> operators;
};

class ModelSpec {
 public:
  std::string name;      // e.g. "dgcnn"; a variant's is "gcn@int8" (core/model_variant.hpp)
  ModelVariant variant;  // how it executes; the default runs the spec as written
  std::string file;      // spec file it came from
  DatasetSpec dataset;
  std::vector<StageSpec> stages;
  double input_bytes = 0;  // raw input features per sample (without the graph structure)
  double graph_bytes = 0;  // static graph structure per sample: edges x 2 x int64 (PyG edge_index)

  std::string base_name() const { return split_variant_name(name).first; }
  int num_stages() const { return static_cast<int>(stages.size()); }
  // Bytes per sample crossing split k (0..n): device runs [0,k), server [k,n).
  // k = 0: raw input (+ graph if needed); k = n: the result; otherwise every live tensor produced before k
  // and consumed at or after k (+ the graph if a stage >= k needs it).
  double bytes_at_split(int k) const;
  double flops_in_range(int begin, int end) const;
  // Peak memory estimate of running [begin,end): weights of the range + the largest working set of one
  // stage (its live inputs + memory_bytes). Bytes, per sample.
  double peak_memory_bytes(int begin, int end) const;
  // Stage k's working set alone (its live inputs + memory_bytes): peak_memory_bytes(k, k + 1) less its
  // weights, computed as exactly that (the device loop's accounting and `train sparoa` share it).
  double stage_working_bytes(int k) const { return peak_memory_bytes(k, k + 1) - stages[static_cast<size_t>(k)].weight_bytes; }
  // PP_comm: the interior split (1..n-1) with the fewest bytes crossing; ties -> smaller k. n<2 -> -1.
  int pp_comm() const;
  // PP_comp: the split (0..n: every splitting point, offload and local included) minimising
  // device_seconds(0,k) + server_seconds(k,n), the least total compute; ties -> smaller k.
  int pp_comp(const std::function<double(int, int)>& device_seconds, const std::function<double(int, int)>& server_seconds) const;
  // Throws std::out_of_range with a clear message unless 0 <= k <= n.
  void check_split(int k) const;
};

// Fills the derived fields of every stage and the spec's input/graph bytes from the op formulas
// documented in models/README.md, for the spec's variant (node capacity, dense masks, symmetric
// normalisation and INT8 change rows, FLOPs, bytes and memory: models/README.md, "Variants"). Throws std::invalid_argument naming the stage for an unknown op or
// inconsistent widths.
void derive_costs(ModelSpec& spec);

// A model of one stage (`op`, `out_width` wide, the dataset's features in) on `dataset`, its costs
// derived: what micro-benchmarks and tests run when no shipped model will do.
ModelSpec one_stage_model(const std::string& name, const DatasetSpec& dataset, const std::string& op, int out_width);

// Model specs by (model, dataset): what the estimator and the runtimes keep of every model a scenario runs.
using ModelSpecs = std::map<ModelKey, ModelSpec>;

}  // namespace coinfer
