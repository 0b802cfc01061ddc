// Operator placement inside one board: SparOA's baselines and GraNNite's GraphSplit on a
// two-processor board whose stage times are set by hand, and the dynamic program against an exhaustive
// enumeration on random boards.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "core/random_stream.hpp"
#include "sched/operator_placement.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

DeviceHardware board(double copy_ms = 0) { return test::gpu_cpu_board_with_copies(copy_ms); }

}  // namespace

TEST(OperatorPlacement, EachRuleByHandOnATwoProcessorBoard) {
  // gcn on mr: conv1 (gcn), conv2 (gcn), pool, head (fc). Stage times (ms):
  //   CPU  1  10  1  4
  //   GPU  5   2  5  1
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  ASSERT_EQ(m.num_stages(), 4);
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1}), cpu = test::summed_stage_table("cpu", {1, 10, 1, 4});
  const std::vector<const LutTable*> tables = {&gpu, &cpu};
  const DeviceHardware hw = board();
  const auto run = [&](PlacementRule r) { return place_stages(r, m, 4, hw, tables); };
  // CPU-only 16 ms, GPU-only 13 ms.
  EXPECT_EQ(run(PlacementRule::cpu_only).placement.to_string(), "[cpu:0-4]");
  EXPECT_NEAR(run(PlacementRule::cpu_only).device_seconds, 0.016, 1e-12);
  EXPECT_EQ(run(PlacementRule::accelerator_only).placement.to_string(), "[gpu:0-4]");
  EXPECT_NEAR(run(PlacementRule::accelerator_only).device_seconds, 0.013, 1e-12);
  // Greedy: each stage on its faster processor, 1 + 2 + 1 + 1 = 5 ms (zero copy: switching is free).
  EXPECT_EQ(run(PlacementRule::greedy).placement.to_string(), "[cpu:0-1,gpu:1-2,cpu:2-3,gpu:3-4]");
  EXPECT_NEAR(run(PlacementRule::greedy).device_seconds, 0.005, 1e-12);
  // GraphSplit: the two sparse convolutions and the pooling are irregular (CPU), the head dense (GPU):
  // 1 + 10 + 1 + 1 = 13 ms.
  EXPECT_EQ(run(PlacementRule::graphsplit).placement.to_string(), "[cpu:0-3,gpu:3-4]");
  EXPECT_NEAR(run(PlacementRule::graphsplit).device_seconds, 0.013, 1e-12);
  // CoDL: the GPU's share t_cpu / (t_cpu + t_gpu) snapped to tenths: 1/6 -> 0.2 (max(1.0, 0.8) = 1.0),
  // 10/12 -> 0.8 (max(1.6, 2.0) = 2.0), 0.2 (1.0), 4/5 = 0.8 (max(0.8, 0.8) = 0.8): 4.8 ms.
  EXPECT_EQ(run(PlacementRule::codl).placement.to_string(), "[gpu*0.2+cpu:0-1,gpu*0.8+cpu:1-2,gpu*0.2+cpu:2-3,gpu*0.8+cpu:3-4]");
  EXPECT_NEAR(run(PlacementRule::codl).device_seconds, 0.0048, 1e-12);
  // DP: per stage the best of CPU, GPU and every tenth of a split: 0.1 (max(0.5, 0.9) = 0.9), 0.9
  // (max(1.8, 1.0) = 1.8), 0.1 (0.9), 0.8 (0.8): 4.4 ms, below every other rule.
  EXPECT_EQ(run(PlacementRule::dp).placement.to_string(), "[gpu*0.1+cpu:0-1,gpu*0.9+cpu:1-2,gpu*0.1+cpu:2-3,gpu*0.8+cpu:3-4]");
  EXPECT_NEAR(run(PlacementRule::dp).device_seconds, 0.0044, 1e-12);
  // A board device running only [0, 2) (pp(2)): dp over those two stages, 0.9 + 1.8 ms.
  EXPECT_NEAR(place_stages(PlacementRule::dp, m, 2, hw, tables).device_seconds, 0.0027, 1e-12);
}

TEST(OperatorPlacement, DpPaysForCopiesGreedyIgnores) {
  // The same board with 10 ms per tensor moved between the processors (and per split stage's exchange):
  // greedy still switches three times (5 + 30 ms); dp keeps everything on the GPU (13 ms).
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1}), cpu = test::summed_stage_table("cpu", {1, 10, 1, 4});
  const std::vector<const LutTable*> tables = {&gpu, &cpu};
  const DeviceHardware hw = board(10);
  EXPECT_NEAR(place_stages(PlacementRule::greedy, m, 4, hw, tables).device_seconds, 0.035, 1e-9);
  const PlacementChoice dp = place_stages(PlacementRule::dp, m, 4, hw, tables);
  EXPECT_EQ(dp.placement.to_string(), "[gpu:0-4]");
  EXPECT_NEAR(dp.device_seconds, 0.013, 1e-12);
}

TEST(OperatorPlacement, RulesThatNeedAProcessorSayWhichIsMissing) {
  const ModelSpec& m = test::catalog().spec("gcn", "mr");
  const LutTable gpu = test::summed_stage_table("gpu", {5, 2, 5, 1});
  const std::vector<const LutTable*> only_gpu = {&gpu, nullptr};  // no CPU table
  try {
    place_stages(PlacementRule::cpu_only, m, 4, board(), only_gpu);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no CPU with a table"), std::string::npos) << e.what();
  }
  EXPECT_THROW(place_stages(PlacementRule::codl, m, 4, board(), only_gpu), std::invalid_argument);
  // dp and greedy use what has a table: the GPU alone.
  EXPECT_EQ(place_stages(PlacementRule::dp, m, 4, board(), only_gpu).placement.to_string(), "[gpu:0-4]");
  EXPECT_EQ(parse_placement_rule("graphsplit"), PlacementRule::graphsplit);
  EXPECT_THROW(parse_placement_rule("sparoa"), std::invalid_argument);
}

TEST(OperatorPlacement, DpIsTheOptimumOfEveryPlacementItConsiders) {
  // Random boards (stage times 0.1..10 ms, copies free or 0..3 ms), 1..4 stages, shares {0.25, 0.5,
  // 0.75}: every per-stage assignment of {GPU, CPU, GPU*s+CPU} enumerated and priced with
  // placement_seconds; dp's answer is their minimum.
  const std::vector<double> grid = {0.25, 0.5, 0.75};
  for (int trial = 0; trial < 40; ++trial) {
    RandomStream rng(7, StreamPurpose::test, static_cast<std::uint64_t>(trial));
    const ModelSpec& m = test::catalog().spec("gcn", "mr");
    const int k = 1 + static_cast<int>(4 * rng.next_unit());
    std::vector<double> tg, tc;
    for (int s = 0; s < m.num_stages(); ++s) tg.push_back((0.1 + 9.9 * rng.next_unit())), tc.push_back((0.1 + 9.9 * rng.next_unit()));
    const LutTable gpu = test::summed_stage_table("gpu", tg), cpu = test::summed_stage_table("cpu", tc);
    const std::vector<const LutTable*> tables = {&gpu, &cpu};
    const DeviceHardware hw = board(trial % 2 ? 3 * rng.next_unit() : 0);
    const PlacementChoice dp = place_stages(PlacementRule::dp, m, std::min(k, 4), hw, tables, lut_mean_time(), grid);
    const int n = std::min(k, 4);
    double best = 1e9;
    std::vector<int> pick(static_cast<size_t>(n), 0);  // 0 gpu, 1 cpu, 2.. split at grid[i - 2]
    std::function<void(int)> each = [&](int s) {
      if (s == n) {
        Placement pl;
        for (int t = 0; t < n; ++t) {
          const int c = pick[static_cast<size_t>(t)];
          pl.parts.push_back(c == 0   ? PlacementPart{"gpu", "", 1, t, t + 1}
                             : c == 1 ? PlacementPart{"cpu", "", 1, t, t + 1}
                                      : PlacementPart{"gpu", "cpu", grid[static_cast<size_t>(c - 2)], t, t + 1});
        }
        best = std::min(best, placement_seconds(pl, m, n, hw, tables));
        return;
      }
      for (int c = 0; c < 5; ++c) pick[static_cast<size_t>(s)] = c, each(s + 1);
    };
    each(0);
    EXPECT_NEAR(dp.device_seconds, best, 1e-12) << "trial " << trial << " " << dp.placement.to_string();
  }
}
