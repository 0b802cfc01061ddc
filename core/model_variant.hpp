#pragma once
// How a model is executed (GraNNite's techniques, docs/PAPERS.md: GraNNite, Sec. IV):
// a variant changes the operators, not the weights, so a variant's outputs are comparable with the
// base model's (models/README.md, "Variants"). A variant is part of a model's identity: the model
// "gcn" run as INT8 with dense masks is "gcn@dense_mask+int8" in scenarios, LUT keys and results, so
// it has its own LUT entries and batches only with itself.
//
//   aggregation   sparse (gather/scatter over edge_index) | dense_mask (StaGr: a precomputed N x N mask,
//                 aggregation as one matrix multiply)
//   node_capacity 0 (shapes follow the input) | C (GrAd + NodePad: inputs padded to C nodes, a mask marks
//                 the real ones; an input with more than C nodes is refused, never truncated)
//   normalisation cached (PreG + CacheG: GCN's normalisation computed once per graph) | symmetric (SymG:
//                 only the upper triangle, diagonal included, is stored; needs an undirected graph) |
//                 uncached (the graph preprocessing of GraNNite's Fig. 3, self loops, degrees,
//                 normalisation and with dense_mask the N x N matrix, redone by every stage in every
//                 run: PyG's GCNConv(cached=False), GraNNite's out-of-the-box mapping of Fig. 4)
//   masking       GAT with dense masks: multiply (EffOp, the default: exp of the logits multiplied by the
//                 connectivity mask on the DPU, GraNNite Fig. 12 right) | select (the out-of-the-box
//                 mapping of GraNNite Figs. 5 and 12 left: Greater and Select put -inf on non-edges, then
//                 a plain softmax; the part "select_mask")
//   sparsity      none | bitmap (GraSp, the part "grasp": the products with a graph's N x N matrix, gcn's and
//                 sage's with dense_mask or a graph_prep stage's, skip its zeros; LibTorch multiplies a
//                 sparse copy of the matrix, made once per graph where the matrix is kept, in every run
//                 where it is made in every run)
//   precision     fp32 | int8 (QuantGr: symmetric static quantisation; per-output-channel weight
//                 scales, per-tensor activation scales calibrated on a sample of the dataset)
//   grax1         GAT with dense masks: non-edges get a large negative logit added instead of the
//                 attention map being multiplied by the mask (GrAx1)
//   grax2         GAT: the pairwise LeakyReLU(s_dst_i + s_src_j) becomes LeakyReLU(s_src_j) + s_dst_i,
//                 one score per node broadcast over destinations (GrAx2; see models/README.md for when
//                 it is exact)
//   feature_chunks 1 | P (fdP: feature decomposition, docs/PAPERS.md: the feature decomposition paper: sparse aggregation
//                 gathers and scatters the messages in P slices of the feature dimension, so the E x F
//                 gathered-message tensor is E x F/P at a time; outputs equal the base model's)
// Canonical name: the non-default parts in the order above joined by '+' ("dense_mask+cap64+int8",
// "dense_mask+uncached+select_mask");
// the default variant's name is "" and the model keeps its plain name.
#include <string>
#include <utility>

namespace coinfer {

class ModelSpec;

struct ModelVariant {
  enum class Aggregation { sparse, dense_mask };
  enum class Normalisation { cached, symmetric, uncached };
  enum class Precision { fp32, int8 };
  Aggregation aggregation = Aggregation::sparse;
  long long node_capacity = 0;  // nodes per sample the shapes are fixed to; 0 = none
  Normalisation normalisation = Normalisation::cached;
  Precision precision = Precision::fp32;
  bool select_mask = false;  // GAT's out-of-the-box masking by Greater and Select (not EffOp's product)
  bool grasp = false;        // GraSp: the graph matrix's zeros skipped in its products
  bool grax1 = false, grax2 = false;
  int feature_chunks = 1;  // P of feature decomposition; 1 = none

  bool is_default() const { return name().empty(); }
  // Outputs equal the base model's up to float rounding: dense masks, capacities, SymG, GraSp, the
  // select masking and GrAx1 (whose -1e4 underflows to 0 in float32; these two count a repeated edge once).
  // INT8 and GrAx2 change the outputs.
  bool exact() const { return precision == Precision::fp32 && !grax2; }
  bool dense() const { return aggregation == Aggregation::dense_mask; }
  bool int8() const { return precision == Precision::int8; }
  bool uncached() const { return normalisation == Normalisation::uncached; }
  std::string name() const;  // canonical, "" for the default
  // Parses a name as above; also accepts the defaults spelled out ("sparse", "cached", "fp32") and
  // "cap=N". Throws std::invalid_argument naming the part and the allowed parts.
  static ModelVariant parse(const std::string& name);
  bool operator==(const ModelVariant& o) const { return name() == o.name(); }
};

// Largest node capacity a variant may ask for: a dense mask of 200,000^2 float32 is 160 GB already.
constexpr long long kMaxNodeCapacity = 200000;
// Largest number of feature chunks (no dataset here has more than 4,096 features per node).
constexpr int kMaxFeatureChunks = 1024;

// "gcn@int8" -> {"gcn", "int8"}; "gcn" -> {"gcn", ""}.
std::pair<std::string, std::string> split_variant_name(const std::string& model);
// {"gcn", variant} -> "gcn" or "gcn@int8+..."
std::string variant_model_name(const std::string& base, const ModelVariant& v);

// Throws std::invalid_argument saying why `v` cannot run `spec` (the base spec, variant not yet
// applied): dense masks and node capacities need a graph dataset, a capacity must hold the dataset's
// nodes per sample, symmetric needs a gcn stage, select_mask and grax1 need gat with dense masks (and not
// each other: both replace the mask's product), grasp needs a graph matrix to multiply (gcn or sage with
// dense masks, or a graph_prep stage) and not int8, grax2 needs gat,
// feature chunks need sparse aggregation (gcn, gat or sage stages without dense masks).
void check_variant_supported(const ModelSpec& spec, const ModelVariant& v);

}  // namespace coinfer
