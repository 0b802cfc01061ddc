// Image models (models/README.md "Images"): a CNN's stages as rows (pixels) x width (channels), their
// costs worked out by hand, and the shipped ResNet-18, MobileNet-v2 and MobileNet-v3-small against their
// published sizes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/model_spec.hpp"
#include "io/model_spec_loader.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;
using coinfer::test::catalog;

namespace {

// An 8 x 8 RGB "image" dataset.
DatasetSpec tiny_images() { return coinfer::test::tiny_images(64, 3, 10); }

StageSpec conv(const std::string& name, int out, int kernel, int stride, int groups, const std::string& act, std::vector<int> inputs = {}) {
  StageSpec s;
  s.name = name;
  s.op = "conv";
  s.out_width = out;
  s.kernel = kernel;
  s.stride = stride;
  s.groups = groups;
  s.activation = act;
  s.inputs = std::move(inputs);
  return s;
}

// A stage of `op` (add, se) over `inputs`, its other keys at their defaults.
StageSpec op_stage(const std::string& name, const std::string& op, std::vector<int> inputs) {
  StageSpec s;
  s.name = name;
  s.op = op;
  s.inputs = std::move(inputs);
  return s;
}

}  // namespace

// conv 3x3/2, 3 -> 4, ReLU on 8 x 8: side floor((8 + 2 - 3) / 2) + 1 = 4, 16 pixels; 16 x 4 x 3 x 9 =
// 1,728 MACs = 3,456 FLOPs, BatchNorm 2 x 64 = 128, ReLU 64: 3,648. Weights 4 x 3 x 9 + 4 x 4 (BatchNorm's
// four vectors) = 124 floats. Output 16 x 4 floats = 256 B. Then a depthwise 3x3/1 (groups 4) without
// activation: 16 x 4 x 1 x 9 = 576 MACs = 1,152 FLOPs + 128 BatchNorm; weights 4 x 9 + 16 = 52 floats. A
// residual sum of both (equal shapes) with ReLU: 64 adds + 64 = 128 FLOPs.
TEST(ImageModels, ConvStagesCostWorkedOutByHand) {
  ModelSpec m;
  m.name = "t";
  m.dataset = tiny_images();
  m.stages = {conv("c1", 4, 3, 2, 1, "relu"), conv("dw", 4, 3, 1, 4, "", {0})};
  StageSpec sum = op_stage("sum", "add", {1, 0});
  sum.activation = "relu";
  m.stages.push_back(sum);
  derive_costs(m);
  EXPECT_DOUBLE_EQ(m.stages[0].out_rows, 16);
  EXPECT_DOUBLE_EQ(m.stages[0].flops, 3648);
  EXPECT_DOUBLE_EQ(m.stages[0].weight_bytes, 124 * 4);
  EXPECT_DOUBLE_EQ(m.stages[0].out_bytes, 256);
  EXPECT_DOUBLE_EQ(m.stages[1].out_rows, 16);
  EXPECT_DOUBLE_EQ(m.stages[1].flops, 1152 + 128);
  EXPECT_DOUBLE_EQ(m.stages[1].weight_bytes, 52 * 4);
  EXPECT_EQ(m.stages[2].out_width, 4);
  EXPECT_DOUBLE_EQ(m.stages[2].flops, 128);
  // The raw input is 64 x 3 floats; after c1 the live tensors at split 2 are dw's and c1's outputs.
  EXPECT_DOUBLE_EQ(m.input_bytes, 64 * 3 * 4);
  EXPECT_DOUBLE_EQ(m.bytes_at_split(2), 256 + 256);
  // Operators carry the stage's FLOPs, no more, no less.
  for (const auto& s : m.stages) {
    double f = 0;
    for (const auto& o : s.operators) f += o.flops;
    EXPECT_DOUBLE_EQ(f, s.flops) << s.name;
  }
}

// Squeeze and excitation on c1's 4 x 4 map of 4 channels with hardswish, squeeze 2. The conv: 3,456
// MACs' FLOPs + 128 BatchNorm + hardswish 4 x 64 = 3,840. The block: means 16 x 4 = 64 adds; 1x1 conv
// 4 -> 2 with bias 2 x 4 x 2 + 2 = 18; ReLU 2; 1x1 conv 2 -> 4 with bias 2 x 2 x 4 + 4 = 20; hardsigmoid
// 3 x 4 = 12; the scaling 64: 180 FLOPs. Weights 4 x 2 + 2 + 2 x 4 + 4 = 22 floats. Its output has its
// input's shape (64 floats, 256 B). Its operators: the mean a reduction, the two convs dense (18 + 20).
TEST(ImageModels, SqueezeExcitationAndHardswishWorkedOutByHand) {
  ModelSpec m;
  m.name = "t";
  m.dataset = tiny_images();
  m.stages = {conv("c1", 4, 3, 2, 1, "hardswish")};
  StageSpec se = op_stage("se", "se", {0});
  se.squeeze = 2;
  m.stages.push_back(se);
  derive_costs(m);
  EXPECT_DOUBLE_EQ(m.stages[0].flops, 3840);
  EXPECT_DOUBLE_EQ(m.stages[1].flops, 180);
  EXPECT_DOUBLE_EQ(m.stages[1].weight_bytes, 22 * 4);
  EXPECT_EQ(m.stages[1].out_width, 4);
  EXPECT_DOUBLE_EQ(m.stages[1].out_rows, 16);
  EXPECT_DOUBLE_EQ(m.stages[1].out_bytes, 256);
  double dense = 0, reduction = 0, all = 0;
  for (const auto& o : m.stages[1].operators) {
    all += o.flops;
    if (o.cls == OperatorClass::dense) dense += o.flops;
    if (o.cls == OperatorClass::reduction) reduction += o.flops;
  }
  EXPECT_DOUBLE_EQ(all, 180);
  EXPECT_DOUBLE_EQ(dense, 38);
  EXPECT_DOUBLE_EQ(reduction, 64);
  se.squeeze = 0;  // a block without a bottleneck
  m.stages[1] = se;
  EXPECT_THROW(derive_costs(m), std::invalid_argument);
}

// A spec file's squeeze width belongs to an se stage: on a conv it is refused at load, naming the file's
// stage and key; hardswish is an activation the loader takes.
TEST(ImageModels, ASqueezeWidthOutsideAnSeStageIsRefused) {
  const std::string dir = coinfer::test::temp_dir("se-spec");
  std::filesystem::create_directories(dir + "/specs");
  std::filesystem::copy_file(std::string(COINFER_SOURCE_DIR) + "/models/datasets.yaml", dir + "/datasets.yaml");
  auto write_spec = [&](const std::string& stage) {
    std::ofstream(dir + "/specs/t.yaml") << "name: t\ndatasets: [imagenet]\nstages:\n  - " << stage << "\n";
  };
  write_spec("{name: c, op: conv, out: 8, kernel: 3, act: hardswish}");
  EXPECT_NO_THROW(ModelCatalog::load(dir));
  write_spec("{name: c, op: conv, out: 8, kernel: 3, squeeze: 4}");
  try {
    ModelCatalog::load(dir);
    FAIL() << "a conv with a squeeze width was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("stages[0].squeeze"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("only an se stage"), std::string::npos) << e.what();
  }
  write_spec("{name: c, op: conv, out: 8, kernel: 3, act: swish}");
  EXPECT_THROW(ModelCatalog::load(dir), InputError);
}

TEST(ImageModels, BadShapesAreRefusedNamingTheStage) {
  ModelSpec m;
  m.name = "t";
  m.dataset = tiny_images();
  m.stages = {conv("c1", 4, 3, 2, 2, "relu")};  // 3 input channels in 2 groups
  EXPECT_THROW(derive_costs(m), std::invalid_argument);
  m.stages = {conv("c1", 4, 3, 2, 1, ""), conv("c2", 8, 3, 2, 1, "", {0})};
  m.stages.push_back(op_stage("sum", "add", {1, 0}));  // 4 x 4 pixels of 8 channels and 4 x 4 of 4: different widths
  try {
    derive_costs(m);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'sum'"), std::string::npos) << e.what();
  }
  // A conv or an se block after the global pool: LibTorch would get a [B, C] tensor, not a map.
  StageSpec pool = op_stage("pool", "pool", {0});
  pool.pool_mode = "mean";
  for (const char* op : {"conv", "se"}) {
    StageSpec after = op == std::string("conv") ? conv("late", 4, 1, 1, 1, "", {1}) : op_stage("late", "se", {1});
    after.squeeze = op == std::string("se") ? 2 : 0;
    m.stages = {conv("c1", 4, 3, 2, 1, ""), pool, after};
    try {
      derive_costs(m);
      FAIL() << op << " after a pool was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("its input was pooled"), std::string::npos) << e.what();
    }
  }
  m.dataset.kind = "graph";
  m.stages = {conv("c1", 4, 3, 2, 1, "")};
  EXPECT_THROW(derive_costs(m), std::invalid_argument);  // a conv needs an image dataset
}

// The shipped specs against the published networks: torchvision's ResNet-18 has 11,689,512 parameters
// and MobileNet-v2 3,504,872 (He et al. 2016; Sandler et al. 2018); coinfer's weights also count
// BatchNorm's running mean and variance (2 floats a channel: ResNet-18's BatchNorms have 4,800 channels,
// MobileNet-v2's 17,056). Their multiply-adds: 1.814 G and 0.301 G (both papers: 1.8 G, 0.3 G).
TEST(ImageModels, ShippedCnnsHaveTheirPublishedSizes) {
  const ModelSpec& r = catalog().spec("resnet18", "imagenet");
  const ModelSpec& mb = catalog().spec("mobilenet_v2", "imagenet");
  double rw = 0, mw = 0, rmacs = 0, mmacs = 0;
  auto macs = [](const StageSpec& s) {
    double f = 0;
    for (const auto& o : s.operators)
      if (o.cls == OperatorClass::dense) f += o.flops / 2;
    return f;
  };
  for (const auto& s : r.stages) rw += s.weight_bytes, rmacs += macs(s);
  for (const auto& s : mb.stages) mw += s.weight_bytes, mmacs += macs(s);
  EXPECT_DOUBLE_EQ(rw, (11689512.0 + 2 * 4800) * 4);
  EXPECT_DOUBLE_EQ(mw, (3504872.0 + 2 * 17056) * 4);
  EXPECT_NEAR(rmacs / 1e9, 1.814, 0.001);
  EXPECT_NEAR(mmacs / 1e9, 0.301, 0.001);
  // MobileNet-v3-small (Howard et al. 2019): torchvision's 2,542,856 parameters (BatchNorms over 6,056
  // channels) and 56.5 M multiply-adds; 52 stages, 1,000 classes from a 1,024-wide hidden fc.
  const ModelSpec& m3 = catalog().spec("mobilenet_v3_small", "imagenet");
  double w3 = 0, macs3 = 0;
  for (const auto& s : m3.stages) w3 += s.weight_bytes, macs3 += macs(s);
  EXPECT_DOUBLE_EQ(w3, (2542856.0 + 2 * 6056) * 4);
  EXPECT_NEAR(macs3 / 1e9, 0.0565, 0.0005);  // torchvision rounds it to 0.06
  EXPECT_EQ(m3.num_stages(), 52);
  EXPECT_EQ(m3.stages.back().out_width, 1000);
  EXPECT_EQ(m3.stages[m3.num_stages() - 2].out_width, 1024);
  // ResNet-18's maps: 112 x 112 after conv1, 56 x 56 after the max pool, 7 x 7 at the end; 1,000 classes.
  EXPECT_DOUBLE_EQ(r.stages[0].out_rows, 112 * 112);
  EXPECT_DOUBLE_EQ(r.stages[1].out_rows, 56 * 56);
  EXPECT_DOUBLE_EQ(r.stages[r.num_stages() - 3].out_rows, 7 * 7);
  EXPECT_EQ(r.stages.back().out_width, 1000);
  // Between a block's second conv and its sum both the conv's map and the block's input cross:
  // 2 x 64 channels x 56 x 56 pixels x 4 B.
  int sum = -1;
  for (int i = 0; i < r.num_stages(); ++i)
    if (r.stages[i].name == "layer1_0_sum") sum = i;
  ASSERT_GT(sum, 0);
  EXPECT_DOUBLE_EQ(r.bytes_at_split(sum), 2.0 * 64 * 56 * 56 * 4);
}
