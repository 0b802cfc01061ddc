#pragma once
// ACE-GNN's system graph (paper section III-B, "System Graph Abstraction" and "Node Feature
// Construction"): the edge system as a graph whose nodes are hardware (edge devices, edge servers) and
// software (each device's communication middleware, the server's edge handler for that device) plus a
// global node, and whose edges follow the data flow device -> middleware -> handler -> server, with a
// self-loop on every node and links between the global node and every other node in both directions.
// A scheme changes only the node features, never the graph of a system. Engine-free, Torch-free
// (Boost.Graph); the learned predictors read edges() and features().
//
// Node features: a one-hot of the node's type (device, middleware, handler, server, global) and one
// latency feature (ms), normalised by a FeatureNormalisation fitted on a training set:
//   device      the device's subtask under the scheme: its LUT mean of [0, k) at batch 1 (local and
//               data_parallel: the whole model; offload: 0)
//   middleware  the communication: bytes crossing the split (the device LUT's median wire bytes, else
//               the spec's tensor bytes) x 8 / link bandwidth + the link's one-way latency (0 for local)
//   handler     the server's subtask: its LUT mean of [k, n) at batch 1 (local: 0)
//   server, global   0 (their type alone)
// Idle devices (no inputs of their own) appear with zero latencies.
// Beyond the paper (coinfer's systems vary what ACE-GNN's testbed kept fixed): the server node carries
// its settings (workers, batch max size, batch window ms, as log(1 + x)), and every graph carries the
// analytic estimator's system throughput as a hint; a predictor's feature layout says whether it reads
// the hint (kFeatureLayoutHint) or not (kFeatureLayoutPaper: the hint column stays 0).
#include <boost/graph/adjacency_list.hpp>

#include <string>
#include <utility>
#include <vector>

#include "core/lut.hpp"
#include "core/scheme.hpp"
#include "core/system_state.hpp"
#include "sched/analytic_estimator.hpp"

namespace coinfer {

enum class SystemNodeType { device = 0, middleware = 1, handler = 2, server = 3, global = 4 };
constexpr int kSystemNodeTypes = 5;
const char* system_node_type_name(SystemNodeType t);

struct SystemNode {
  SystemNodeType type = SystemNodeType::global;
  std::string name;       // "dev0", "dev0/middleware", "edge/handler:dev0", "edge", "global"
  double latency_ms = 0;  // the raw latency feature
  // Server nodes only: workers, batch max size, batch window (ms); 0 elsewhere.
  double workers = 0, batch_max_size = 0, batch_window_ms = 0;
};

// Feature layouts a predictor can be trained on (stored with the model; a model for another layout
// is refused). Columns of features(): 0-4 the type's one-hot, 5 the normalised latency, 6-8 the server
// settings as log(1 + x), 9 the hint: the analytic estimator's time per request of the whole system,
// 1000 / throughput (ms), normalised like the latencies, on the global node only ("paper": always 0).
constexpr const char* kFeatureLayoutPaper = "ace-gnn-v1";
constexpr const char* kFeatureLayoutHint = "ace-gnn+analytic-v1";
constexpr int kSystemFeatureWidth = kSystemNodeTypes + 5;

using SystemGraphStorage = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, SystemNode>;

// How the latency feature is scaled (ACE-GNN Fig. 21b compares these): Log-MinMax (equation 1,
// x' = (log(x + 1) - Vmin) / (Vmax - Vmin) over the log-transformed training values; the paper's
// choice), Min-Max on x, or the Z-score of x. Fitted once on a training set and stored with a model.
struct FeatureNormalisation {
  enum class Kind { log_minmax, minmax, zscore } kind = Kind::log_minmax;
  double a = 0, b = 1;  // log_minmax and minmax: Vmin, Vmax; zscore: mean, standard deviation
  static FeatureNormalisation fit(Kind kind, const std::vector<double>& latencies_ms);
  double apply(double latency_ms) const;
};
const char* normalisation_name(FeatureNormalisation::Kind k);  // "log_minmax", "minmax", "zscore"

class SystemGraph {
 public:
  // Nodes in this order: every server, then per connected device its device, middleware and handler
  // nodes, then the global node. `state` devices that are not connected are left out; a device absent
  // from `scheme` keeps its current strategy. Throws LutMissingError for a LUT entry the scheme needs
  // and std::out_of_range for a model the specs lack.
  static SystemGraph build(const SystemState& state, const Scheme& scheme, const LutSet& luts, const ModelSpecs& models);
  // The same, with the hint: `analytic` predicts the scheme's system throughput.
  static SystemGraph build(const SystemState& state, const Scheme& scheme, const AnalyticEstimator& analytic);

  const SystemGraphStorage& graph() const { return g_; }
  int num_nodes() const { return static_cast<int>(boost::num_vertices(g_)); }
  const SystemNode& node(int i) const { return g_[static_cast<size_t>(i)]; }
  // Every edge as (source, target), self-loops included, in insertion order.
  std::vector<std::pair<int, int>> edges() const;
  // Row-major [num_nodes x kSystemFeatureWidth] (columns above); `with_hint` false leaves column 9 at 0.
  std::vector<float> features(const FeatureNormalisation& norm, bool with_hint = false) const;
  std::vector<double> latencies_ms() const;
  // The analytic system throughput (requests/s) the graph was built with; 0 when built without.
  double analytic_throughput_rps() const { return analytic_rps_; }
  // 1000 / analytic throughput (ms), 0 without: the value column 9 normalises.
  double hint_ms() const { return analytic_rps_ > 0 ? 1e3 / analytic_rps_ : 0; }

 private:
  SystemGraphStorage g_;
  double analytic_rps_ = 0;
};

// One system graph as raw arrays (a SystemGraph, or a sample file's rows).
struct GraphInput {
  std::vector<int> types;
  std::vector<double> latency_ms;
  std::vector<double> settings;  // 3 per node
  double hint_ms = 0;            // 1000 / analytic throughput (0: none)
  std::vector<std::pair<int, int>> edges;
  static GraphInput of(const SystemGraph& g);
};

// Row-major features of a graph given as raw arrays (a sample file's nodes): node types, latencies,
// server settings [n x 3], the hint (ms). Same columns as SystemGraph::features.
std::vector<float> system_features(const std::vector<int>& types, const std::vector<double>& latency_ms, const std::vector<double>& settings,
                                   double hint_ms, const FeatureNormalisation& norm, bool with_hint);

}  // namespace coinfer
