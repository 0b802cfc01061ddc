#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "io/model_spec_loader.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {
const ModelCatalog& catalog() {
  static ModelCatalog c = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
  return c;
}
}  // namespace

TEST(ModelSpec, DgcnnBytesPerSplitFollowLiveTensors) {
  ModelSpec m = catalog().instantiate("dgcnn", "modelnet40");
  ASSERT_EQ(m.num_stages(), 9);
  // k=0: raw cloud 1024 points x 3 floats x 4 B = 12288 B.
  EXPECT_DOUBLE_EQ(m.bytes_at_split(0), 12288);
  // k=2: x1 and x2 (64 wide each) both feed the concatenation -> 1024 x 128 x 4 = 524288 B.
  EXPECT_DOUBLE_EQ(m.bytes_at_split(2), 524288);
  // k=4: x1..x4 (64+64+128+256 = 512 wide) -> 1024 x 512 x 4 = 2097152 B.
  EXPECT_DOUBLE_EQ(m.bytes_at_split(4), 2097152);
  // k=6: after max+mean pooling, one 2048-vector per cloud -> 8192 B.
  EXPECT_DOUBLE_EQ(m.bytes_at_split(6), 8192);
  // k=9: 40 class scores -> 160 B.
  EXPECT_DOUBLE_EQ(m.bytes_at_split(9), 160);
  EXPECT_EQ(m.pp_comm(), 8);  // 256 floats = 1 KB is the smallest interior crossing
  EXPECT_THROW(m.bytes_at_split(10), std::out_of_range);
}

TEST(ModelSpec, DgcnnFlopsFollowDocumentedFormula) {
  ModelSpec m = catalog().instantiate("dgcnn", "modelnet40");
  // edgeconv1 (in 3, out 64, k 20, N 1024): N^2*3*in + N*k*2*(2*in)*out + N*k*out
  const double N = 1024, k = 20, in = 3, out = 64;
  EXPECT_DOUBLE_EQ(m.stages[0].flops, N * N * 3 * in + N * k * 2 * (2 * in) * out + N * k * out);
  // fc3 (256 -> 40, one row): 2*256*40
  EXPECT_DOUBLE_EQ(m.stages[8].flops, 2.0 * 256 * 40);
}

TEST(ModelSpec, GraphModelsCarryTheGraphAcrossSplits) {
  ModelSpec m = catalog().instantiate("gcn", "yelp");
  ASSERT_EQ(m.num_stages(), 2);
  const double graph = 31350.0 * 2 * 8;  // edge_index, int64
  // Offload sends features (10000 x 100 x 4) and the graph: 4,000,000 + 501,600 B = 4396.1 KB (Table II DP).
  EXPECT_DOUBLE_EQ(m.bytes_at_split(0), 4e6 + graph);
  EXPECT_NEAR(m.bytes_at_split(0) / 1024, 4396.1, 0.05);
  // k=1: hidden 64 per node + the graph (conv2 still needs it).
  EXPECT_DOUBLE_EQ(m.bytes_at_split(1), 10000.0 * 64 * 4 + graph);
  // MR is graph classification: conv1, conv2, pool, head.
  ModelSpec mr = catalog().instantiate("gat", "mr");
  ASSERT_EQ(mr.num_stages(), 4);
  EXPECT_EQ(mr.stages[2].op, "pool");
  EXPECT_DOUBLE_EQ(mr.bytes_at_split(4), 2 * 4.0);
}

TEST(ModelSpec, GcodeKnnGraphCrossesUntilLastAggregate) {
  ModelSpec m = catalog().instantiate("gcode", "modelnet40");
  // After comb1 (k=3): comb1 output 1024x32x4 plus the KNN graph 1024x20x8 (agg2 still needs both).
  EXPECT_DOUBLE_EQ(m.bytes_at_split(3), 1024.0 * 32 * 4 + 1024.0 * 20 * 8);
  // After agg2 (k=4) only agg2's output (32 wide) is live.
  EXPECT_DOUBLE_EQ(m.bytes_at_split(4), 1024.0 * 32 * 4);
}

TEST(ModelSpec, PpCompPicksLeastTotalTime) {
  ModelSpec m = catalog().instantiate("gcn", "mr");  // 4 stages
  // Device: 1 s per stage; server: 3 s for stage 1, 0 otherwise -> totals k=1: 1+3, k=2: 2, k=3: 3.
  auto dev = [](int a, int b) { return double(b - a); };
  auto srv = [](int a, int b) { return (a <= 1 && b > 1) ? 3.0 : 0.0; };
  EXPECT_EQ(m.pp_comp(dev, srv), 2);
}

TEST(ModelSpec, UnknownPairsNameTheAllowedValues) {
  try {
    catalog().instantiate("dgcnn", "yelp");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("modelnet40"), std::string::npos);
  }
  EXPECT_THROW(catalog().instantiate("resnet", "yelp"), InputError);
}

// Found by the model_spec fuzz target: a width or a task written as a list was a yaml-cpp conversion
// error (not an InputError: an abort in the CLI). Each is refused naming the stage's key.
TEST(ModelSpec, AListWhereAWidthOrATaskGoesIsRefusedNamingTheKey) {
  const std::string dir = coinfer::test::temp_dir("spec-lists");
  std::filesystem::create_directories(dir + "/specs");
  std::filesystem::copy_file(std::string(COINFER_SOURCE_DIR) + "/models/datasets.yaml", dir + "/datasets.yaml");
  auto refusal = [&](const std::string& stage) -> std::string {
    std::ofstream(dir + "/specs/t.yaml") << "name: t\ndatasets: [mr]\nstages:\n  - " << stage << "\n";
    try {
      ModelCatalog::load(dir);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(taken)";
  };
  EXPECT_NE(refusal("{name: a, op: combine, out: [64, knn]}").find("stages[0].out"), std::string::npos);
  EXPECT_NE(refusal("{name: a, op: combine, out: 8, task: [node_classification]}").find("stages[0].task"), std::string::npos);
  EXPECT_EQ(refusal("{name: a, op: combine, out: 8}"), "(taken)");
}
