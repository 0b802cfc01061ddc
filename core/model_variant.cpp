#include "core/model_variant.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/model_spec.hpp"

namespace coinfer {

namespace {
const char* kAllowed =
    "dense_mask, sparse, cap<N> (node capacity), symmetric, uncached, cached, select_mask, grasp, int8, fp32, grax1, grax2, fd<P> (feature chunks)";

// A numbered part "<prefix><N>" or "<prefix>=<N>" (cap64, fd=4): false when `part` is not one;
// N in 1..max_value, else std::invalid_argument saying `what` it is.
bool parse_numbered(const std::string& part, const std::string& prefix, long long max_value, const std::string& what, long long& out) {
  std::string digits;
  if (part.rfind(prefix + "=", 0) == 0)
    digits = part.substr(prefix.size() + 1);
  else if (part.rfind(prefix, 0) == 0)
    digits = part.substr(prefix.size());
  else
    return false;
  if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("variant part '" + part + "': " + what + " is " + prefix + "<N> with N a whole number");
  out = std::stoll(digits);
  if (out < 1 || out > max_value) throw std::invalid_argument("variant part '" + part + "': " + what + " must be 1.." + std::to_string(max_value));
  return true;
}
}  // namespace

std::string ModelVariant::name() const {
  std::vector<std::string> parts;
  if (aggregation == Aggregation::dense_mask) parts.push_back("dense_mask");
  if (node_capacity > 0) parts.push_back("cap" + std::to_string(node_capacity));
  if (normalisation == Normalisation::symmetric) parts.push_back("symmetric");
  if (normalisation == Normalisation::uncached) parts.push_back("uncached");
  if (select_mask) parts.push_back("select_mask");
  if (grasp) parts.push_back("grasp");
  if (precision == Precision::int8) parts.push_back("int8");
  if (grax1) parts.push_back("grax1");
  if (grax2) parts.push_back("grax2");
  if (feature_chunks > 1) parts.push_back("fd" + std::to_string(feature_chunks));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "+") + p;
  return out;
}

ModelVariant ModelVariant::parse(const std::string& name) {
  ModelVariant v;
  if (name.empty()) return v;
  size_t start = 0;
  std::vector<std::string> seen;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('+', start), name.size());
    const std::string part = name.substr(start, end - start);
    if (part.empty()) throw std::invalid_argument("variant '" + name + "' has an empty part; allowed parts: " + kAllowed);
    for (const auto& s : seen)
      if (s == part) throw std::invalid_argument("variant '" + name + "' names '" + part + "' twice");
    seen.push_back(part);
    long long number = 0;
    if (part == "dense_mask")
      v.aggregation = Aggregation::dense_mask;
    else if (part == "sparse")
      v.aggregation = Aggregation::sparse;
    else if (part == "symmetric")
      v.normalisation = Normalisation::symmetric;
    else if (part == "uncached")
      v.normalisation = Normalisation::uncached;
    else if (part == "cached")
      v.normalisation = Normalisation::cached;
    else if (part == "select_mask")
      v.select_mask = true;
    else if (part == "grasp")
      v.grasp = true;
    else if (part == "int8")
      v.precision = Precision::int8;
    else if (part == "fp32")
      v.precision = Precision::fp32;
    else if (part == "grax1")
      v.grax1 = true;
    else if (part == "grax2")
      v.grax2 = true;
    else if (parse_numbered(part, "cap", kMaxNodeCapacity, "a node capacity", number)) {
      if (v.node_capacity > 0) throw std::invalid_argument("variant '" + name + "' gives a node capacity twice");
      v.node_capacity = number;
    } else if (parse_numbered(part, "fd", kMaxFeatureChunks, "feature decomposition", number)) {
      if (v.feature_chunks > 1) throw std::invalid_argument("variant '" + name + "' gives feature chunks twice");
      v.feature_chunks = static_cast<int>(number);
    } else {
      throw std::invalid_argument("unknown variant part '" + part + "'; allowed parts: " + kAllowed);
    }
    start = end + 1;
  }
  auto named = [&](const char* part) { return std::find(seen.begin(), seen.end(), part) != seen.end(); };
  for (const auto& [a, b] : {std::pair<const char*, const char*>{"dense_mask", "sparse"},
                             {"int8", "fp32"},
                             {"symmetric", "cached"},
                             {"symmetric", "uncached"},
                             {"uncached", "cached"}})
    if (named(a) && named(b)) throw std::invalid_argument("variant '" + name + "' names both " + a + " and " + b);
  return v;
}

std::pair<std::string, std::string> split_variant_name(const std::string& model) {
  const size_t at = model.find('@');
  if (at == std::string::npos) return {model, ""};
  return {model.substr(0, at), model.substr(at + 1)};
}

std::string variant_model_name(const std::string& base, const ModelVariant& v) {
  const std::string n = v.name();
  return n.empty() ? base : base + "@" + n;
}

void check_variant_supported(const ModelSpec& spec, const ModelVariant& v) {
  const std::string what = "variant '" + v.name() + "' of " + spec.name + "/" + spec.dataset.name + ": ";
  bool gcn = false, gat = false, graph = false, sage = false, prep = false;
  for (const auto& s : spec.stages) {
    gcn = gcn || s.op == "gcn";
    sage = sage || s.op == "sage";
    prep = prep || s.op == "graph_prep";
    gat = gat || s.op == "gat";
    graph = graph || s.op == "gcn" || s.op == "gat" || s.op == "sage";
  }
  if (spec.dataset.kind == "image" && !v.is_default())
    throw std::invalid_argument(
        what +
        "image models run as written: no variant applies to convolutions yet (INT8 among them: the LibTorch models quantise Linear layers only)");
  if (v.dense() && !graph)
    throw std::invalid_argument(what + "dense_mask needs gcn, gat or sage stages over a dataset graph (point clouds build theirs with KNN)");
  if (v.node_capacity > 0) {
    if (spec.dataset.kind != "graph") throw std::invalid_argument(what + "a node capacity needs a graph dataset");
    if (v.node_capacity < spec.dataset.nodes)
      throw std::invalid_argument(what + "node capacity " + std::to_string(v.node_capacity) + " is below the " + std::to_string(spec.dataset.nodes) +
                                  " nodes per sample of " + spec.dataset.name);
  }
  if (v.normalisation == ModelVariant::Normalisation::symmetric && !gcn)
    throw std::invalid_argument(what + "symmetric normalisation (SymG) applies to gcn stages; this model has none");
  if (v.normalisation == ModelVariant::Normalisation::symmetric && v.dense())
    throw std::invalid_argument(what +
                                "symmetric applies to sparse aggregation only: LibTorch has no packed-triangular "
                                "matrix product, so a dense mask stored as one triangle would be rebuilt whole at every layer");
  // Sparse gat and sage already make their self loops and degrees in every run (models/gnn_model.cpp):
  // only gcn's normalisation and the dense masks are kept per graph, so only they can be made per run.
  if (v.uncached() && !gcn && !(graph && v.dense()))
    throw std::invalid_argument(what +
                                "uncached redoes gcn's normalisation or a dense mask in every run; this model has no gcn stage and "
                                "no dense_mask (sparse gat and sage already make their self loops and degrees in every run)");
  if (v.grasp && !(prep || ((gcn || sage) && v.dense())))
    throw std::invalid_argument(what +
                                "grasp skips the zeros of a graph matrix in its products: it needs gcn or sage stages with dense_mask, "
                                "or a graph_prep stage");
  if (v.grasp && v.int8()) throw std::invalid_argument(what + "grasp with int8: LibTorch's quantised matrix product takes no sparse operand");
  if (v.select_mask && !(gat && v.dense()))
    throw std::invalid_argument(what + "select_mask is how gat masks its dense attention: it needs gat stages and dense_mask");
  if (v.select_mask && v.grax1) throw std::invalid_argument(what + "select_mask and grax1 both replace the mask's product: name one");
  if (v.grax1 && !(gat && v.dense())) throw std::invalid_argument(what + "grax1 approximates masked attention: it needs gat stages and dense_mask");
  if (v.grax2 && !gat) throw std::invalid_argument(what + "grax2 approximates attention scores: it needs gat stages");
  if (v.feature_chunks > 1 && (!graph || v.dense()))
    throw std::invalid_argument(what +
                                "feature decomposition slices the messages of sparse aggregation: it needs gcn, gat or sage stages "
                                "without dense_mask");
}

}  // namespace coinfer
