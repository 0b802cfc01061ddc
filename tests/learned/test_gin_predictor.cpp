// ACE-GNN's learned predictors (sched/gin_predictor.hpp, sched/gin_estimator.hpp): accuracy metrics by
// hand, learning a known law, determinism, the symmetrised relative predictor, model files (round trip
// and every kind of bad file), and the estimator's batched search round.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "io/lut_repository.hpp"
#include "sched/gin_estimator.hpp"
#include "sched/gin_predictor.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;
namespace fs = std::filesystem;

namespace {

// One device, its middleware, its handler and a server, plus the global node (SystemGraph's order:
// server first, global last); edges along the flow, global links and self-loops.
GraphInput one_device_graph(double device_ms, double comm_ms, double handler_ms, double workers = 1) {
  GraphInput g;
  g.types = {3, 0, 1, 2, 4};
  g.latency_ms = {0, device_ms, comm_ms, handler_ms, 0};
  g.settings = {workers, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  g.edges = {{1, 2}, {2, 3}, {3, 0}};
  for (int v = 0; v < 4; ++v) g.edges.push_back({4, v}), g.edges.push_back({v, 4});
  for (int v = 0; v < 5; ++v) g.edges.push_back({v, v});
  return g;
}

// A law the GIN can learn: a closed loop through three stages in series completes 1000 / (sum of
// their ms) requests per second. Systems of 5 schemes each (their device/handler split varies).
std::vector<TrainingSample> series_law(int systems, std::uint64_t seed) {
  RandomStream r(seed, StreamPurpose::test, 17);
  std::vector<TrainingSample> out;
  for (int s = 0; s < systems; ++s) {
    const double comm = 1 + 20 * r.next_unit();
    for (int k = 0; k < 5; ++k) {
      const double dev = 2 + 60 * r.next_unit(), srv = 1 + 10 * r.next_unit();
      TrainingSample t;
      t.graph = one_device_graph(dev, comm, srv);
      t.throughput_rps = 1000 / (dev + comm + srv);
      t.system = s;
      t.device_types = "rpi4b";
      t.models = "gcn/mr";
      out.push_back(t);
    }
  }
  return out;
}

GinConfig small() {
  GinConfig c;
  c.hidden = 32;
  return c;
}

GinTrainOptions quick(std::uint64_t seed = 1) {
  GinTrainOptions o;
  o.seed = seed;
  o.epochs = 150;
  o.patience = 40;
  o.batch_size = 32;
  o.pairs_per_epoch = 512;
  o.learning_rate = 3e-3;
  return o;
}

std::string temp_path(const std::string& name) { return (fs::temp_directory_path() / ("coinfer_test_" + name)).string(); }

}  // namespace

TEST(GinAccuracy, MetricsByHand) {
  // Three samples of one system: 10, 20, 40 req/s, predicted 10.5 (5 %), 23 (15 %), 20 (50 %):
  // within 10 % 1/3, within 20 % 2/3, MAPE (0.05 + 0.15 + 0.5) / 3.
  std::vector<TrainingSample> s(3);
  s[0].throughput_rps = 10, s[1].throughput_rps = 20, s[2].throughput_rps = 40;
  const auto pairs = ranking_pairs(s);
  ASSERT_EQ(pairs.size(), 3u);  // (0,1), (0,2), (1,2): all more than 1 % apart
  // Pair (0,1): first worse, predicted worse (0.2): right. (0,2): predicted better (0.7): wrong. (1,2): right.
  const PredictorAccuracy a = accuracy(s, {10.5, 23, 20}, pairs, {0.2, 0.7, 0.1});
  EXPECT_NEAR(a.within_10, 1.0 / 3, 1e-12);
  EXPECT_NEAR(a.within_20, 2.0 / 3, 1e-12);
  EXPECT_NEAR(a.mape, 0.7 / 3, 1e-12);
  EXPECT_NEAR(a.pairwise, 2.0 / 3, 1e-12);
  // Samples of different systems never pair; throughputs within 1 % do not either.
  s[1].system = 1;
  s[2].throughput_rps = 10.05;
  EXPECT_TRUE(ranking_pairs(s).empty());
}

TEST(GinPredictor, LearnsASeriesLawAndRanksItsSchemes) {
  const auto train = series_law(80, 1);
  const GinPredictor p = GinPredictor::train(train, small(), quick(), "test: series law");
  EXPECT_TRUE(p.meta().has_system);
  EXPECT_TRUE(p.meta().has_relative);
  EXPECT_EQ(p.meta().train_samples + p.meta().validation_samples, 400);
  EXPECT_EQ(p.meta().validation_samples, 120);  // the paper's 70/30 split
  // Fresh systems of the same law (another seed): a predictor that learned nothing (a constant)
  // would be within 20 % for about a third of them and rank at chance.
  const auto test = series_law(40, 2);
  std::vector<const GraphInput*> gs;
  for (const auto& t : test) gs.push_back(&t.graph);
  const auto pairs = ranking_pairs(test);
  std::vector<std::pair<const GraphInput*, const GraphInput*>> pg;
  for (const auto& [i, j] : pairs) pg.emplace_back(&test[i].graph, &test[j].graph);
  const PredictorAccuracy a = accuracy(test, p.throughput(gs), pairs, p.better_probability(pg));
  EXPECT_GT(a.within_20, 0.8) << "MAPE " << a.mape;
  EXPECT_GT(a.pairwise, 0.85);
}

TEST(GinPredictor, DeterministicForASeedAndSavedExactly) {
  const auto data = series_law(12, 3);
  GinTrainOptions o = quick(7);
  o.epochs = 5;
  const GinPredictor a = GinPredictor::train(data, small(), o, "a"), b = GinPredictor::train(data, small(), o, "b");
  o.seed = 8;
  const GinPredictor c = GinPredictor::train(data, small(), o, "c");
  std::vector<const GraphInput*> gs;
  for (const auto& t : data) gs.push_back(&t.graph);
  const auto pa = a.throughput(gs), pb = b.throughput(gs), pc = c.throughput(gs);
  EXPECT_EQ(pa, pb);  // same seed: bit-identical
  EXPECT_NE(pa, pc);  // another seed: other weights
  const std::string path = temp_path("gin_roundtrip.pt");
  a.save(path);
  const GinPredictor back = GinPredictor::load(path);
  EXPECT_EQ(back.throughput(gs), pa);
  EXPECT_EQ(back.meta().norm.a, a.meta().norm.a);
  EXPECT_EQ(back.meta().config.layout, std::string(kFeatureLayoutPaper));
  EXPECT_EQ(back.meta().provenance, "a");
  std::vector<std::pair<const GraphInput*, const GraphInput*>> pg = {{gs[0], gs[1]}, {gs[2], gs[3]}};
  EXPECT_EQ(back.better_probability(pg), a.better_probability(pg));
  fs::remove(path);
}

TEST(GinPredictor, RelativeProbabilityIsSymmetrised) {
  const auto data = series_law(12, 4);
  GinTrainOptions o = quick();
  o.epochs = 3;
  const GinPredictor p = GinPredictor::train(data, small(), o, "sym");
  for (size_t i = 0; i + 1 < data.size(); i += 3) {
    const auto ab = p.better_probability({{&data[i].graph, &data[i + 1].graph}}).front();
    const auto ba = p.better_probability({{&data[i + 1].graph, &data[i].graph}}).front();
    EXPECT_NEAR(ab + ba, 1.0, 1e-6);  // P(a beats b) = 1 - P(b beats a): no two-cycles in a climb
  }
}

TEST(GinPredictor, AggregationsNormalisationsAndLayoutsTrain) {
  const auto data = series_law(10, 5);
  GinTrainOptions o = quick();
  o.epochs = 2;
  for (const char* agg : {"add", "mean", "max"})
    for (auto norm : {FeatureNormalisation::Kind::log_minmax, FeatureNormalisation::Kind::minmax, FeatureNormalisation::Kind::zscore}) {
      GinConfig c = small();
      c.aggregation = agg;
      c.normalisation = norm;
      const GinPredictor p = GinPredictor::train(data, c, o, "ablation");
      const auto y = p.throughput({&data[0].graph});
      EXPECT_TRUE(std::isfinite(y[0]) && y[0] > 0) << agg << " " << normalisation_name(norm);
    }
  GinConfig bad = small();
  bad.aggregation = "median";
  EXPECT_THROW(GinPredictor::train(data, bad, o, "x"), std::invalid_argument);
  GinConfig foreign = small();
  foreign.layout = "another-layout";
  EXPECT_THROW(GinPredictor::train(data, foreign, o, "x"), std::invalid_argument);
  EXPECT_THROW(GinPredictor::train({data[0], data[1]}, small(), o, "x"), std::invalid_argument);  // too few samples
}

TEST(GinPredictor, RangeWarningsNameWhatTrainingNeverSaw) {
  const auto data = series_law(10, 6);
  GinTrainOptions o = quick();
  o.epochs = 1;
  const GinPredictor p = GinPredictor::train(data, small(), o, "range");
  EXPECT_TRUE(p.range_warnings(data[0].graph, {"rpi4b"}, {"gcn/mr"}).empty());
  const auto w = p.range_warnings(one_device_graph(5000, 1, 1), {"jetson-nano"}, {"dgcnn/modelnet40"});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NE(w[0].find("jetson-nano"), std::string::npos);
  EXPECT_NE(w[1].find("dgcnn/modelnet40"), std::string::npos);
  EXPECT_NE(w[2].find("5000.0 ms"), std::string::npos);  // with the factor over the largest seen
}

TEST(GinPredictor, BadModelFilesAreInputErrorsNamingTheFile) {
  EXPECT_THROW(GinPredictor::load(temp_path("no_such_model.pt")), InputError);
  const std::string garbage = temp_path("garbage.pt");
  std::ofstream(garbage) << "not a torch archive";
  try {
    GinPredictor::load(garbage);
    FAIL() << "garbage loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(garbage), std::string::npos);
  }
  // A LibTorch archive that is not ours (no meta record), and ours with a foreign layout or corrupt meta.
  auto archive_with_meta = [&](const std::string& name, const std::string& meta) {
    torch::serialize::OutputArchive a;
    if (!meta.empty()) a.write("meta", c10::IValue(meta));
    a.write("x", torch::zeros({2}));
    const std::string path = temp_path(name);
    a.save_to(path);
    return path;
  };
  const std::string no_meta = archive_with_meta("no_meta.pt", "");
  const std::string foreign =
      archive_with_meta("foreign.pt", R"({"format":"coinfer-gin-predictor","version":2,"layout":"graph-v9","hidden":8,"layers":2})");
  const std::string corrupt = archive_with_meta("corrupt.pt", "{not json");
  const std::string newer = archive_with_meta("newer.pt", R"({"format":"coinfer-gin-predictor","version":99})");
  for (const auto& path : {no_meta, foreign, corrupt, newer}) {
    try {
      GinPredictor::load(path);
      ADD_FAILURE() << path << " loaded";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    fs::remove(path);
  }
  // Our meta record without the weights it announces.
  const auto data = series_law(6, 7);
  GinTrainOptions o = quick();
  o.epochs = 1;
  const std::string good = temp_path("good.pt");
  GinPredictor::train(data, small(), o, "w").save(good);
  torch::serialize::InputArchive in;
  in.load_from(good);
  c10::IValue meta;
  ASSERT_TRUE(in.try_read("meta", meta));
  const std::string weightless = archive_with_meta("weightless.pt", meta.toStringRef());
  try {
    GinPredictor::load(weightless);
    ADD_FAILURE() << "weightless loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("weights"), std::string::npos) << e.what();
  }
  // A meta record claiming another width than its weights have (a 32-wide system predictor under a
  // meta of 48): refused at load, not at the first forward pass (Module::load takes any shape). The
  // weights are written by a module tree with the system predictor's parameter names.
  std::string wide = meta.toStringRef();
  const auto at = wide.find("\"hidden\":32");
  ASSERT_NE(at, std::string::npos);
  wide.replace(at, 11, "\"hidden\":48");
  const auto rel = wide.find("\"relative\":true");
  ASSERT_NE(rel, std::string::npos);
  wide.replace(rel, 15, "\"relative\":false");
  struct Layer : torch::nn::Module {
    Layer(int in, int h) {
      register_module("l1", torch::nn::Linear(in, h));
      register_module("l2", torch::nn::Linear(h, h));
      register_parameter("eps", torch::zeros({1}));
    }
  };
  struct Encoder : torch::nn::Module {
    explicit Encoder(int h) {
      register_module("gin0", std::make_shared<Layer>(kSystemFeatureWidth, h));
      register_module("gin1", std::make_shared<Layer>(h, h));
    }
  };
  struct System : torch::nn::Module {
    explicit System(int h) {
      register_module("encoder", std::make_shared<Encoder>(h));
      register_module("head1", torch::nn::Linear(h, h / 2));
      register_module("head2", torch::nn::Linear(h / 2, 1));
    }
  };
  torch::serialize::OutputArchive weights, mismatched;
  System(32).save(weights);
  mismatched.write("meta", c10::IValue(wide));
  mismatched.write("system", weights);
  const std::string mismatch_path = temp_path("mismatch.pt");
  mismatched.save_to(mismatch_path);
  try {
    GinPredictor::load(mismatch_path);
    ADD_FAILURE() << "mismatched weights loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("do not match"), std::string::npos) << e.what();
  }
  // The same tree at the announced width loads (the names are right: the check is on shapes).
  torch::serialize::OutputArchive right_weights, right;
  System(48).save(right_weights);
  right.write("meta", c10::IValue(wide));
  right.write("system", right_weights);
  right.save_to(mismatch_path);
  EXPECT_NO_THROW(GinPredictor::load(mismatch_path));
  fs::remove(mismatch_path);
  fs::remove(good);
  fs::remove(weightless);
}

TEST(GinEstimator, BatchedRoundIsAKnockOutOfPairwiseComparisons) {
  // A real system (rpi4b + gtx1060, DGCNN) and its schemes: train a small predictor on analytic labels,
  // then check the estimator's batched best_of against knock-out rounds written with compare() one pair
  // at a time (the most probable winner over the incumbent becomes the incumbent, only the other winners
  // go on), that it stays (-1) when nothing wins, and that score_many agrees with score().
  LutSet luts = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut/rpi4b.h5", std::string(COINFER_SOURCE_DIR) + "/traces/lut/gtx1060.h5"});
  ModelSpecs specs{{ModelKey{"dgcnn", "modelnet40"}, test::catalog().instantiate("dgcnn", "modelnet40")}};
  AnalyticEstimator analytic(luts, specs);
  SystemState state;
  state.servers.push_back({"edge", "gtx1060"});
  DeviceState d{"pi0", "rpi4b", "dgcnn", "modelnet40", "edge"};
  d.link_bandwidth_mbps = 10;
  state.devices = {d};
  std::vector<Scheme> schemes;
  for (const char* st : {"local", "offload", "data_parallel", "pp(1)", "pp(2)", "pp(3)", "pp(5)", "pp(7)"})
    schemes.push_back({{{"pi0", parse_strategy(st)}}, {}});
  std::vector<TrainingSample> data;
  for (double mbps : {1.0, 3.0, 10.0, 30.0, 100.0}) {
    SystemState s = state;
    s.devices[0].link_bandwidth_mbps = mbps;
    for (const auto& sc : schemes) {
      TrainingSample t;
      t.graph = GraphInput::of(SystemGraph::build(s, sc, luts, specs));
      t.throughput_rps = analytic.score(s, sc);
      t.system = static_cast<std::int64_t>(mbps);
      data.push_back(t);
    }
  }
  GinTrainOptions o = quick();
  o.epochs = 20;
  GinEstimator gin(analytic, GinPredictor::train(data, small(), o, "estimator"), "test.pt");
  EXPECT_EQ(gin.describe(), "gin (test.pt)");
  for (size_t first = 0; first < schemes.size(); ++first) {
    const Scheme& incumbent = schemes[first];
    std::vector<Scheme> candidates;
    for (size_t i = 0; i < schemes.size(); ++i)
      if (i != first) candidates.push_back(schemes[i]);
    std::vector<size_t> alive(candidates.size());
    for (size_t i = 0; i < alive.size(); ++i) alive[i] = i;
    const Scheme* current = &incumbent;
    int expect = -1;
    while (true) {
      std::vector<size_t> winners;
      int top = -1;
      double top_c = 0;
      for (size_t i : alive) {
        const double c = gin.compare(state, candidates[i], *current);
        if (c > 1e-9) {
          winners.push_back(i);
          if (c > top_c) top_c = c, top = static_cast<int>(i);
        }
      }
      if (top < 0) break;
      expect = top;
      current = &candidates[static_cast<size_t>(top)];
      winners.erase(std::find(winners.begin(), winners.end(), static_cast<size_t>(top)));
      alive = winners;
    }
    EXPECT_EQ(gin.best_of(state, incumbent, candidates), expect) << "incumbent " << incumbent.to_string();
    // The winner is beaten by nothing that beat the incumbent; against itself nothing moves.
    const Scheme& winner = expect < 0 ? incumbent : candidates[static_cast<size_t>(expect)];
    EXPECT_EQ(gin.best_of(state, winner, {winner}), -1);
  }
  const auto many = gin.score_many(state, schemes);
  for (size_t i = 0; i < schemes.size(); ++i) EXPECT_NEAR(many[i], gin.score(state, schemes[i]), 1e-6 * many[i]);
}
