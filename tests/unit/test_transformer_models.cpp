// Transformers (models/README.md "Transformers"): patch embedding, LayerNorm, self-attention (global and
// in shifted windows), the MLP and patch merging, their costs worked out by hand; what the loader and the
// cost model refuse; the shipped ViT-B/16 and Swin-T against their published sizes.
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

// A 4 x 4 "image" of 2 channels, 3 classes.
DatasetSpec tiny_images() { return coinfer::test::tiny_images(16, 2, 3); }

StageSpec stage(const std::string& name, const std::string& op, std::vector<int> inputs = {}) {
  StageSpec s;
  s.name = name;
  s.op = op;
  s.inputs = std::move(inputs);
  return s;
}

StageSpec patch_embed(int out, int patch, bool class_token) {
  StageSpec s = stage("embed", "patch_embed");
  s.out_width = out;
  s.kernel = patch;
  s.class_token = class_token;
  return s;
}

StageSpec attention(int heads, int window = 0, int shift = 0, std::vector<int> inputs = {}) {
  StageSpec s = stage("attn", "attention", std::move(inputs));
  s.heads = heads;
  s.window = window;
  s.shift = shift;
  return s;
}

double operator_flops(const StageSpec& s) {
  double f = 0;
  for (const auto& o : s.operators) f += o.flops;
  return f;
}

// derive_costs refuses `m`, naming `what`.
void expect_refused(ModelSpec m, const std::string& what) {
  try {
    derive_costs(m);
    FAIL() << "taken; expected a refusal naming '" << what << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

}  // namespace

// ViT's layout on the 4 x 4 x 2 image, patches of 2 x 2, width 4, 2 heads, MLP hidden 8:
// - patch_embed: 4 patches, each 4 outputs of 2 x 2 x 2 inputs: 2 x 4 x 4 x 8 = 256 FLOPs, bias 16, the
//   position embedding added to 5 tokens (the class token prepended) x 4 = 20: 292. Weights: kernel 4 x 2 x
//   4 = 32, bias 4, class token 4, position 5 x 4 = 20: 60 floats.
// - layernorm: 8 x 5 x 4 = 160 FLOPs; weight and bias 8 floats.
// - attention (T = 5, C = 4, h = 2): Q, K, V 2 x 5 x 4 x 12 = 480; the queries scaled 20; Q K^T 2 x 5 x 5
//   x 4 = 200; softmax 5 x 2 x 5 x 5 = 250; by V 200; the projection 2 x 5 x 4 x 4 = 160: 1,310 FLOPs.
//   Weights 3 x 16 + 12 + 16 + 4 = 80 floats.
// - the residual sum 20; mlp 2 x 5 x 4 x 8 = 320, GELU 5 x 5 x 8 = 200, 320 back: 840; weights 32 + 8 +
//   32 + 4 = 76 floats.
// - the class token's row: no FLOPs, one row of 4; fc 4 -> 3: 24.
// Split 3 (patch_embed, layernorm, attention on the device): the attention's 5 x 4 floats and the
// residual (patch_embed's 5 x 4) cross: 160 B. The attention's peak memory as LibTorch holds it at the
// product with V: 7 T C = 140 floats (Q, K, V, the scaled queries, the copies of K^T and V, the product)
// beside the scores and their softmax, 2 h T T = 100: 960 B.
TEST(TransformerModels, GlobalAttentionBlockWorkedOutByHand) {
  ModelSpec m;
  m.name = "t";
  m.dataset = tiny_images();
  m.stages = {patch_embed(4, 2, true), stage("ln", "layernorm"), attention(2), stage("sum", "add", {2, 0})};
  StageSpec mlp = stage("mlp", "mlp");
  mlp.hidden = 8;
  StageSpec cls = stage("cls", "pool");
  cls.pool_mode = "class_token";
  StageSpec fc = stage("fc", "fc");
  fc.out_width = 3;
  m.stages.insert(m.stages.end(), {mlp, cls, fc});
  derive_costs(m);
  const auto& s = m.stages;
  EXPECT_DOUBLE_EQ(s[0].out_rows, 5);
  EXPECT_DOUBLE_EQ(s[0].flops, 292);
  EXPECT_DOUBLE_EQ(s[0].weight_bytes, 60 * 4);
  EXPECT_DOUBLE_EQ(s[1].flops, 160);
  EXPECT_DOUBLE_EQ(s[1].weight_bytes, 8 * 4);
  EXPECT_DOUBLE_EQ(s[2].flops, 1310);
  EXPECT_DOUBLE_EQ(s[2].weight_bytes, 80 * 4);
  EXPECT_DOUBLE_EQ(s[2].out_rows, 5);
  EXPECT_DOUBLE_EQ(s[3].flops, 20);
  EXPECT_DOUBLE_EQ(s[4].flops, 840);
  EXPECT_DOUBLE_EQ(s[4].weight_bytes, 76 * 4);
  EXPECT_DOUBLE_EQ(s[5].flops, 0);
  EXPECT_DOUBLE_EQ(s[5].out_rows, 1);
  EXPECT_DOUBLE_EQ(s[5].out_bytes, 16);
  EXPECT_DOUBLE_EQ(s[6].flops, 24);
  EXPECT_DOUBLE_EQ(m.bytes_at_split(3), 160);
  EXPECT_DOUBLE_EQ(s[2].memory_bytes, 960);
  for (const auto& st : s) EXPECT_DOUBLE_EQ(operator_flops(st), st.flops) << st.name;
  // The attention's matrix products are dense (480 + 200 + 200 + 160), its softmax a reduction.
  double dense = 0, reduction = 0;
  for (const auto& o : s[2].operators) {
    if (o.cls == OperatorClass::dense) dense += o.flops;
    if (o.cls == OperatorClass::reduction) reduction += o.flops;
  }
  EXPECT_DOUBLE_EQ(dense, 1040);
  EXPECT_DOUBLE_EQ(reduction, 250);
}

// Swin's layout on the same image, patches of 1 (16 tokens on a 4 x 4 grid), width 4, 2 heads:
// - patch_embed without a class token: 2 x 16 x 4 x 2 = 256 + bias 64 = 320 FLOPs; 8 + 4 weights.
// - attention in 2 x 2 windows shifted by 1 (W = 4 tokens attended): Q, K, V 2 x 16 x 4 x 12 = 1,536;
//   scaling 64; Q K^T 2 x 16 x 4 x 4 = 512; the bias, the mask and the softmax (1 + 1 + 5) x 2 x 16 x 4 =
//   896; by V 512; the projection 2 x 16 x 16 = 512: 4,032. Weights 80 + the bias table (2 x 2 - 1)^2 x
//   2 heads = 18: 98 floats.
// - a window of 5 on the 4 x 4 grid is the grid, unshifted (shift 2 dropped): W = 16: 1,536 + 64 + 2 x 16
//   x 16 x 4 = 2,048, (1 + 5) x 2 x 16 x 16 = 3,072, 2,048, 512: 9,280. Its table (2 x 4 - 1)^2 x 2 = 98:
//   178 floats.
// - patch_merge 4 -> 8: LayerNorm over 16 x 4 = 512, Linear 4 tokens x 16 -> 8: 2 x 4 x 16 x 8 = 1,024:
//   1,536 FLOPs; 4 tokens of 8; weights 2 x 16 + 16 x 8 = 160 floats.
// - the mean over 4 tokens of 8: 32 FLOPs.
// Peak memory of the shifted windows: 7 T C = 448 floats, the scores and softmax 2 h T W = 256, the
// partitioned and the rolled copies 64 each: 832 floats, 3,328 B; of the window that is the grid, no
// copies and W = 16: 448 + 1,024 = 1,472 floats, 5,888 B.
TEST(TransformerModels, ShiftedWindowsAndPatchMergingWorkedOutByHand) {
  ModelSpec m;
  m.name = "t";
  m.dataset = tiny_images();
  StageSpec merge = stage("merge", "patch_merge");
  merge.out_width = 8;
  StageSpec pool = stage("pool", "pool");
  pool.pool_mode = "mean";
  m.stages = {patch_embed(4, 1, false), attention(2, 2, 1), attention(2, 5, 2, {1}), merge, pool};
  derive_costs(m);
  const auto& s = m.stages;
  EXPECT_DOUBLE_EQ(s[0].out_rows, 16);
  EXPECT_DOUBLE_EQ(s[0].flops, 320);
  EXPECT_DOUBLE_EQ(s[0].weight_bytes, 12 * 4);
  EXPECT_DOUBLE_EQ(s[1].flops, 4032);
  EXPECT_DOUBLE_EQ(s[1].weight_bytes, 98 * 4);
  EXPECT_DOUBLE_EQ(s[2].flops, 9280);
  EXPECT_DOUBLE_EQ(s[2].weight_bytes, 178 * 4);
  EXPECT_DOUBLE_EQ(s[3].flops, 1536);
  EXPECT_DOUBLE_EQ(s[3].out_rows, 4);
  EXPECT_EQ(s[3].out_width, 8);
  EXPECT_DOUBLE_EQ(s[3].weight_bytes, 160 * 4);
  EXPECT_DOUBLE_EQ(s[4].flops, 32);
  EXPECT_DOUBLE_EQ(s[1].memory_bytes, 3328);
  EXPECT_DOUBLE_EQ(s[2].memory_bytes, 5888);
  for (const auto& st : s) EXPECT_DOUBLE_EQ(operator_flops(st), st.flops) << st.name;
  // The shifted windows roll the grid there and back; the unshifted ones do not.
  auto rolls = [](const StageSpec& st) {
    int n = 0;
    for (const auto& o : st.operators) n += o.what.find("roll") != std::string::npos;
    return n;
  };
  EXPECT_EQ(rolls(s[1]), 2);
  EXPECT_EQ(rolls(s[2]), 0);
}

TEST(TransformerModels, ShapesThatCannotRunAreRefusedNamingTheStage) {
  ModelSpec m;
  m.name = "t";
  m.dataset = tiny_images();
  StageSpec cls = stage("cls", "pool");
  cls.pool_mode = "class_token";
  StageSpec conv = stage("conv", "conv");
  conv.out_width = 4;
  conv.kernel = 1;
  StageSpec merge = stage("merge", "patch_merge");
  merge.out_width = 8;
  m.stages = {attention(2)};  // on the image's pixels: no tokens yet
  expect_refused(m, "needs tokens");
  m.stages = {patch_embed(4, 1, false), conv};  // a conv on tokens
  expect_refused(m, "its input is tokens");
  m.stages = {patch_embed(4, 1, false), cls};  // no class token to take
  expect_refused(m, "class_token: true");
  m.stages = {patch_embed(4, 1, false), attention(2, 3)};  // 3 x 3 windows on a 4 x 4 grid
  expect_refused(m, "must divide");
  m.stages = {patch_embed(4, 1, false), attention(2, 0, 1)};  // a shift without windows
  expect_refused(m, "a shift needs windows");
  m.stages = {patch_embed(4, 1, false), attention(3)};  // 3 heads of a width of 4
  expect_refused(m, "multiple of heads");
  m.stages = {patch_embed(4, 3, false)};  // 3 x 3 patches of a 4 x 4 image
  expect_refused(m, "must divide");
  m.stages = {patch_embed(4, 2, true), merge};  // 5 tokens (the class token's) are no square grid
  expect_refused(m, "square");
  m.stages = {patch_embed(4, 2, false), stage("pool", "pool"), merge};  // merging pooled tokens
  expect_refused(m, "its input was pooled");
  m.dataset.kind = "graph";
  m.stages = {patch_embed(4, 1, false)};
  expect_refused(m, "needs an image dataset");
}

// A spec file's transformer keys belong to their ops: each elsewhere is refused at load naming the
// stage and the key; an mlp's activation is GELU.
TEST(TransformerModels, KeysOutsideTheirOpsAreRefusedByTheLoader) {
  const std::string dir = coinfer::test::temp_dir("transformer-spec");
  std::filesystem::create_directories(dir + "/specs");
  std::filesystem::copy_file(std::string(COINFER_SOURCE_DIR) + "/models/datasets.yaml", dir + "/datasets.yaml");
  auto write_spec = [&](const std::string& second) {
    std::ofstream(dir + "/specs/t.yaml") << "name: t\ndatasets: [imagenet]\nstages:\n  - {name: e, op: patch_embed, out: 8, kernel: 16}\n  - "
                                         << second << "\n";
  };
  write_spec("{name: a, op: attention, heads: 2, window: 7, shift: 3}");
  EXPECT_NO_THROW(ModelCatalog::load(dir));
  for (auto [stage, key] : {std::pair<std::string, std::string>{"{name: l, op: layernorm, hidden: 4}", "stages[1].hidden"},
                            {"{name: l, op: layernorm, window: 7}", "stages[1].window"},
                            {"{name: l, op: layernorm, shift: 1}", "stages[1].shift"},
                            {"{name: l, op: layernorm, class_token: true}", "stages[1].class_token"},
                            {"{name: m, op: mlp, hidden: 4, act: relu}", "stages[1].act"},
                            {"{name: a, op: attention, heads: 2, window: 65}", "stages[1].window"}}) {
    write_spec(stage);
    try {
      ModelCatalog::load(dir);
      FAIL() << stage << " was taken";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

// The shipped specs against torchvision's networks: ViT-B/16 86,567,656 parameters and 17.56 G
// multiply-adds, Swin-T 28,288,354 and 4.49 G (SparOA's Table 2: 86M / 17.6 and 28M / 4.5 GFLOPs, its
// "GFLOPs" multiply-adds). Their shapes: ViT's 197 tokens of 768 (196 patches and the class token), 12
// blocks of six stages; Swin's 56 x 56 tokens of 96 down to 7 x 7 of 768, 12 blocks.
TEST(TransformerModels, ShippedTransformersHaveTheirPublishedSizes) {
  auto sizes = [](const ModelSpec& m) {
    double w = 0, macs = 0;
    for (const auto& s : m.stages) {
      w += s.weight_bytes;
      for (const auto& o : s.operators)
        if (o.cls == OperatorClass::dense) macs += o.flops / 2;
    }
    return std::make_pair(w / 4, macs / 1e9);
  };
  const ModelSpec& vit = catalog().spec("vit_b16", "imagenet");
  const auto [vit_params, vit_macs] = sizes(vit);
  EXPECT_DOUBLE_EQ(vit_params, 86567656);
  EXPECT_NEAR(vit_macs, 17.56, 0.01);
  EXPECT_EQ(vit.num_stages(), 1 + 12 * 6 + 3);
  EXPECT_DOUBLE_EQ(vit.stages[0].out_rows, 197);
  EXPECT_EQ(vit.stages[0].out_width, 768);
  EXPECT_EQ(vit.stages.back().out_width, 1000);
  const ModelSpec& swin = catalog().spec("swin_t", "imagenet");
  const auto [swin_params, swin_macs] = sizes(swin);
  EXPECT_DOUBLE_EQ(swin_params, 28288354);
  EXPECT_NEAR(swin_macs, 4.49, 0.01);
  EXPECT_EQ(swin.num_stages(), 2 + 12 * 6 + 3 + 3);
  EXPECT_DOUBLE_EQ(swin.stages[0].out_rows, 56 * 56);
  double last_tokens = 0;
  for (const auto& s : swin.stages)
    if (s.op == "attention") last_tokens = s.out_rows;
  EXPECT_DOUBLE_EQ(last_tokens, 7 * 7);
  EXPECT_EQ(swin.stages.back().out_width, 1000);
}
