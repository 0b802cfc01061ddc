// Execution variants (GraNNite's techniques, core/model_variant.hpp): exact variants equal the base
// model, approximate ones stay close, INT8 is calibrated, node capacities pad and refuse, and the
// bytes an INT8 or padded split sends equal the spec's.
#include <gtest/gtest.h>

#include "io/model_spec_loader.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"
#include "models_test_support.hpp"
#include "models/variant_accuracy.hpp"

using namespace coinfer;
using namespace coinfer::models;
using coinfer::models::test::catalog;
using coinfer::models::test::max_abs_diff;

namespace {

// An undirected random graph (every link both ways), `nodes` nodes, about 3 links per node.
GraphSample undirected(const ModelSpec& m, int64_t nodes, uint64_t seed = 11) {
  torch::manual_seed(seed);
  GraphSample g;
  g.x = torch::randn({nodes, m.dataset.features});
  auto a = torch::randint(0, nodes, {nodes * 3}, torch::kInt64), b = torch::randint(0, nodes, {nodes * 3}, torch::kInt64);
  // Simple: no self edges, no repeated links.
  auto keys = std::get<0>(torch::_unique(torch::minimum(a, b) * nodes + torch::maximum(a, b)));
  a = keys.div(nodes, "floor"), b = keys.remainder(nodes);
  auto keep = a != b;
  a = a.masked_select(keep), b = b.masked_select(keep);
  g.edge_index = torch::stack({torch::cat({a, b}), torch::cat({b, a})});
  return g;
}

torch::Tensor run(const std::string& model, const std::string& ds, const GraphSample& g) { return GnnModel(catalog().spec(model, ds), 5).forward(g); }

}  // namespace

TEST(Variants, DenseMaskEqualsSparseAggregation) {
  // StaGr is exact: the same sums as a matrix product.
  for (const std::string model : {"gcn", "sage", "gat"})
    for (const std::string ds : {"mr", "siot"}) {
      const ModelSpec& m = catalog().spec(model, ds);
      const GraphSample g = undirected(m, 30);
      EXPECT_LT(max_abs_diff(run(model, ds, g), run(model + "@dense_mask", ds, g)), 1e-4) << model << "/" << ds;
    }
}

TEST(Variants, UncachedMakesTheGraphPreprocessingInEveryRun) {
  // The same outputs as the cached model; and nothing kept between runs: a graph changed in place
  // (which the cached model is told never to see) is read anew by `uncached`, while the cached model
  // still uses the normalisation or mask it made on the first run.
  for (const std::string model : {"gcn", "gcn@dense_mask", "sage@dense_mask", "gat@dense_mask"}) {
    const std::string base = model.substr(0, model.find('@'));
    const std::string uncached = model + (model.find('@') == std::string::npos ? "@uncached" : "+uncached");
    const ModelSpec& m = catalog().spec(base, "mr");
    GraphSample g = undirected(m, 30);
    GnnModel cached_model(catalog().spec(model, "mr"), 5), uncached_model(catalog().spec(uncached, "mr"), 5);
    const torch::Tensor first = cached_model.forward(g);
    EXPECT_LT(max_abs_diff(first, uncached_model.forward(g)), 1e-5) << uncached;
    g.edge_index.select(0, 1).copy_(g.edge_index.select(0, 1).roll(1));      // other destinations, same storage
    EXPECT_LT(max_abs_diff(cached_model.forward(g), first), 1e-6) << model;  // kept from the first run
    const torch::Tensor fresh = GnnModel(catalog().spec(model, "mr"), 5).forward(g);
    EXPECT_GT(max_abs_diff(fresh, first), 1e-3) << model;  // the change matters
    EXPECT_LT(max_abs_diff(uncached_model.forward(g), fresh), 1e-5) << uncached;
  }
}

TEST(Variants, AGraphPrepStageGivesTheLayersTheMatrixStaGrKeeps) {
  // gcn_grad (GrAd: the matrix made by a stage of its own in every run, an input of both layers) draws
  // the same weights from the same seed as gcn (prep has none): its outputs are gcn@dense_mask's. Each
  // split carries what the spec says, the N x N matrix included, and reads back.
  const ModelSpec& m = catalog().spec("gcn_grad", "cora");
  const GraphSample small = undirected(m, 30);
  EXPECT_LT(max_abs_diff(run("gcn_grad", "cora", small), run("gcn@dense_mask", "cora", small)), 1e-5);
  GnnModel model(m, 3);
  const GraphSample g = generate_sample(m.dataset, 2, 0).sample;
  ASSERT_EQ(g.x.size(0), m.dataset.nodes);
  SplitState st = model.start(g);
  for (int k = 0; k <= m.num_stages(); ++k) {
    model.run(st, k);
    EXPECT_DOUBLE_EQ(static_cast<double>(GnnModel::payload_bytes(st)), m.bytes_at_split(k)) << "split " << k;
  }
  EXPECT_LT(max_abs_diff(model.output(st), GnnModel(catalog().spec("gcn@dense_mask", "cora"), 3).forward(g)), 1e-4);
}

TEST(Variants, FeatureDecompositionEqualsTheWholeAggregation) {
  // fdP gathers and scatters the messages in P slices of the features: the same sums, P at a time.
  for (const std::string model : {"gcn", "sage", "gat"})
    for (const std::string ds : {"mr", "siot"}) {
      const ModelSpec& m = catalog().spec(model, ds);
      const GraphSample g = undirected(m, 30);
      for (const char* v : {"@fd2", "@fd7"}) {
        GnnModel chunked(catalog().spec(model + v, ds), 5);
        EXPECT_EQ(chunked.feature_chunks(), std::string(v) == "@fd2" ? 2 : 7);
        EXPECT_LT(max_abs_diff(run(model, ds, g), chunked.forward(g)), 1e-4) << model << v << "/" << ds;
      }
    }
}

TEST(Variants, NodeCapacityPadsWithoutChangingOutputsAndRefusesLargerInputs) {
  for (const std::string model : {"gcn", "gat", "sage"})
    for (const std::string ds : {"mr", "siot"}) {  // a graph task (pooling over real nodes) and a node task
      const ModelSpec& m = catalog().spec(model, ds);
      const std::string cap = ds == "mr" ? "cap64" : "cap20000";
      const GraphSample g = undirected(m, 20);
      const auto y = run(model, ds, g);
      for (const std::string v : {cap, "dense_mask+" + cap}) {
        if (ds == "siot" && v.rfind("dense", 0) == 0) continue;  // a 20000^2 mask: 1.6 GB
        const auto yv = run(model + "@" + v, ds, g);
        ASSERT_EQ(y.sizes(), yv.sizes()) << model << "@" << v << "/" << ds;
        EXPECT_LT(max_abs_diff(y, yv), 1e-4) << model << "@" << v << "/" << ds;
      }
    }
  const ModelSpec& m = catalog().spec("gcn@cap64", "mr");
  GnnModel model(m, 5);
  EXPECT_THROW(model.forward(undirected(m, 65)), NodeCapacityError);
  try {
    model.forward(undirected(m, 65));
  } catch (const NodeCapacityError& e) {
    EXPECT_NE(std::string(e.what()).find("65 nodes, above the node capacity 64"), std::string::npos) << e.what();
  }
}

TEST(Variants, SymmetricNormalisationEqualsCachedOnUndirectedGraphsAndRefusesDirectedOnes) {
  const ModelSpec& m = catalog().spec("gcn", "siot");
  GraphSample g = undirected(m, 40);
  // A self edge too: SymG keeps those apart from the pairs.
  g.edge_index = torch::cat({g.edge_index, torch::tensor({{3}, {3}}, torch::kInt64)}, 1);
  EXPECT_LT(max_abs_diff(run("gcn", "siot", g), run("gcn@symmetric", "siot", g)), 1e-4);
  GraphSample directed = g;
  directed.edge_index = torch::cat({g.edge_index, torch::tensor({{0}, {7}}, torch::kInt64)}, 1);
  EXPECT_THROW(run("gcn@symmetric", "siot", directed), std::invalid_argument);
}

TEST(Variants, GraxApproximationsStayCloseAndGrax2IsExactWhereItsSignsAgree) {
  const ModelSpec& m = catalog().spec("gat", "siot");
  const GraphSample g = undirected(m, 30);
  const auto exact = run("gat@dense_mask", "siot", g);
  // GrAx1 adds -1e4 on non-edges: exp(-1e4) underflows to 0 in float32, so it is exact here.
  EXPECT_LT(max_abs_diff(exact, run("gat@dense_mask+grax1", "siot", g)), 1e-5);
  // The out-of-the-box masking (Greater and Select, -inf on non-edges, a plain softmax) is the same
  // function on a graph without repeated edges.
  EXPECT_LT(max_abs_diff(exact, run("gat@dense_mask+select_mask", "siot", g)), 1e-5);
  // GrAx2 by hand on one layer (W = I, a_src = 1, a_dst = 2, so s_j = x_j0 + x_j1, d_i = 2 s_i): logits
  // LeakyReLU(d_i + s_j) vs LeakyReLU(s_j) + d_i. With every score positive the two differ by d_i in
  // each row, which the softmax cancels: equal outputs.
  ModelSpec one;
  one.name = "g1";
  one.dataset = DatasetSpec{"t", "graph", "node_classification", 3, 4, 2, 2, "test"};
  StageSpec st;
  st.name = "att";
  st.op = "gat";
  st.out_width = 2;
  st.heads = 1;
  one.stages = {st};
  derive_costs(one);
  ModelSpec one_grax = one;
  one_grax.variant = ModelVariant::parse("grax2");
  derive_costs(one_grax);
  GnnModel a(one, 3), b(one_grax, 3);
  for (GnnModel* model : {&a, &b}) {
    torch::NoGradGuard no_grad;
    auto p = model->stage_parameters(0);  // W [2,2], a_src [1,2], a_dst [1,2], bias
    p[0].copy_(torch::eye(2));
    p[1].fill_(1.0);
    p[2].fill_(2.0);
  }
  GraphSample pos{torch::tensor({{1.0f, 2.0f}, {0.5f, 1.0f}, {3.0f, 0.1f}}), torch::tensor({{0, 1, 1, 2}, {1, 0, 2, 1}}, torch::kInt64)};
  EXPECT_LT(max_abs_diff(a.forward(pos), b.forward(pos)), 1e-6);
  // With negative scores it is an approximation: outputs differ.
  GraphSample neg{-pos.x, pos.edge_index};
  neg.x[0][0] = 2.0f;  // node 0's score 1 > 0 while node 1's row adds 2 x (-1.5): mixed signs
  neg.x[0][1] = -1.0f;
  EXPECT_GT(max_abs_diff(a.forward(neg), b.forward(neg)), 1e-4);
}

TEST(Variants, Int8IsCalibratedCloseToFp32AndRefusesToRunUncalibrated) {
  for (const std::string model : {"gcn", "sage", "gat", "dgcnn"}) {
    const std::string ds = model == "dgcnn" ? "modelnet40" : "mr";
    for (const std::string v : {"int8", "dense_mask+int8"}) {
      if (model == "dgcnn" && v != "int8") continue;
      const ModelSpec& base = catalog().spec(model, ds);
      const ModelSpec& var = catalog().spec(model + "@" + v, ds);
      const VariantAccuracy acc = measure_variant_accuracy(base, var, 2, 3);
      std::printf("%s@%s/%s: max %.4g mean %.4g scale %.4g top1 %.3f\n", model.c_str(), v.c_str(), ds.c_str(), acc.max_abs_error, acc.mean_abs_error,
                  acc.output_scale, acc.top1_agreement);
      // Symmetric 8-bit steps are 1/127 of each range: errors a few percent of the outputs, not more.
      EXPECT_GT(acc.mean_abs_error, 0) << model << "@" << v;  // it is quantised, not fp32 in disguise
      EXPECT_LT(acc.mean_abs_error, 0.1 * acc.output_scale) << model << "@" << v;
      EXPECT_GE(acc.top1_agreement, 0.5) << model << "@" << v;
    }
  }
  GnnModel model(catalog().spec("gcn@int8", "mr"), 5);
  EXPECT_TRUE(model.calibrated());
  EXPECT_THROW(model.calibrate({}), std::invalid_argument);
  GnnModel fp32(catalog().spec("gcn", "mr"), 5);
  EXPECT_THROW(fp32.calibrate({generate_sample(fp32.spec().dataset, 1, 0).sample}), std::invalid_argument);
}

TEST(Variants, BytesCrossingEachSplitMatchTheSpecForInt8AndPaddedVariants) {
  for (const std::string name : {"gcn@int8", "gcn@dense_mask+cap64+int8", "sage@cap64", "dgcnn@int8", "gat@int8"}) {
    const std::string ds = name.rfind("dgcnn", 0) == 0 ? "modelnet40" : "mr";
    const ModelSpec& m = catalog().spec(name, ds);
    GnnModel model(m, 3);
    // A sample with exactly the dataset's nodes and edges per sample (the spec's statistics).
    GraphSample g = generate_sample(m.dataset, 2, 0).sample;
    if (m.dataset.kind == "point_cloud") g.x = g.x.narrow(1, 0, m.dataset.nodes);
    if (m.dataset.kind == "graph") ASSERT_EQ(g.edge_index.size(1), m.dataset.edges);
    if (m.dataset.kind == "graph" && g.x.size(0) != m.dataset.nodes) continue;
    SplitState st = model.start(g);
    for (int k = 0; k <= m.num_stages(); ++k) {
      model.run(st, k);
      EXPECT_DOUBLE_EQ(static_cast<double>(GnnModel::payload_bytes(st)), m.bytes_at_split(k)) << name << " split " << k;
      const SplitState back = deserialize(serialize(st));
      EXPECT_EQ(back.real_nodes, st.real_nodes);
      for (const auto& [id, t] : st.tensors) {
        ASSERT_TRUE(back.tensors.count(id));
        EXPECT_EQ(back.tensors.at(id).is_quantized(), t.is_quantized());
        EXPECT_TRUE(torch::equal(back.tensors.at(id).is_quantized() ? back.tensors.at(id).int_repr() : back.tensors.at(id),
                                 t.is_quantized() ? t.int_repr() : t));
      }
    }
  }
  // An int8 split is smaller than the fp32 one: the activations are a quarter.
  EXPECT_LT(catalog().spec("gcn@int8", "yelp").bytes_at_split(1), 0.5 * catalog().spec("gcn", "yelp").bytes_at_split(1));
}

TEST(Variants, ExactVariantsReproduceTheBaseOnTheGeneratedDatasets) {
  // The generated graphs (models/datasets.hpp) may repeat links; StaGr's masks count them as the
  // sparse path does.
  for (const std::string model : {"gcn", "sage", "gat"})
    for (const std::string v : {"dense_mask", "cap64", "dense_mask+cap64"}) {
      const VariantAccuracy acc = measure_variant_accuracy(catalog().spec(model, "mr"), catalog().spec(model + "@" + v, "mr"), 3, 2);
      EXPECT_LT(acc.max_abs_error, 1e-4) << model << "@" << v;
      EXPECT_EQ(acc.top1_agreement, 1.0) << model << "@" << v;
    }
  const VariantAccuracy sym = measure_variant_accuracy(catalog().spec("gcn", "siot"), catalog().spec("gcn@symmetric", "siot"), 1, 2);
  EXPECT_LT(sym.max_abs_error, 1e-4);
  // GraSp multiplies a sparse copy of the same matrix: kept per graph (dense_mask), made in every run
  // (uncached), and GrAd's matrix given by its own stage.
  for (const std::string model : {"gcn", "sage"})
    for (const std::string v : {"dense_mask+grasp", "dense_mask+uncached+grasp", "dense_mask+cap64+grasp"}) {
      const VariantAccuracy acc = measure_variant_accuracy(catalog().spec(model, "mr"), catalog().spec(model + "@" + v, "mr"), 3, 2);
      EXPECT_LT(acc.max_abs_error, 1e-4) << model << "@" << v;
      EXPECT_EQ(acc.top1_agreement, 1.0) << model << "@" << v;
    }
  const VariantAccuracy grad = measure_variant_accuracy(catalog().spec("gcn_grad", "cora"), catalog().spec("gcn_grad@grasp", "cora"), 1, 2);
  EXPECT_LT(grad.max_abs_error, 1e-4);
  EXPECT_EQ(grad.top1_agreement, 1.0);
}
