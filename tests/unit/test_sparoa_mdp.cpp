// SparOA's operator MDP (sched/sparoa_mdp.hpp): transitions, observations and rewards
// worked out by hand on the two-processor board of test_operator_placement.cpp, and a search over random
// boards and actions that the rewards always sum to minus the placement's latency.
#include <gtest/gtest.h>

#include <cmath>

#include "core/random_stream.hpp"
#include "sched/operator_placement.hpp"
#include "sched/sparoa_mdp.hpp"
#include "sched/sparoa_thresholds.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

DeviceHardware board(double copy_ms = 0) { return test::gpu_cpu_board_with_copies(copy_ms); }

enum F { rho, rho_known, intensity, n_in, n_out, m_gpu, m_cpu, o_switch, prev_share, position, s_hat, c_hat, thresholds_known, split_share };

}  // namespace

TEST(SparoaMdp, ActionsMeanSharesOnTheAccelerator) {
  EXPECT_EQ(SparoaEnvironment::action_share(0.0), 0);
  EXPECT_EQ(SparoaEnvironment::action_share(0.054), 0);     // 0.05 after rounding: the CPU alone
  EXPECT_EQ(SparoaEnvironment::action_share(0.056), 0.06);  // split, 6 % on the accelerator
  EXPECT_EQ(SparoaEnvironment::action_share(0.5), 0.5);
  EXPECT_EQ(SparoaEnvironment::action_share(0.944), 0.94);
  EXPECT_EQ(SparoaEnvironment::action_share(0.946), 1);  // 0.95: the accelerator alone
  EXPECT_EQ(SparoaEnvironment::action_share(std::nan("")), 0);
  EXPECT_EQ(SparoaEnvironment::action_share(7), 1);
}

TEST(SparoaMdp, StepsObservationsAndRewardsByHand) {
  // gcn on mr, four stages. Stage times (ms):  CPU 1 10 1 4;  GPU 5 2 5 1.
  // The reference is the better single processor: CPU 16 ms, GPU 13 ms -> 13 ms; k = 4, so a step
  // whose latency is L ms earns -(4 L / 13).
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1}), cpu = test::summed_stage_table("cpu", {1, 10, 1, 4});
  cpu.set_stage_output_sparsity(2, 0.7);
  const DeviceHardware hw = board();
  SparoaEnvironment env(SparoaBoard{&m, 4, &hw, {&gpu, &cpu}});
  EXPECT_NEAR(env.reference_seconds(), 0.013, 1e-12);

  // Step 0 (conv1): nothing placed yet: CPU load 0, the input in main memory (prev_share 0), position 0.
  std::vector<float> o = env.observe();
  ASSERT_EQ(o.size(), static_cast<size_t>(sparoa_feature_count()));
  EXPECT_EQ(o[rho], 0);
  EXPECT_EQ(o[rho_known], 0);  // no sparsity measured for conv1
  EXPECT_EQ(o[m_cpu], 0);
  EXPECT_EQ(o[prev_share], 0);
  EXPECT_EQ(o[position], 0);
  EXPECT_EQ(o[o_switch], 0);  // zero copy
  EXPECT_GT(o[intensity], 0);
  EXPECT_EQ(o[split_share], 1);  // the board computes all 4 of the 4 stages
  EXPECT_EQ(SparoaEnvironment(SparoaBoard{&m, 1, &hw, {&gpu, &cpu}}).observe()[split_share], 0.25f);
  // conv1 on the CPU: 1 ms.
  EXPECT_NEAR(env.step(0.0), -4 * 1.0 / 13, 1e-9);
  EXPECT_NEAR(env.last_latency_s(), 0.001, 1e-12);

  // Step 1 (conv2): the CPU was busy the whole 1 ms so far; conv2's input is conv1's output.
  o = env.observe();
  EXPECT_FLOAT_EQ(o[m_cpu], 1.0f);
  EXPECT_FLOAT_EQ(o[position], 0.25f);
  // conv2 on the GPU: 2 ms.
  EXPECT_NEAR(env.step(1.0), -4 * 2.0 / 13, 1e-9);

  // Step 2 (pool): CPU busy 1 of 3 ms; the input lies on the GPU; its sparsity was measured (0.7).
  o = env.observe();
  EXPECT_NEAR(o[m_cpu], 1.0 / 3, 1e-6);
  EXPECT_FLOAT_EQ(o[prev_share], 1.0f);
  EXPECT_FLOAT_EQ(o[rho], 0.7f);
  EXPECT_FLOAT_EQ(o[rho_known], 1.0f);
  // Half on each: max(0.5 x 5, 0.5 x 1) = 2.5 ms (exchange free with zero copy).
  EXPECT_NEAR(env.step(0.5), -4 * 2.5 / 13, 1e-9);

  // Step 3 (head): CPU busy 1 + 0.5 x 1 = 1.5 of 5.5 ms; the input is split half on the GPU.
  o = env.observe();
  EXPECT_NEAR(o[m_cpu], 1.5 / 5.5, 1e-6);
  EXPECT_FLOAT_EQ(o[prev_share], 0.5f);
  EXPECT_FLOAT_EQ(o[position], 0.75f);
  EXPECT_NEAR(env.step(0.97), -4 * 1.0 / 13, 1e-9);  // 0.97: the GPU alone, 1 ms
  EXPECT_TRUE(env.done());
  EXPECT_THROW(env.step(0.5), std::logic_error);

  // 1 + 2 + 2.5 + 1 = 6.5 ms, which is what the simulator charges for that placement.
  EXPECT_EQ(env.placement().to_string(), "[cpu:0-1,gpu:1-2,gpu*0.5+cpu:2-3,gpu:3-4]");
  EXPECT_NEAR(env.device_seconds(), 0.0065, 1e-12);
  EXPECT_NEAR(placement_seconds(env.placement(), m, 4, hw, {&gpu, &cpu}), 0.0065, 1e-12);
}

TEST(SparoaMdp, SwitchingIsPaidWhereTheInputMoves) {
  // 10 ms per tensor moved between the processors: CPU then GPU pays one copy at step 1 (2 + 10 ms);
  // with l3 = 1 the switching term adds 10 / 13 on top of the latency term's 4 x 12 / 13.
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1}), cpu = test::summed_stage_table("cpu", {1, 10, 1, 4});
  const DeviceHardware hw = board(10);
  SparoaRewardWeights w;
  w.switching = 1;
  SparoaEnvironment env(SparoaBoard{&m, 4, &hw, {&gpu, &cpu}}, w);
  EXPECT_NEAR(env.observe()[o_switch], 10.0 / 13, 1e-6);  // a move would cost 10 of the 13 reference ms
  EXPECT_NEAR(env.step(0.0), -4 * 1.0 / 13, 1e-9);        // CPU, no move (main memory)
  EXPECT_NEAR(env.step(1.0), -(4 * 12.0 / 13 + 10.0 / 13), 1e-6);
  EXPECT_NEAR(env.last_switch_s(), 0.010, 1e-8);
  EXPECT_NEAR(env.step(1.0), -4 * 5.0 / 13, 1e-9);  // stays on the GPU: no move
  EXPECT_EQ(env.last_switch_s(), 0);
}

TEST(SparoaMdp, MemoryOfTheAcceleratorGrowsWithWhatIsPlacedOnIt) {
  // M_gpu: the weights of the stages on the accelerator plus the largest working set among them, over
  // the pool's capacity (here the stages' own figures from the spec, a pool of 1 GB).
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1}), cpu = test::summed_stage_table("cpu", {1, 10, 1, 4});
  const DeviceHardware hw = test::gpu_cpu_board(1e9);
  SparoaEnvironment env(SparoaBoard{&m, 4, &hw, {&gpu, &cpu}});
  EXPECT_EQ(env.observe()[m_gpu], 0);
  env.step(0.0);  // CPU: nothing on the GPU
  EXPECT_EQ(env.observe()[m_gpu], 0);
  env.step(1.0);  // conv2 on the GPU
  const auto& s1 = m.stages[1];
  EXPECT_NEAR(env.observe()[m_gpu], (s1.weight_bytes + s1.memory_bytes) / 1e9, 1e-6);
}

TEST(SparoaMdp, RewardsSumToMinusTheLatencyOfThePlacementOnRandomBoards) {
  // Search: random stage times, copy costs, stage counts k (the rest to the server) and actions; the
  // episode's latency terms must add up to exactly the simulator's price of the placement it built.
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  RandomStream rng(7, StreamPurpose::test, 35);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> g(4), c(4);
    for (int s = 0; s < 4; ++s) g[static_cast<size_t>(s)] = 0.1 + 10 * rng.next_unit(), c[static_cast<size_t>(s)] = 0.1 + 10 * rng.next_unit();
    const LutTable gpu = test::summed_stage_table("gpu", g), cpu = test::summed_stage_table("cpu", c);
    const DeviceHardware hw = board(rng.next_unit() < 0.5 ? 0 : 5 * rng.next_unit());
    const int k = 1 + static_cast<int>(rng.next_u64() % 4);
    SparoaEnvironment env(SparoaBoard{&m, k, &hw, {&gpu, &cpu}});
    double sum = 0;
    while (!env.done()) sum += env.step(rng.next_unit() < 0.3 ? (rng.next_unit() < 0.5 ? 0.0 : 1.0) : rng.next_unit());
    const double priced = placement_seconds(env.placement(), m, k, hw, {&gpu, &cpu});
    ASSERT_NEAR(-sum * env.reference_seconds() / k, priced, 1e-12) << "trial " << trial << " " << env.placement().to_string();
    ASSERT_NEAR(env.device_seconds(), priced, 1e-12);
  }
}

TEST(SparoaMdp, ABoardWithoutBothProcessorsIsRefused) {
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1});
  const DeviceHardware hw = board();
  try {
    SparoaEnvironment env(SparoaBoard{&m, 4, &hw, {&gpu, nullptr}});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no CPU"), std::string::npos) << e.what();
  }
  EXPECT_THROW(SparoaEnvironment(SparoaBoard{&m, 0, &hw, {&gpu, &gpu}}), std::invalid_argument);
}

TEST(SparoaMdp, PolicyInfoRoundTripsAndRefusesOtherLayouts) {
  SparoaPolicyInfo i;
  i.device_type = "jetson-orin-nano";
  i.processors = {"gpu", "cpu"};
  i.model = "gcn/mr";
  i.k = 4;
  i.episodes = 400;
  i.device_ms = 4.2;
  i.placement = "[gpu:0-4]";
  i.thresholds = {{0.1, 10, false}, {0.2, 20, false}, {0.3, 30, false}, {0.4, 40, false}};
  const SparoaPolicyInfo back = sparoa_info_from_json(sparoa_info_to_json(i));
  EXPECT_EQ(back.device_type, i.device_type);
  EXPECT_EQ(back.processors, i.processors);
  EXPECT_EQ(back.k, 4);
  ASSERT_EQ(back.thresholds.size(), 4u);
  EXPECT_EQ(back.thresholds[2].intensity, 30);
  std::string text = sparoa_info_to_json(i);
  const std::string mine = "\"layout_version\":" + std::to_string(kSparoaLayoutVersion);
  ASSERT_NE(text.find(mine), std::string::npos) << text;
  text.replace(text.find(mine), mine.size(), "\"layout_version\":9");
  try {
    sparoa_info_from_json(text);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("layout_version"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sparoa_info_from_json("{}"), std::invalid_argument);
}

TEST(SparoaMdp, ADiscreteGpuPaysTheCopyBackAtTheLastStepOnly) {
  // The GPU has its own memory (pool 1) and copies take 10 ms: all four stages on it cost 10 (the input
  // in) + 5, then 2, 5, and 1 + 10 (the result back to main memory) only at the last step. The
  // reference: CPU 16 ms, GPU 10 + 13 + 10 = 33 ms -> 16 ms.
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1}), cpu = test::summed_stage_table("cpu", {1, 10, 1, 4});
  DeviceHardware hw = board(10);
  hw.pool_of = {1, 0};
  hw.pool_capacity_bytes = {0, 0};
  hw.pool_names = {"memory", "gpu_memory"};
  SparoaEnvironment env(SparoaBoard{&m, 4, &hw, {&gpu, &cpu}});
  EXPECT_NEAR(env.reference_seconds(), 0.016, 1e-8);
  const double per_ms = -4 / 16.0;
  EXPECT_NEAR(env.step(1), per_ms * 15, 1e-6);
  EXPECT_NEAR(env.step(1), per_ms * 2, 1e-6);
  EXPECT_NEAR(env.step(1), per_ms * 5, 1e-6);
  EXPECT_NEAR(env.step(1), per_ms * 11, 1e-6);
  EXPECT_NEAR(env.device_seconds(), 0.033, 1e-8);
}

TEST(SparoaMdp, ThresholdsEnterTheStateWhereAPredictorGaveThem) {
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1}), cpu = test::summed_stage_table("cpu", {1, 10, 1, 4});
  const DeviceHardware hw = board();
  SparoaBoard b{&m, 4, &hw, {&gpu, &cpu}};
  EXPECT_EQ(SparoaEnvironment(b).observe()[thresholds_known], 0);
  b.thresholds = {{0.3, 99, false}, {0.4, 999, false}, {0.5, 9, false}, {0.6, 0, false}};
  SparoaEnvironment env(b);
  std::vector<float> o = env.observe();
  EXPECT_FLOAT_EQ(o[s_hat], 0.3f);
  EXPECT_FLOAT_EQ(o[c_hat], 0.4f);  // log10(1 + 99) / 5
  EXPECT_EQ(o[thresholds_known], 1);
  env.step(0);
  EXPECT_FLOAT_EQ(env.observe()[c_hat], 0.6f);  // log10(1000) / 5
  b.thresholds.pop_back();
  EXPECT_THROW(SparoaEnvironment{b}, std::invalid_argument);  // three pairs for four stages
}

TEST(SparoaThresholds, GroundTruthByHandOnATwoProcessorRoofline) {
  // One stage reading the raw input: 1e6 input bytes, 1e9 FLOPs, 1e7 bytes of memory traffic.
  //   CPU: 100 GFLOP/s, 10 GB/s, no overhead:  t(rho) = max(1e9 (1 - rho) / 1e11, 1e7 / 1e10) = max(0.01 (1 - rho), 0.001)
  //   GPU: 1000 GFLOP/s, 100 GB/s, 1 ms:       t = 0.001 + max(1e-3, 1e-4) = 0.002
  ModelSpec m;
  m.name = "one";
  m.input_bytes = 1e6;
  StageSpec st;
  st.name = "s";
  st.op = "linear";
  st.inputs = {-1};
  st.flops = 1e9;
  st.traffic_bytes = 1e7;
  st.out_bytes = 1e5;
  m.stages = {st};
  const RooflineProcessor cpu{1e11, 1e10, 0, 1}, gpu{1e12, 1e11, 1e-3, 1};
  // Sparsity: 0.01 (1 - rho) <= 0.002 from rho = 0.8.
  StageThresholds t = threshold_truth(m, 0, 0, cpu, gpu);
  EXPECT_NEAR(t.sparsity, 0.8, 1e-12);
  EXPECT_FALSE(t.cpu_never);
  // Intensity at rho = 0 (F = I x 1e6): the GPU is faster when I 1e-5 > 0.001 + I 1e-6, i.e. I > 111.1;
  // the grid's next point above is 10^2.05 = 112.2.
  EXPECT_NEAR(t.intensity, std::pow(10.0, 2.05), 1e-9);
  // At rho = 0.5 the CPU computes half: I 5e-6 > 0.001 + I 1e-6, I > 250 -> 10^2.40.
  EXPECT_NEAR(threshold_truth(m, 0, 0.5, cpu, gpu).intensity, std::pow(10.0, 2.40), 1e-9);
  // The stage's own intensity is 1e9 / 1e6 = 1000 FLOPs per byte: above the threshold, to the GPU; an
  // intensity threshold above 1000 sends it to the CPU.
  EXPECT_NEAR(stage_intensity(m, 0), 1000, 1e-9);
  EXPECT_FALSE(thresholds_say_cpu(1000, t));
  EXPECT_TRUE(thresholds_say_cpu(1000, StageThresholds{0.8, 2000, false}));
  // A GPU so fast the CPU never wins, even with every activation zero (its memory traffic alone is 1 ms).
  const RooflineProcessor fast{1e15, 1e15, 0, 1};
  EXPECT_TRUE(threshold_truth(m, 0, 0, cpu, fast).cpu_never);
}
