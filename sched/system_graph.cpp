#include "sched/system_graph.hpp"

#include <cmath>
#include <algorithm>
#include <map>
#include <stdexcept>

#include "core/units.hpp"
#include "core/wire_bytes.hpp"
#include "core/enum_names.hpp"

namespace coinfer {

namespace {
constexpr auto kNodeTypeNames = enum_names<SystemNodeType>({"device", "middleware", "handler", "server", "global"});
static_assert(kNodeTypeNames.names_each_of(SystemNodeType::device, SystemNodeType::global));
using Normalisation = FeatureNormalisation::Kind;
constexpr auto kNormalisationNames = enum_names<Normalisation>({"log_minmax", "minmax", "zscore"});
static_assert(kNormalisationNames.names_each_of(Normalisation::log_minmax, Normalisation::zscore));
}  // namespace

const char* system_node_type_name(SystemNodeType t) { return kNodeTypeNames.name(t); }

const char* normalisation_name(FeatureNormalisation::Kind k) { return kNormalisationNames.name(k); }

FeatureNormalisation FeatureNormalisation::fit(Kind kind, const std::vector<double>& xs) {
  FeatureNormalisation n;
  n.kind = kind;
  if (xs.empty()) return n;
  if (kind == Kind::zscore) {
    double mean = 0, var = 0;
    for (double x : xs) mean += x;
    mean /= static_cast<double>(xs.size());
    for (double x : xs) var += (x - mean) * (x - mean);
    n.a = mean;
    n.b = xs.size() > 1 ? std::sqrt(var / static_cast<double>(xs.size() - 1)) : 0;
    if (!(n.b > 0)) n.b = 1;
    return n;
  }
  n.a = 1e300, n.b = -1e300;
  for (double x : xs) {
    const double v = kind == Kind::log_minmax ? std::log(x + 1) : x;
    n.a = std::min(n.a, v), n.b = std::max(n.b, v);
  }
  if (!(n.b > n.a)) n.b = n.a + 1;  // one value: it maps to 0
  return n;
}

double FeatureNormalisation::apply(double x) const {
  switch (kind) {
    case Kind::log_minmax:
      return (std::log(x + 1) - a) / (b - a);
    case Kind::minmax:
      return (x - a) / (b - a);
    case Kind::zscore:
      return (x - a) / b;
  }
  return x;
}

SystemGraph SystemGraph::build(const SystemState& state, const Scheme& scheme, const LutSet& luts, const ModelSpecs& models) {
  SystemGraph sg;
  auto& g = sg.g_;
  std::map<std::string, int> server_node;
  for (const ServerState& s : state.servers)
    server_node[s.id] = static_cast<int>(boost::add_vertex(
        SystemNode{SystemNodeType::server, s.id, 0, static_cast<double>(s.workers), static_cast<double>(s.batch_max_size), s.batch_window_ms}, g));
  std::vector<std::pair<int, int>> flow;
  for (const DeviceState& d : state.devices) {
    if (!d.connected) continue;
    auto it = scheme.strategies.find(d.id);
    const Strategy st = it != scheme.strategies.end() ? it->second : d.strategy;
    double device_ms = 0, comm_ms = 0, handler_ms = 0;
    const ServerState* sv = state.server(d.server);
    if (d.generates) {
      auto m = models.find(ModelKey{d.model, d.dataset});
      if (m == models.end()) throw std::out_of_range("system graph: no model spec for " + d.model + "/" + d.dataset);
      const ModelSpec& spec = m->second;
      const int n = spec.num_stages();
      int device_end = 0, server_begin = n;  // device runs [0, device_end), server [server_begin, n)
      switch (st.kind) {
        case Strategy::Kind::local:
          device_end = n;
          break;
        case Strategy::Kind::offload:
          server_begin = 0;
          break;
        case Strategy::Kind::pp:
          device_end = server_begin = st.split;
          break;
        case Strategy::Kind::data_parallel:
          device_end = n, server_begin = 0;
          break;
      }
      const LutTable& dev = luts.table(d.lut_key(d.model));
      device_ms = dev.mean_seconds(0, device_end, 1) * 1e3;
      if (server_begin < n) {
        if (!sv) throw std::out_of_range("system graph: device " + d.id + " names no known server");
        handler_ms = luts.table({sv->type, d.model, d.dataset}).mean_seconds(server_begin, n, 1) * 1e3;
        const double bytes = request_wire_bytes(&dev, server_begin, spec.bytes_at_split(server_begin), 0.5);
        comm_ms = (d.link_bandwidth_mbps > 0 ? bytes / mbps_to_bytes_per_s(d.link_bandwidth_mbps) * 1e3 : 0) + d.link_latency_ms;
      }
    }
    const int dn = static_cast<int>(boost::add_vertex(SystemNode{SystemNodeType::device, d.id, device_ms}, g));
    const int mn = static_cast<int>(boost::add_vertex(SystemNode{SystemNodeType::middleware, d.id + "/middleware", comm_ms}, g));
    const std::string server_id = sv ? sv->id : d.server;
    const int hn = static_cast<int>(boost::add_vertex(SystemNode{SystemNodeType::handler, server_id + "/handler:" + d.id, handler_ms}, g));
    flow.emplace_back(dn, mn);
    flow.emplace_back(mn, hn);
    auto s = server_node.find(server_id);
    if (s != server_node.end()) flow.emplace_back(hn, s->second);
  }
  const int global = static_cast<int>(boost::add_vertex(SystemNode{SystemNodeType::global, "global", 0}, g));
  for (const auto& [a, b] : flow) boost::add_edge(static_cast<size_t>(a), static_cast<size_t>(b), g);
  for (int v = 0; v < global; ++v) {
    boost::add_edge(static_cast<size_t>(global), static_cast<size_t>(v), g);
    boost::add_edge(static_cast<size_t>(v), static_cast<size_t>(global), g);
  }
  for (int v = 0; v <= global; ++v) boost::add_edge(static_cast<size_t>(v), static_cast<size_t>(v), g);
  return sg;
}

SystemGraph SystemGraph::build(const SystemState& state, const Scheme& scheme, const AnalyticEstimator& analytic) {
  SystemGraph g = build(state, scheme, analytic.luts(), analytic.models());
  g.analytic_rps_ = analytic.predict(state, scheme).throughput_rps;
  return g;
}

std::vector<std::pair<int, int>> SystemGraph::edges() const {
  std::vector<std::pair<int, int>> out;
  for (auto [e, end] = boost::edges(g_); e != end; ++e)
    out.emplace_back(static_cast<int>(boost::source(*e, g_)), static_cast<int>(boost::target(*e, g_)));
  return out;
}

std::vector<double> SystemGraph::latencies_ms() const {
  std::vector<double> out;
  for (int i = 0; i < num_nodes(); ++i) out.push_back(node(i).latency_ms);
  return out;
}

std::vector<float> SystemGraph::features(const FeatureNormalisation& norm, bool with_hint) const {
  std::vector<int> types;
  std::vector<double> settings;
  for (int i = 0; i < num_nodes(); ++i) {
    types.push_back(static_cast<int>(node(i).type));
    settings.insert(settings.end(), {node(i).workers, node(i).batch_max_size, node(i).batch_window_ms});
  }
  return system_features(types, latencies_ms(), settings, hint_ms(), norm, with_hint);
}

GraphInput GraphInput::of(const SystemGraph& g) {
  GraphInput in;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const SystemNode& n = g.node(i);
    in.types.push_back(static_cast<int>(n.type));
    in.latency_ms.push_back(n.latency_ms);
    in.settings.insert(in.settings.end(), {n.workers, n.batch_max_size, n.batch_window_ms});
  }
  in.hint_ms = g.hint_ms();
  in.edges = g.edges();
  return in;
}

std::vector<float> system_features(const std::vector<int>& types, const std::vector<double>& latency_ms, const std::vector<double>& settings,
                                   double hint_ms, const FeatureNormalisation& norm, bool with_hint) {
  constexpr int W = kSystemFeatureWidth;
  const size_t n = types.size();
  std::vector<float> out(n * W, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    float* row = &out[i * W];
    if (types[i] >= 0 && types[i] < kSystemNodeTypes) row[types[i]] = 1.0f;
    row[kSystemNodeTypes] = static_cast<float>(norm.apply(latency_ms[i]));
    for (int k = 0; k < 3; ++k) row[kSystemNodeTypes + 1 + k] = static_cast<float>(std::log1p(std::max(0.0, settings[i * 3 + k])));
    if (with_hint && types[i] == static_cast<int>(SystemNodeType::global) && hint_ms > 0)
      row[kSystemNodeTypes + 4] = static_cast<float>(norm.apply(hint_ms));
  }
  return out;
}

}  // namespace coinfer
