// LibTorch models: hand-computed layers, split execution equal to whole-model execution, the bytes
// that cross each split equal to the spec's, serialisation, feature decomposition.
#include <algorithm>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "io/model_spec_loader.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"
#include "models/model_runner.hpp"
#include "models/split_state.hpp"
#include "models_test_support.hpp"

using namespace coinfer;
using namespace coinfer::models;
using coinfer::models::test::catalog;
using coinfer::models::test::max_abs_diff;

namespace {

// A random input shaped for the spec's dataset, with `nodes` nodes (points) and about 4 edges per node;
// an image at its dataset's size whatever `nodes`.
GraphSample sample(const ModelSpec& m, int64_t nodes, int64_t edges_per_node = 4, uint64_t seed = 7) {
  torch::manual_seed(seed);
  GraphSample g;
  if (m.dataset.kind == "image") {
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(m.dataset.nodes))));
    g.x = torch::randn({1, m.dataset.features, side, side});
  } else if (m.dataset.kind == "point_cloud") {
    g.x = torch::randn({1, nodes, m.dataset.features});
  } else {
    g.x = torch::randn({nodes, m.dataset.features});
    g.edge_index = torch::randint(0, nodes, {2, nodes * edges_per_node}, torch::kInt64);
  }
  return g;
}

}  // namespace

TEST(Models, GcnLayerMatchesHandComputation) {
  // Path graph 0 - 1 - 2 (edges both ways), one feature, weight 2, bias 0, a single (last) gcn stage.
  const ModelSpec m = one_stage_model("tiny", DatasetSpec{"tiny", "graph", "node_classification", 3, 4, 1, 1, "test"}, "gcn", 1);
  GnnModel model(m);
  auto params = model.stage_parameters(0);
  {
    torch::NoGradGuard no_grad;  // parameters are leaves that require grad
    params[0].fill_(2.0);        // W
    params[1].fill_(0.0);        // b
  }
  GraphSample g{torch::tensor({{1.0f}, {2.0f}, {3.0f}}), torch::tensor({{0, 1, 1, 2}, {1, 0, 2, 1}}, torch::kInt64)};
  auto y = model.forward(g);
  // h = 2x = (2, 4, 6); degrees with self loops (2, 3, 2); out_i = sum_j h_j / sqrt(d_i d_j) over j in {i} + N(i).
  const double r6 = std::sqrt(6.0);
  EXPECT_NEAR(y[0][0].item<double>(), 2.0 / 2 + 4 / r6, 1e-5);
  EXPECT_NEAR(y[1][0].item<double>(), 2 / r6 + 4.0 / 3 + 6 / r6, 1e-5);
  EXPECT_NEAR(y[2][0].item<double>(), 4 / r6 + 6.0 / 2, 1e-5);
}

TEST(Models, SqueezeExcitationMatchesHandComputation) {
  // A 2 x 2 image of two channels, x0 = (1, 2, 3, 4) and x1 = (1, 1, 1, 1); squeeze 1. The means (2.5, 1);
  // the squeeze conv W1 = (1, 1), b1 = -0.5: relu(3.5 - 0.5) = 3; the excite conv W2 = (1, -1)^T, b2 = 0:
  // (3, -3); hardsigmoid relu6(v + 3) / 6: (1, 0). Channel 0 passes unchanged, channel 1 is zeroed.
  ModelSpec m;
  m.name = "se";
  m.dataset = DatasetSpec{"tiny", "image", "image_classification", 4, 0, 2, 2, "test"};
  StageSpec se;
  se.name = "se";
  se.op = "se";
  se.squeeze = 1;
  m.stages = {se};
  derive_costs(m);
  GnnModel model(m);
  auto p = model.stage_parameters(0);  // W1, b1, W2, b2
  ASSERT_EQ(p.size(), 4u);
  {
    torch::NoGradGuard no_grad;
    p[0].copy_(torch::tensor({{1.0f, 1.0f}}));
    p[1].fill_(-0.5);
    p[2].copy_(torch::tensor({{1.0f}, {-1.0f}}));
    p[3].fill_(0.0);
  }
  GraphSample g;
  g.x = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f, 1.0f, 1.0f, 1.0f, 1.0f}).view({1, 2, 2, 2});
  const torch::Tensor y = model.forward(g);
  ASSERT_EQ(y.sizes(), g.x.sizes());
  EXPECT_LT(max_abs_diff(y[0][0], g.x[0][0]), 1e-6);
  EXPECT_LT(y[0][1].abs().max().item<double>(), 1e-6);
}

namespace {
// A model of a patch_embed (patches of 1 x 1: one token per pixel, width 1, its kernel 1 and bias 0)
// and `second` on a side x side image of one channel; `x` its pixels row by row.
ModelSpec token_model(int side, StageSpec second) {
  ModelSpec m;
  m.name = "tokens";
  m.dataset = DatasetSpec{"tiny", "image", "image_classification", side * side, 0, 1, 2, "test"};
  StageSpec embed;
  embed.name = "embed";
  embed.op = "patch_embed";
  embed.out_width = 1;
  embed.kernel = 1;
  second.name = "second";
  m.stages = {embed, second};
  derive_costs(m);
  return m;
}

// One attention head of width 1 with Q = K = V = x (one Linear 1 -> 3 of ones, no bias) and the
// projection 1: y_i = sum_j e^(x_i x_j) x_j / sum_j e^(x_i x_j) over the tokens j that i attends.
std::unique_ptr<GnnModel> identity_attention(const ModelSpec& m) {
  auto model = std::make_unique<GnnModel>(m);
  torch::NoGradGuard no_grad;
  auto e = model->stage_parameters(0);
  e[0].fill_(1.0);
  e[1].fill_(0.0);
  auto a = model->stage_parameters(1);  // Q K V weight and bias, projection weight and bias, then windows' tensors
  a[0].fill_(1.0);
  a[1].fill_(0.0);
  a[2].fill_(1.0);
  a[3].fill_(0.0);
  if (a.size() > 4) a[4].fill_(0.0);  // the relative position bias table
  return model;
}

double attended(const std::vector<double>& x, int i, const std::vector<int>& group) {
  double num = 0, den = 0;
  for (int j : group) {
    num += std::exp(x[i] * x[j]) * x[j];
    den += std::exp(x[i] * x[j]);
  }
  return num / den;
}
}  // namespace

// Global attention over the 4 tokens of a 2 x 2 image x = (0, 0, 0, 1): the three zero tokens score 0
// with everyone and average the four: 1 / 4; the fourth scores (0, 0, 0, 1) and gets e / (3 + e).
TEST(Models, AttentionMatchesHandComputation) {
  StageSpec a;
  a.op = "attention";
  a.heads = 1;
  auto model = identity_attention(token_model(2, a));
  GraphSample g;
  g.x = torch::tensor({0.0f, 0.0f, 0.0f, 1.0f}).view({1, 1, 2, 2});
  const torch::Tensor y = model->forward(g);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 4, 1}));
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[0][i][0].item<double>(), 0.25, 1e-6);
  EXPECT_NEAR(y[0][3][0].item<double>(), std::exp(1.0) / (3 + std::exp(1.0)), 1e-6);
}

// Windows of 2 x 2 on a 4 x 4 grid, x_t = t / 8 row by row. Unshifted, token (0, 0) attends its block
// {(0,0), (0,1), (1,0), (1,1)} = tokens {0, 1, 4, 5}. Shifted by 1, the grid rolls up and left: the
// rolled top-left window holds tokens (1..2, 1..2) = {5, 6, 9, 10}, all one region, which attend each
// other; the rolled bottom-right window holds the four corners, each from another region (rows and columns
// [2, 3) and [3, 4) after the roll), so the mask leaves each corner only itself: y = x there. The output
// is rolled back: token t's result is at t.
TEST(Models, ShiftedWindowAttentionMatchesHandComputation) {
  std::vector<double> x;
  for (int t = 0; t < 16; ++t) x.push_back(t / 8.0);
  GraphSample g;
  g.x = torch::arange(16, torch::kFloat32).div(8).view({1, 1, 4, 4});
  for (int shift : {0, 1}) {
    StageSpec a;
    a.op = "attention";
    a.heads = 1;
    a.window = 2;
    a.shift = shift;
    auto model = identity_attention(token_model(4, a));
    const torch::Tensor y = model->forward(g);
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 16, 1}));
    auto at = [&](int t) { return y[0][t][0].item<double>(); };
    if (shift == 0) {
      for (int t : {0, 1, 4, 5}) EXPECT_NEAR(at(t), attended(x, t, {0, 1, 4, 5}), 1e-5) << t;
      for (int t : {10, 11, 14, 15}) EXPECT_NEAR(at(t), attended(x, t, {10, 11, 14, 15}), 1e-5) << t;
    } else {
      for (int t : {5, 6, 9, 10}) EXPECT_NEAR(at(t), attended(x, t, {5, 6, 9, 10}), 1e-5) << t;
      for (int t : {0, 3, 12, 15}) EXPECT_NEAR(at(t), x[t], 1e-5) << t;
      // The rolled top-right window: rows 1..2, columns 3 and 0 of two regions: {7, 11} and {4, 8}.
      for (int t : {7, 11}) EXPECT_NEAR(at(t), attended(x, t, {7, 11}), 1e-5) << t;
      for (int t : {4, 8}) EXPECT_NEAR(at(t), attended(x, t, {4, 8}), 1e-5) << t;
    }
  }
}

// Patch merging of a 2 x 2 grid x = (1, 2; 3, 4): the blocks' tokens concatenated as Swin orders them,
// (x00, x10, x01, x11) = (1, 3, 2, 4); LayerNorm (mean 2.5, variance 1.25, eps 1e-5); a Linear of
// weights (1, 10, 100, 1000): (-1.5 + 5 - 50 + 1500) / sqrt(1.25 + 1e-5).
TEST(Models, PatchMergingMatchesHandComputation) {
  StageSpec merge;
  merge.op = "patch_merge";
  merge.out_width = 1;
  const ModelSpec m = token_model(2, merge);
  GnnModel model(m);
  {
    torch::NoGradGuard no_grad;
    auto e = model.stage_parameters(0);
    e[0].fill_(1.0);
    e[1].fill_(0.0);
    auto p = model.stage_parameters(1);  // Linear weight [1, 4]; LayerNorm weight, bias
    p[0].copy_(torch::tensor({{1.0f, 10.0f, 100.0f, 1000.0f}}));
    p[1].fill_(1.0);
    p[2].fill_(0.0);
  }
  GraphSample g;
  g.x = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({1, 1, 2, 2});
  const torch::Tensor y = model.forward(g);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_NEAR(y.item<double>(), 1453.5 / std::sqrt(1.25 + 1e-5), 1e-2);
}

TEST(Models, SplitExecutionEqualsWholeModelAtEverySplit) {
  for (const auto& name : catalog().model_names())
    for (const auto& ds : catalog().datasets_for(name)) {
      ModelSpec m = catalog().instantiate(name, ds);
      GnnModel model(m, 3);
      const GraphSample g = sample(m, m.dataset.kind == "point_cloud" ? 64 : 40);
      const torch::Tensor whole = model.forward(g);
      // One device part grown stage by stage: at each split k a copy of what crosses it (serialised and read
      // back) finishes the model, as a server would. (Running the prefix again for every k doubled the time of
      // the image models, ~77 splits of a 224 x 224 input each.)
      SplitState st = model.start(g);
      for (int k = 0; k <= m.num_stages(); ++k) {
        model.run(st, k);
        SplitState moved = deserialize(serialize(st));  // what crosses the split
        model.run(moved, m.num_stages());
        EXPECT_LT(max_abs_diff(model.output(moved), whole), 1e-5) << name << "/" << ds << " split " << k;
      }
    }
}

TEST(Models, BytesCrossingEachSplitMatchTheSpec) {
  // Full-size inputs: 1024 points for the point-cloud models; Yelp's 10000 nodes and 31350 edges for gcn.
  // Images: the CNNs' feature maps and the transformers' tokens, residual branches included.
  for (auto [name, ds] : {std::pair<std::string, std::string>{"dgcnn", "modelnet40"},
                          {"gcode", "modelnet40"},
                          {"gcn", "yelp"},
                          {"resnet18", "imagenet"},
                          {"mobilenet_v2", "imagenet"},
                          {"mobilenet_v3_small", "imagenet"},
                          {"vit_b16", "imagenet"},
                          {"swin_t", "imagenet"}}) {
    ModelSpec m = catalog().instantiate(name, ds);
    GnnModel model(m);
    GraphSample g = sample(m, m.dataset.nodes);
    if (m.dataset.kind == "graph") g.edge_index = torch::randint(0, m.dataset.nodes, {2, m.dataset.edges}, torch::kInt64);
    SplitState st = model.start(g);
    for (int k = 0; k <= m.num_stages(); ++k) {
      model.run(st, k);
      EXPECT_EQ(GnnModel::payload_bytes(st), static_cast<std::uint64_t>(m.bytes_at_split(k))) << name << " split " << k;
    }
  }
}

TEST(Models, SerialisationRoundTripsAndRejectsGarbage) {
  ModelSpec m = catalog().instantiate("gat", "mr");
  GnnModel model(m);
  SplitState st = model.start(sample(m, 17));
  model.run(st, 1);
  const std::string bytes = serialize(st);
  SplitState back = deserialize(bytes);
  EXPECT_EQ(back.next_stage, 1);
  ASSERT_EQ(back.tensors.size(), st.tensors.size());
  for (const auto& [id, t] : st.tensors) EXPECT_TRUE(torch::equal(back.tensors.at(id), t));
  EXPECT_TRUE(torch::equal(back.edge_index, st.edge_index));
  EXPECT_THROW(deserialize(bytes.substr(0, bytes.size() - 3)), std::invalid_argument);  // truncated
  EXPECT_THROW(deserialize("XXXX" + bytes.substr(4)), std::invalid_argument);           // bad magic
  EXPECT_THROW(deserialize(bytes + "!"), std::invalid_argument);                        // trailing bytes
  std::string huge = bytes;
  // Version 2: magic (4), version (1), next stage (4), real nodes (8), then the tensor count.
  huge[17] = '\x7f';  // 127 tensors claimed: the data runs out
  EXPECT_THROW(deserialize(huge), std::invalid_argument);
  std::string nodes = bytes;
  nodes[16] = '\x7f';  // real node count beyond 2^40
  EXPECT_THROW(deserialize(nodes), std::invalid_argument);
}

TEST(Models, FeatureDecompositionGivesTheSameOutputs) {
  for (const char* name : {"gcn", "gat", "sage"}) {
    ModelSpec m = catalog().instantiate(name, "siot");
    GnnModel model(m, 5);
    const GraphSample g = sample(m, 300, 8);
    const torch::Tensor plain = model.forward(g);
    for (int p : {2, 4, 7}) {
      model.set_feature_chunks(p);
      EXPECT_LT(max_abs_diff(model.forward(g), plain), 1e-5) << name << " P=" << p;
    }
  }
}

TEST(Models, DevicePlacementKeepsOutputsAndRefusesWhatCannotRun) {
  // to(CPU) on a CPU model changes nothing; every tensor a stage makes lives where its input does (a
  // CUDA LibTorch runs the same code on the GPU: not testable here, no GPU).
  for (const char* name : {"gcn", "gat", "sage"}) {
    ModelSpec m = catalog().instantiate(name, "siot");
    GnnModel model(m, 5);
    const GraphSample g = sample(m, 200, 3);
    const torch::Tensor before = model.forward(g);
    model.to(torch::kCPU);
    EXPECT_EQ(max_abs_diff(model.forward(g), before), 0) << name;
  }
  ModelSpec m = catalog().instantiate("gcn", "siot");
  GnnModel model(m, 5);
  // An input on another device than the model is refused naming both (the meta device exists without CUDA).
  GraphSample elsewhere = sample(m, 20, 1);
  elsewhere.x = elsewhere.x.to(torch::kMeta);
  try {
    model.start(elsewhere);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input on meta, model on cpu"), std::string::npos) << e.what();
  }
  // INT8 variants run on LibTorch's CPU quantized engines only: refused before anything moves.
  GnnModel int8(catalog().instantiate("gcn@int8", "siot"), 5);
  EXPECT_THROW(int8.to(torch::Device(torch::kCUDA, 0)), std::invalid_argument);
  EXPECT_TRUE(int8.device().is_cpu());
}

// On a GPU (a CUDA LibTorch with a visible GPU: scripts/gpu_check.sh runs it there) every model computes
// on it what it computes on the CPU, split at every stage: the state moved between the two at a split
// (what a cpu/gpu placement does) changes nothing. Skipped, saying so, where there is no GPU.
TEST(GpuModels, EveryModelComputesOnTheGpuWhatItComputesOnTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU here (torch::cuda::is_available() is false)";
  const torch::Device gpu(torch::kCUDA, 0);
  for (const auto& [name, dataset] :
       std::vector<std::pair<const char*, const char*>>{{"gcn", "siot"}, {"gat", "siot"}, {"sage", "siot"}, {"dgcnn", "modelnet40"}, {"gcn", "mr"}}) {
    ModelSpec m = catalog().instantiate(name, dataset);
    GnnModel cpu_model(m, 5), gpu_model(m, 5);
    gpu_model.to(gpu);
    const GraphSample g = sample(m, 200, 3);
    const torch::Tensor want = cpu_model.forward(g);
    GraphSample on_gpu = g;
    on_gpu.x = on_gpu.x.to(gpu);
    if (on_gpu.edge_index.defined()) on_gpu.edge_index = on_gpu.edge_index.to(gpu);
    const torch::Tensor got = gpu_model.forward(on_gpu).cpu();
    // Float32 sums in another order (GPU reductions): agreement to 1e-4 of the output's scale.
    const double scale = std::max(1.0, want.abs().max().item<double>());
    EXPECT_LE(max_abs_diff(got, want), 1e-4 * scale) << name << "/" << dataset;
    for (int k = 1; k < m.num_stages(); ++k) {  // CPU for [0, k), GPU for [k, n): the state crosses once
      SplitState st = cpu_model.start(g);
      cpu_model.run(st, k);
      SplitState moved = st;
      for (auto& [producer, t] : moved.tensors) t = t.to(gpu);
      if (moved.edge_index.defined()) moved.edge_index = moved.edge_index.to(gpu);
      gpu_model.run(moved, m.num_stages());
      EXPECT_LE(max_abs_diff(gpu_model.output(moved).cpu(), want), 1e-4 * scale) << name << "/" << dataset << " split at " << k;
    }
  }
}

// A device's stages as segments on two processors (models/model_runner.hpp run_segment), both on the CPU
// here (two slots, two copies of the model: what a test of local[cpu:0-j,gpu:j-k] does where no GPU
// exists): every way of cutting [0, k) in two gives the bytes the whole run gives, to the bit (the
// same operators on the same CPU; the state is handed over, not copied). The state kept between the
// segments is dropped after the second, and by forget().
TEST(DeviceModelRunner, SegmentsOnTwoCpuSlotsGiveTheWholeRunsBytes) {
  for (const auto& [name, dataset] : std::vector<std::pair<const char*, const char*>>{{"gcn", "siot"}, {"sage", "siot"}}) {
    const ModelSpec m = catalog().instantiate(name, dataset);
    DeviceModelRunner whole(m, 3, ""), two(m, 3, "", {"cpu", "cpu"}, {"cpu", "gpu"});
    const int n = m.num_stages();
    for (int k = 2; k <= n; ++k)
      for (int j = 1; j < k; ++j) {
        const std::int64_t r = 10 * k + j;
        const std::string want = whole.run_stages(r, k);
        EXPECT_EQ(two.run_segment(r, 0, 0, j, k), "") << "the first segment keeps its state";
        EXPECT_EQ(two.states_kept(), 1u);
        const std::string got = two.run_segment(r, 1, j, k, k);
        EXPECT_EQ(got, want) << name << " [0," << j << ") cpu, [" << j << "," << k << ") gpu";
        EXPECT_EQ(got.empty(), k == n) << "a local run's result stays on the device";
        EXPECT_EQ(two.states_kept(), 0u);
      }
    // A request that fails between its segments: forget() drops its state; its next segment refuses.
    EXPECT_EQ(two.run_segment(99, 0, 0, 1, n), "");
    two.forget(99);
    EXPECT_EQ(two.states_kept(), 0u);
    EXPECT_THROW(two.run_segment(99, 1, 1, n, n), std::logic_error);
  }
}

// A processor without a LibTorch device here: its segment is refused naming it; a CUDA device where
// there is no GPU is refused when the runner is built, naming the processor and why.
TEST(DeviceModelRunner, RefusesAProcessorWithoutADeviceNamingIt) {
  const ModelSpec m = catalog().instantiate("gcn", "siot");
  DeviceModelRunner runner(m, 3, "", {"cpu", ""}, {"cpu", "gpu"});
  try {
    runner.run_segment(0, 1, 0, 1, 2);
    FAIL() << "a segment on an unmapped processor ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("processor 'gpu' has no LibTorch device"), std::string::npos) << e.what();
  }
  EXPECT_NE(torch_device_problem("tpu:3"), "");
  EXPECT_EQ(torch_device_problem("cpu"), "");
  if (cuda_available()) GTEST_SKIP() << "this machine has a GPU: the no-GPU refusal cannot be checked here";
  try {
    DeviceModelRunner no_gpu(m, 3, "", {"cpu", "cuda:0"}, {"cpu", "gpu"});
    FAIL() << "a CUDA slot was accepted without a GPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("processor 'gpu' on cuda:0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is_available() is false"), std::string::npos) << e.what();
  }
}

// On a GPU: the device's [0, j) on the CPU, [j, k) on the GPU (the copy between them in the second
// segment), as the real runtime runs local[cpu:0-j,gpu:j-n]: the state at the split agrees with the CPU's
// run to 1e-4 of its scale (GPU reductions sum in another order). Skipped where there is no GPU.
TEST(GpuModels, SegmentsOnTheCpuThenTheGpuGiveTheCpusResult) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU here (torch::cuda::is_available() is false)";
  for (const auto& [name, dataset] : std::vector<std::pair<const char*, const char*>>{{"gcn", "siot"}, {"dgcnn", "modelnet40"}}) {
    const ModelSpec m = catalog().instantiate(name, dataset);
    DeviceModelRunner cpu(m, 3, ""), placed(m, 3, "", {"cpu", "cuda:0"}, {"cpu", "gpu"});
    const int n = m.num_stages();
    for (int k = 2; k < n; ++k) {
      const SplitState want = deserialize(cpu.run_stages(k, k));
      EXPECT_EQ(placed.run_segment(k, 0, 0, 1, k), "");
      const SplitState got = deserialize(placed.run_segment(k, 1, 1, k, k));
      ASSERT_EQ(got.tensors.size(), want.tensors.size());
      for (const auto& [id, t] : want.tensors) {
        if (t.scalar_type() != torch::kFloat32) continue;
        const double scale = std::max(1.0, t.abs().max().item<double>());
        EXPECT_LE(max_abs_diff(got.tensors.at(id), t), 1e-4 * scale) << name << " split " << k << " tensor " << id;
      }
    }
    EXPECT_EQ(placed.states_kept(), 0u);
  }
}

TEST(Models, BadInputsAreRejectedWithTheReason) {
  ModelSpec m = catalog().instantiate("gcn", "yelp");
  GnnModel model(m);
  GraphSample wrong = sample(m, 10);
  wrong.x = torch::randn({10, 7});
  try {
    model.start(wrong);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("expects 100"), std::string::npos) << e.what();
  }
  GraphSample no_graph = sample(m, 10);
  no_graph.edge_index = torch::Tensor();
  EXPECT_THROW(model.start(no_graph), std::invalid_argument);
  SplitState st = model.start(sample(m, 10));
  EXPECT_THROW(model.run(st, 9), std::out_of_range);
  EXPECT_THROW(model.set_feature_chunks(0), std::invalid_argument);
}

TEST(Datasets, GeneratorsHaveTheDocumentedStatistics) {
  for (const auto& name : catalog().dataset_names()) {
    std::string model;  // a model defined for it
    for (const auto& m : catalog().model_names()) {
      const auto& ds = catalog().datasets_for(m);
      if (model.empty() && std::find(ds.begin(), ds.end(), name) != ds.end()) model = m;
    }
    ASSERT_FALSE(model.empty()) << name;
    const DatasetSpec& d = catalog().instantiate(model, name).dataset;
    LabelledSample s = generate_sample(d, 1, 3), again = generate_sample(d, 1, 3), other = generate_sample(d, 2, 3);
    EXPECT_TRUE(torch::equal(s.sample.x, again.sample.x)) << name;  // deterministic in (seed, index)
    EXPECT_FALSE(torch::equal(s.sample.x, other.sample.x)) << name;
    EXPECT_LT(s.label, d.classes);
    if (d.kind == "image") {
      EXPECT_EQ(s.sample.x.sizes(), (std::vector<int64_t>{1, d.features, 224, 224}));  // ImageNet at 224 x 224
      EXPECT_NEAR(s.sample.x.std().item<double>(), 1.0, 0.01);                         // standard normal pixels
      EXPECT_EQ(generate_sample(d, 1, 1003).label, 3);                                 // class = index mod 1000
    } else if (d.kind == "point_cloud") {
      EXPECT_EQ(s.sample.x.sizes(), (std::vector<int64_t>{1, d.nodes, d.features}));
      EXPECT_LE(s.sample.x.norm(2, 2).max().item<double>(), 1.0 + 1e-5);  // inside the unit ball
      EXPECT_EQ(generate_sample(d, 1, 45).label, 5);                      // class = index mod 40
    } else {
      EXPECT_EQ(s.sample.x.sizes(), (std::vector<int64_t>{d.nodes, d.features}));
      const auto& ei = s.sample.edge_index;
      ASSERT_EQ(ei.size(1), d.edges) << name;
      EXPECT_GE(ei.min().item<int64_t>(), 0);
      EXPECT_LT(ei.max().item<int64_t>(), d.nodes);
      EXPECT_EQ((ei[0] == ei[1]).sum().item<int64_t>(), 0);  // no self loops
      if (d.nodes > 64) {
        // Preferential attachment: a heavy tail, the largest degree far above the mean.
        auto deg = torch::zeros({d.nodes}).index_add_(0, ei[1], torch::ones({d.edges}));
        EXPECT_GT(deg.max().item<double>(), 5 * deg.mean().item<double>()) << name;
      }
    }
  }
}

TEST(Datasets, FilesBecomeModelInputs) {
  PointCloudFile p;
  p.clouds = 2;
  p.points = 1100;
  p.data.assign(2 * 1100 * 3, 0.25f);
  p.labels = {1, 2};
  GraphSample g = sample_from_file(p, 1, 1024);
  EXPECT_EQ(g.x.sizes(), (std::vector<int64_t>{1, 1024, 3}));
  ModelSpec m = catalog().instantiate("dgcnn", "modelnet40");
  EXPECT_EQ(GnnModel(m).forward(g).sizes(), (std::vector<int64_t>{1, 40}));
  EXPECT_THROW(sample_from_file(p, 2), std::invalid_argument);
  EXPECT_THROW(sample_from_file(p, 0, 2048), std::invalid_argument);
}

TEST(Models, GraphCachesNeverServeAnotherGraph) {
  // PreG/CacheG keep a graph's normalisation for the next run. They were keyed by the edge tensor's
  // address and size, so a new graph with as many edges, allocated where a freed one was (every
  // generated MR sample has 68 edges), got the old graph's normalisation. Each sample through one
  // long-lived model must equal a fresh model's output.
  for (const std::string variant : {"", "@dense_mask", "@symmetric"}) {
    const ModelSpec& m = catalog().spec("gcn" + variant, "mr");
    GnnModel reused(m, 4);
    for (int i = 0; i < 6; ++i) {
      const GraphSample g = generate_sample(m.dataset, 9, i).sample;  // freed at the end of each round
      const auto y = reused.forward(g);
      EXPECT_LT(max_abs_diff(y, GnnModel(m, 4).forward(g)), 1e-6) << "gcn" << variant << " sample " << i;
    }
  }
}
