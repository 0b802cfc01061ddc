// The MEDN paper's modules (models/paper_modules.hpp): features and work worked by hand, sampling
// inside the paper's ranges and the caller's bounds, and instances that run.
#include <gtest/gtest.h>

#include <set>

#include "models/paper_modules.hpp"

using namespace coinfer;
using namespace coinfer::models;

TEST(PaperModules, NamesRoundTripInTableFivesOrder) {
  ASSERT_EQ(paper_modules().size(), 9u);
  EXPECT_STREQ(paper_module_name(paper_modules().front()), "avgpool");
  EXPECT_STREQ(paper_module_name(paper_modules().back()), "maxpool");
  for (PaperModule m : paper_modules()) EXPECT_EQ(paper_module_named(paper_module_name(m)), m);
  EXPECT_FALSE(paper_module_named("conv+pool").has_value());
}

TEST(PaperModules, ConvolutionFeaturesByHand) {
  // N 2, L 8, C_i 3, C_o 4, K 3, S 2, padding 1: output (8 + 2 - 3) / 2 + 1 = 4.
  PaperModuleConfig c{PaperModule::conv, 2, 8, 3, 4, 3, 2};
  EXPECT_EQ(paper_module_output_size(c), 4);
  EXPECT_EQ(paper_module_input_elements(c), 2 * 3 * 8 * 8);  // N_d = 384
  EXPECT_EQ(paper_module_weights(c), 4 * 3 * 3 * 3 + 4);     // N_m = 108 weights + 4 biases
  // 2 x output elements (2 x 4 x 4 x 4 = 128) x C_i K^2 (27) = 6912.
  EXPECT_EQ(paper_module_flops(c), 6912);
  // Bytes: 4 x (384 input + 128 output + 112 weights) = 2496.
  EXPECT_EQ(paper_module_bytes(c), 2496);
  const FeatureLayout f = paper_module_features(PaperModule::conv);
  EXPECT_EQ(f.names, (std::vector<std::string>{"N", "L", "C_i", "C_o", "K", "S", "M", "U", "N_d", "N_m"}));
  EXPECT_EQ(f.classes, (std::vector<std::string>{"sampling", "sampling", "sampling", "sampling", "sampling", "sampling", "measurable", "measurable",
                                                 "inferable", "inferable"}));
  EXPECT_EQ(paper_module_feature_values(c, 1e9, 0.25), (std::vector<double>{2, 8, 3, 4, 3, 2, 1e9, 0.25, 384, 112}));
  // With batch normalisation: no bias, a scale and a shift per output channel: 108 + 8; bn adds 2 FLOPs
  // per output element and ReLU 1: 6912 + 256 + 128.
  c.module = PaperModule::conv_bn_relu;
  EXPECT_EQ(paper_module_weights(c), 116);
  EXPECT_EQ(paper_module_flops(c), 6912 + 256 + 128);
}

TEST(PaperModules, PoolLinearAndBatchNormByHand) {
  // maxpool: N 1, C_i 2, L 7, K 3, S 1 -> output 7; no weights, so no N_m feature.
  PaperModuleConfig p{PaperModule::maxpool, 1, 7, 2, 0, 3, 1};
  EXPECT_EQ(paper_module_output_size(p), 7);
  EXPECT_EQ(paper_module_weights(p), 0);
  EXPECT_EQ(paper_module_flops(p), 1 * 2 * 49 * 9);
  EXPECT_EQ(paper_module_features(PaperModule::maxpool).names, (std::vector<std::string>{"N", "C_i", "L", "K", "S", "M", "U", "N_d"}));
  // linear: N 5, C_i 10, C_o 3: N_d = 50, N_m = 30 + 3, FLOPs 2 x 5 x 10 x 3.
  PaperModuleConfig l{PaperModule::linear, 5, 0, 10, 3, 0, 0};
  EXPECT_EQ(paper_module_input_elements(l), 50);
  EXPECT_EQ(paper_module_weights(l), 33);
  EXPECT_EQ(paper_module_flops(l), 300);
  // bn: N 2, L 4, C_i 3: 2 parameters per channel; 2 FLOPs per element (96 elements).
  PaperModuleConfig b{PaperModule::bn, 2, 4, 3, 0, 0, 0};
  EXPECT_EQ(paper_module_weights(b), 6);
  EXPECT_EQ(paper_module_flops(b), 192);
  EXPECT_EQ(paper_module_features(PaperModule::bn_relu).names, (std::vector<std::string>{"N", "L", "C_i", "M", "U", "N_d", "N_m"}));
}

TEST(PaperModules, SamplesStayInThePapersRangesAndTheBounds) {
  const std::set<int> sizes = {224, 112, 56, 32, 28, 27, 14, 13, 8, 7}, kernels = {1, 3, 5, 7, 9}, strides = {1, 2, 4};
  PaperModuleBounds bounds;
  bounds.max_flops = 5e7;
  bounds.max_bytes = 8 * 1048576.0;
  for (PaperModule m : paper_modules()) {
    RandomStream r(1, StreamPurpose::test, 11);
    RejectionCounts counts;
    std::set<int> seen_n;
    for (int i = 0; i < 300; ++i) {
      const PaperModuleConfig c = sample_paper_module(m, r, bounds, &counts);
      EXPECT_LE(paper_module_flops(c), bounds.max_flops);
      EXPECT_LE(paper_module_bytes(c), bounds.max_bytes);
      EXPECT_TRUE(c.n >= 1 && c.n <= 64) << c.n;
      EXPECT_TRUE(c.c_in >= 3 && c.c_in <= 512) << c.c_in;
      if (m != PaperModule::linear) {
        EXPECT_TRUE(sizes.count(c.l)) << c.l;
      }
      if (has_convolution(m) || is_pool(m)) {
        EXPECT_TRUE(kernels.count(c.k) && strides.count(c.s));
      }
      if (has_convolution(m) || m == PaperModule::linear) {
        EXPECT_TRUE(c.c_out >= 3 && c.c_out <= 512) << c.c_out;
      }
      seen_n.insert(c.n);
    }
    EXPECT_EQ(counts.drawn - counts.rejected, 300);
    EXPECT_GT(seen_n.size(), 10u) << paper_module_name(m);  // not stuck on one corner
  }
  // Same stream, same configurations.
  RandomStream a(3, StreamPurpose::test, 1), b(3, StreamPurpose::test, 1);
  const auto x = sample_paper_module(PaperModule::conv, a, bounds), y = sample_paper_module(PaperModule::conv, b, bounds);
  EXPECT_EQ(x.c_in, y.c_in);
  EXPECT_EQ(x.k, y.k);
  // Bounds no configuration meets.
  bounds.max_flops = 1;
  RandomStream c(3, StreamPurpose::test, 2);
  EXPECT_THROW(sample_paper_module(PaperModule::conv, c, bounds), std::runtime_error);
}

TEST(PaperModules, EveryModuleRuns) {
  for (PaperModule m : paper_modules()) {
    PaperModuleConfig c{m, 2, 8, 3, 0, 0, 0};
    if (has_convolution(m) || m == PaperModule::linear) c.c_out = 4;
    if (has_convolution(m) || is_pool(m)) c.k = 3, c.s = 2;
    PaperModuleInstance inst(c);
    EXPECT_GT(inst.forward(), 0) << paper_module_name(m);
  }
  EXPECT_THROW(PaperModuleInstance(PaperModuleConfig{PaperModule::conv, 2, 8, 3, 0, 3, 1}), std::invalid_argument);  // no C_o
}
