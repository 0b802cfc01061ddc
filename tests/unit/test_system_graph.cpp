// ACE-GNN's system graph (sched/system_graph.hpp): nodes, edges and features by hand for a small system.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "io/lut_repository.hpp"
#include "sched/system_graph.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

struct Fixture {
  LutSet luts = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut/rpi4b.h5", std::string(COINFER_SOURCE_DIR) + "/traces/lut/gtx1060.h5"});
  ModelSpecs specs{{ModelKey{"dgcnn", "modelnet40"}, test::catalog().instantiate("dgcnn", "modelnet40")}};
  SystemState state;
  Fixture() {
    state.servers.push_back({"edge", "gtx1060"});
    DeviceState local{"pi0", "rpi4b", "dgcnn", "modelnet40", "edge"};
    local.strategy = Strategy::local();
    local.link_bandwidth_mbps = 40;
    DeviceState split = local;
    split.id = "pi1";
    split.strategy = Strategy::pp(2);
    split.link_bandwidth_mbps = 10;
    split.link_latency_ms = 2;
    DeviceState idle = local;
    idle.id = "idle";
    idle.generates = false;
    DeviceState gone = local;
    gone.id = "gone";
    gone.connected = false;
    state.devices = {local, split, idle, gone};
  }
  Scheme current() const { return {{{"pi0", Strategy::local()}, {"pi1", Strategy::pp(2)}}, {}}; }
};

}  // namespace

TEST(SystemGraph, NodesEdgesAndFeaturesByHand) {
  Fixture f;
  const SystemGraph g = SystemGraph::build(f.state, f.current(), f.luts, f.specs);
  // 1 server + 3 connected devices x (device, middleware, handler) + 1 global = 11 ("gone" is left out).
  ASSERT_EQ(g.num_nodes(), 11);
  EXPECT_EQ(g.node(0).type, SystemNodeType::server);
  EXPECT_EQ(g.node(4).name, "pi1");
  EXPECT_EQ(g.node(5).name, "pi1/middleware");
  EXPECT_EQ(g.node(6).name, "edge/handler:pi1");
  EXPECT_EQ(g.node(10).type, SystemNodeType::global);
  // Edges: 3 data-flow edges per device (9), global <-> the 10 others (20), 11 self-loops: 40.
  const auto e = g.edges();
  EXPECT_EQ(e.size(), 40u);
  const std::set<std::pair<int, int>> es(e.begin(), e.end());
  EXPECT_TRUE(es.count({4, 5}) && es.count({5, 6}) && es.count({6, 0}));  // pi1 -> middleware -> handler -> edge
  EXPECT_TRUE(es.count({10, 4}) && es.count({4, 10}) && es.count({4, 4}) && es.count({10, 10}));
  EXPECT_FALSE(es.count({5, 4}));  // data flows one way
  // Latency features: pi1 = pp(2): the device runs [0,2) on rpi4b, sends the split-2 tensor over 10 Mbit/s
  // plus 2 ms, the server runs [2,9) on gtx1060 (synthesised LUTs: no wire bytes, the spec's bytes).
  const ModelSpec& m = f.specs.at(ModelKey{"dgcnn", "modelnet40"});
  const LutTable& pi = f.luts.table({"rpi4b", "dgcnn", "modelnet40"});
  const LutTable& gpu = f.luts.table({"gtx1060", "dgcnn", "modelnet40"});
  EXPECT_DOUBLE_EQ(g.node(4).latency_ms, pi.mean_seconds(0, 2, 1) * 1e3);
  EXPECT_DOUBLE_EQ(g.node(5).latency_ms, m.bytes_at_split(2) * 8 / 10e6 * 1e3 + 2);
  EXPECT_DOUBLE_EQ(g.node(6).latency_ms, gpu.mean_seconds(2, 9, 1) * 1e3);
  // pi0 = local: the whole model on the device, nothing sent, nothing on the server.
  EXPECT_DOUBLE_EQ(g.node(1).latency_ms, pi.mean_seconds(0, 9, 1) * 1e3);
  EXPECT_EQ(g.node(2).latency_ms, 0);
  EXPECT_EQ(g.node(3).latency_ms, 0);
  // The idle device and the server and global nodes carry their type alone.
  EXPECT_EQ(g.node(7).latency_ms, 0);
  EXPECT_EQ(g.node(0).latency_ms, 0);
}

TEST(SystemGraph, ASchemeChangesTheFeaturesNotTheGraph) {
  Fixture f;
  const SystemGraph a = SystemGraph::build(f.state, f.current(), f.luts, f.specs);
  const SystemGraph b = SystemGraph::build(f.state, {{{"pi0", Strategy::offload()}, {"pi1", Strategy::data_parallel()}}, {}}, f.luts, f.specs);
  EXPECT_EQ(a.edges(), b.edges());
  EXPECT_NE(a.latencies_ms(), b.latencies_ms());
  const ModelSpec& m = f.specs.at(ModelKey{"dgcnn", "modelnet40"});
  EXPECT_EQ(b.node(1).latency_ms, 0);  // offload: nothing on the device
  EXPECT_DOUBLE_EQ(b.node(2).latency_ms, m.bytes_at_split(0) * 8 / 40e6 * 1e3);
  EXPECT_DOUBLE_EQ(b.node(3).latency_ms, f.luts.table({"gtx1060", "dgcnn", "modelnet40"}).mean_seconds(0, 9, 1) * 1e3);
  // data_parallel: whole inputs on either side.
  EXPECT_DOUBLE_EQ(b.node(4).latency_ms, f.luts.table({"rpi4b", "dgcnn", "modelnet40"}).mean_seconds(0, 9, 1) * 1e3);
  EXPECT_DOUBLE_EQ(b.node(5).latency_ms, m.bytes_at_split(0) * 8 / 10e6 * 1e3 + 2);
}

TEST(SystemGraph, FeatureRowsAndNormalisationsByHand) {
  // Log-MinMax (ACE-GNN equation 1) on {0, 9, 99} ms: log(x+1) = {0, ln 10, ln 100}, Vmin 0, Vmax ln 100:
  // 9 ms -> ln 10 / ln 100 = 0.5.
  const auto lm = FeatureNormalisation::fit(FeatureNormalisation::Kind::log_minmax, {0, 9, 99});
  EXPECT_DOUBLE_EQ(lm.apply(9), 0.5);
  EXPECT_DOUBLE_EQ(lm.apply(0), 0);
  EXPECT_DOUBLE_EQ(lm.apply(99), 1);
  const auto mm = FeatureNormalisation::fit(FeatureNormalisation::Kind::minmax, {0, 9, 99});
  EXPECT_DOUBLE_EQ(mm.apply(9), 9.0 / 99);
  const auto z = FeatureNormalisation::fit(FeatureNormalisation::Kind::zscore, {1, 2, 3});  // mean 2, sd 1
  EXPECT_DOUBLE_EQ(z.apply(3), 1);
  const auto one = FeatureNormalisation::fit(FeatureNormalisation::Kind::log_minmax, {5});
  EXPECT_TRUE(std::isfinite(one.apply(5)));  // a single value does not divide by zero

  Fixture f;
  const SystemGraph g = SystemGraph::build(f.state, f.current(), f.luts, f.specs);
  const auto x = g.features(lm);
  constexpr int W = kSystemFeatureWidth;  // 5 one-hot + latency + 3 server settings + hint = 10
  ASSERT_EQ(W, 10);
  ASSERT_EQ(x.size(), 11u * W);
  // Row 5 (pi1's middleware): one-hot at type 1, then the normalised latency, no settings.
  for (int k = 0; k < 5; ++k) EXPECT_EQ(x[5 * W + k], k == 1 ? 1.0f : 0.0f);
  EXPECT_FLOAT_EQ(x[5 * W + 5], static_cast<float>(lm.apply(g.node(5).latency_ms)));
  for (int k = 6; k < W; ++k) EXPECT_EQ(x[5 * W + k], 0.0f);
  EXPECT_EQ(x[10 * W + 4], 1.0f);  // the global node
  // Row 0 (the server): its settings as log(1 + x).
  const ServerState& sv = f.state.servers[0];
  EXPECT_FLOAT_EQ(x[0 * W + 6], static_cast<float>(std::log1p(sv.workers)));
  EXPECT_FLOAT_EQ(x[0 * W + 7], static_cast<float>(std::log1p(sv.batch_max_size)));
  EXPECT_FLOAT_EQ(x[0 * W + 8], static_cast<float>(std::log1p(sv.batch_window_ms)));
  EXPECT_EQ(x[10 * W + 9], 0.0f);  // built without the analytic estimator: no hint

  // With the hint: the global node's column 9 is 1000 / (the analytic system throughput), normalised.
  AnalyticEstimator est(f.luts, f.specs);
  const SystemGraph h = SystemGraph::build(f.state, f.current(), est);
  const double rps = est.predict(f.state, f.current()).throughput_rps;
  EXPECT_DOUBLE_EQ(h.analytic_throughput_rps(), rps);
  const auto xh = h.features(lm, true);
  EXPECT_FLOAT_EQ(xh[10 * W + 9], static_cast<float>(lm.apply(1e3 / rps)));
  EXPECT_EQ(h.features(lm, false)[10 * W + 9], 0.0f);           // the paper's layout ignores it
  for (int i = 0; i < 10; ++i) EXPECT_EQ(xh[i * W + 9], 0.0f);  // on the global node only
}

TEST(SystemGraph, MissingLutOrSpecIsAnError) {
  Fixture f;
  f.state.devices[0].type = "nosuchboard";
  EXPECT_THROW(SystemGraph::build(f.state, f.current(), f.luts, f.specs), LutMissingError);
  Fixture g;
  g.specs.clear();
  EXPECT_THROW(SystemGraph::build(g.state, g.current(), g.luts, g.specs), std::out_of_range);
}
