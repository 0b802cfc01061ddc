// The SAC scheduler's torch-free half (sched/sac_mdp.hpp, sched/sac_scheduler.hpp): action slots,
// observations, rewards computed by hand, the decision record, and the scheduler's determinism with a
// stand-in for the policy network (the network itself is tested in tests/learned/test_sac_agent.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "sched/sac_mdp.hpp"
#include "sched/sac_scheduler.hpp"
#include "sched_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

TEST(SacMdp, ActionSlotsCoverEverySplitThenDataParallel) {
  // n = 3 with data_parallel: 5 slots of width 0.2: offload, pp(1), pp(2), local, data_parallel.
  EXPECT_EQ(action_strategy(0.0, 3, true), Strategy::offload());
  EXPECT_EQ(action_strategy(0.19, 3, true), Strategy::offload());
  EXPECT_EQ(action_strategy(0.2, 3, true), Strategy::pp(1));
  EXPECT_EQ(action_strategy(0.5, 3, true), Strategy::pp(2));
  EXPECT_EQ(action_strategy(0.7, 3, true), Strategy::local());
  EXPECT_EQ(action_strategy(0.8, 3, true), Strategy::data_parallel());
  EXPECT_EQ(action_strategy(1.0, 3, true), Strategy::data_parallel());
  // Without data_parallel: 4 slots of 0.25, the last local; out-of-range and NaN actions are clamped.
  EXPECT_EQ(action_strategy(1.0, 3, false), Strategy::local());
  EXPECT_EQ(action_strategy(0.74, 3, false), Strategy::pp(2));
  EXPECT_EQ(action_strategy(7, 3, false), Strategy::local());
  EXPECT_EQ(action_strategy(-1, 3, false), Strategy::offload());
  EXPECT_EQ(action_strategy(NAN, 3, false), Strategy::offload());
  // Each strategy's slot centre maps back to it.
  for (bool dp : {false, true})
    for (int k = 0; k <= 9; ++k) {
      const Strategy s = Strategy::at_split(k, 9);
      EXPECT_EQ(action_strategy(strategy_action(s, 9, dp), 9, dp), s) << k;
    }
  EXPECT_EQ(action_strategy(strategy_action(Strategy::data_parallel(), 9, true), 9, true), Strategy::data_parallel());
  EXPECT_DOUBLE_EQ(strategy_action(Strategy::offload(), 3, true), 0.1);
}

TEST(SacMdp, ObservationsFollowTheLayoutAndSkipDevicesThatDoNotAct) {
  Fixture f;
  DeviceState idle = device("idle", "fast", 8);
  idle.generates = false;
  DeviceState gone = device("gone", "fast", 8);
  gone.connected = false;
  const SystemState s = state({device("a", "slow", 8), idle, gone, device("b", "fast", 100)});
  const auto obs = sac_observe(s, *f.est, true);
  ASSERT_EQ(obs.size(), 2u);
  EXPECT_EQ(obs[0].device, "a");
  EXPECT_EQ(obs[1].device, "b");
  EXPECT_EQ(obs[0].num_stages, 9);
  ASSERT_EQ(static_cast<int>(obs[0].features.size()), sac_feature_count());
  EXPECT_EQ(sac_feature_names()[0], "log10_bandwidth_mbps/2");
  // 8 Mbit/s device link (the access point and server links are faster): log10(8) / 2.
  EXPECT_NEAR(obs[0].features[0], std::log10(8.0) / 2, 1e-6);
  // "slow" runs the model in 0.9 s; offloading takes 12.288 ms up + 9 ms + 0.16 ms down at 1e6 B/s.
  EXPECT_NEAR(obs[0].features[5], std::log10(0.9), 1e-6);
  EXPECT_NEAR(obs[0].features[6], std::log10(0.012288 + 0.009 + 0.00016), 1e-6);
  // Offload is the slow device's best split (k = 0): share 0, and the best latency is offload's.
  EXPECT_NEAR(obs[0].features[8], 0, 1e-9);
  EXPECT_NEAR(obs[0].features[7], obs[0].features[6], 1e-9);
  // The current strategy (local, n = 9, with data_parallel: 11 slots) sits at slot 9's centre.
  EXPECT_NEAR(obs[0].features[11], 9.5 / 11, 1e-6);
  // Ranks on the server: 0 / 2 and 1 / 2. Two devices act: log2(2) / 10.
  EXPECT_NEAR(obs[0].features[20], 0, 1e-6);
  EXPECT_NEAR(obs[1].features[20], 0.5, 1e-6);
  EXPECT_NEAR(obs[0].features[21], 0.1, 1e-6);
}

namespace {
// A step whose reference latency (feature 7, log10 of the best isolated latency) is 0.1 s.
SacStep step(const std::string& id, const std::string& strategy, float marker) {
  SacStep s;
  s.device = id;
  s.features.assign(static_cast<size_t>(sac_feature_count()), marker);
  s.features[7] = -1;  // log10(0.1)
  s.action = 0.5;
  s.strategy = strategy;
  return s;
}
// A request that uploaded 1 MB (test::request's, with its bytes).
RequestRecord uploaded(int device, double created, double result) {
  RequestRecord r = request(device, created, result);
  r.bytes_up = 1e6;
  return r;
}
}  // namespace

TEST(SacMdp, RewardsOfHandComputedWindows) {
  // Decisions at 0 and 1 s, arrivals end at 2 s. Device a (index 0) completes two requests in [0, 1)
  // and none in [1, 2); device b (index 1) has one request from 0.1 s that completes at 1.5 s.
  SacDecision d0{0, {step("a", "local", 1), step("b", "local", 2)}};
  SacDecision d1{1, {step("a", "offload", 3), step("b", "local", 4)}};
  const std::vector<RequestRecord> reqs = {uploaded(0, 0.2, 0.5), uploaded(0, 0.6, 0.9), uploaded(1, 0.1, 1.5)};
  SacRewardWeights w;  // latency 1, energy 0, switching 0.05, shared 0.5, objective throughput
  double ret = 0;
  const auto t = sac_transitions({d0, d1}, reqs, {"a", "b"}, 2.0, w, &ret);
  ASSERT_EQ(t.size(), 4u);
  // Window [0, 1): a's time per result 1 s / 2 = 0.5 s = 5 references: ln 5. b completed nothing; its
  // oldest request is 0.9 s old at 1 s, charged as the window, 1 s = 10 references: ln 10.
  const double la = std::log(5.0), lb = std::log(10.0), mean0 = (la + lb) / 2;
  EXPECT_NEAR(t[0].reward, -(0.5 * la + 0.5 * mean0), 1e-5);
  EXPECT_NEAR(t[1].reward, -(0.5 * lb + 0.5 * mean0), 1e-5);
  EXPECT_FALSE(t[0].done);
  EXPECT_EQ(t[0].next_obs[0], 3.0f);  // a's observation at the next decision
  EXPECT_EQ(t[1].next_obs[0], 4.0f);
  // Window [1, 2), the last: b's one result in 1 s: ln 10. a measured nothing: it takes the mean (b's),
  // plus the switching penalty (local -> offload).
  EXPECT_NEAR(t[2].reward, -(lb + 0.05), 1e-5);
  EXPECT_NEAR(t[3].reward, -lb, 1e-5);
  EXPECT_TRUE(t[2].done);
  EXPECT_TRUE(t[3].done);
  EXPECT_EQ(t[2].next_obs, t[2].obs);
  EXPECT_NEAR(ret, t[0].reward + t[1].reward + t[2].reward + t[3].reward, 1e-4);
  // Objective latency: a's mean latency 0.3 s = 3 references; energy: 2 MB on a's link in window 0.
  w.per_result = false;
  w.energy = 0.1;
  w.shared = 0;
  const auto u = sac_transitions({d0, d1}, reqs, {"a", "b"}, 2.0, w);
  EXPECT_NEAR(u[0].reward, -(std::log(3.0) + 0.1 * 2), 1e-5);
  // A decision at or after the end of the arrivals makes no transition.
  EXPECT_EQ(sac_transitions({d0, d1}, reqs, {"a", "b"}, 1.0, SacRewardWeights{}).size(), 2u);
}

TEST(SacMdp, DecisionRecordsRoundTripAndForeignOnesAreRefused) {
  SacDecision d{1.5, {step("a", "pp(3)", 0.25f)}};
  const SacDecision back = sac_decision_from_json(sac_decision_to_json(d));
  ASSERT_EQ(back.steps.size(), 1u);
  EXPECT_EQ(back.t_s, 1.5);
  EXPECT_EQ(back.steps[0].features, d.steps[0].features);
  EXPECT_EQ(back.steps[0].strategy, "pp(3)");
  EXPECT_THROW(sac_decision_from_json("{\"scheme\": 1}"), std::invalid_argument);
  EXPECT_THROW(sac_decision_from_json("not json"), std::invalid_argument);
  EXPECT_THROW(sac_decision_from_json("{\"sac_layout\": 999, \"t_s\": 0, \"steps\": []}"), std::invalid_argument);
  EXPECT_THROW(sac_decision_from_json("{\"sac_layout\": 1, \"t_s\": 0, \"steps\": [{\"device\": \"a\", \"action\": 0, "
                                      "\"strategy\": \"local\", \"features\": [1, 2]}]}"),
               std::invalid_argument);
}

namespace {
// Stands in for the policy network: each device's mean is its bandwidth feature minus 0.5, so a
// device's action depends on its own observation only; log std fixed.
class LinearActor : public SacActor {
 public:
  void forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const override {
    mean.clear();
    log_std.clear();
    for (const auto& o : obs) mean.push_back(o[0] - 0.5), log_std.push_back(0);
  }
  std::string describe() const override { return "linear"; }
};
}  // namespace

TEST(SacScheduler, MeanActionsWithoutExplorationSeededNoiseWithIt) {
  Fixture f;
  const SystemState s = state({device("a", "slow", 1), device("b", "slow", 1000)});
  SacSchedulerOptions o;
  SacScheduler greedy(*f.est, std::make_unique<LinearActor>(), o);
  const Scheme sc = greedy.decide(s);
  // a: mean log10(1)/2 - 0.5 = -0.5: action (tanh(-0.5) + 1) / 2 = 0.2689, slot floor(0.2689 * 11) = 2: pp(2).
  // b: mean log10(1000)/2 - 0.5 = 1: action 0.8808, slot 9: local.
  EXPECT_EQ(sc.strategies.at("a"), Strategy::pp(2));
  EXPECT_EQ(sc.strategies.at("b"), Strategy::local());
  const SacDecision rec = sac_decision_from_json(greedy.decision_detail());
  ASSERT_EQ(rec.steps.size(), 2u);
  EXPECT_NEAR(rec.steps[0].action, (std::tanh(-0.5) + 1) / 2, 1e-6);
  // With exploration: the same seed, the same actions; another seed, other actions.
  auto actions = [&](std::uint64_t seed) {
    SacSchedulerOptions e;
    e.explore = true;
    e.seed = seed;
    SacScheduler x(*f.est, std::make_unique<LinearActor>(), e);
    std::vector<double> out;
    for (int k = 0; k < 5; ++k) {
      x.decide(s);
      for (const auto& st : sac_decision_from_json(x.decision_detail()).steps) out.push_back(st.action);
    }
    return out;
  };
  EXPECT_EQ(actions(7), actions(7));
  EXPECT_NE(actions(7), actions(8));
}

TEST(SacScheduler, IdleDevicesAreNamedHelpers) {
  Fixture f;
  DeviceState idle = device("idle", "fast", 8);
  idle.generates = false;
  SacScheduler with(*f.est, std::make_unique<LinearActor>(), SacSchedulerOptions{});
  EXPECT_EQ(with.decide(state({device("a", "slow", 8), idle})).helpers, std::vector<std::string>{"idle"});
  SacSchedulerOptions o;
  o.helpers = false;
  SacScheduler without(*f.est, std::make_unique<LinearActor>(), o);
  EXPECT_TRUE(without.decide(state({device("a", "slow", 8), idle})).helpers.empty());
}

namespace {
// The stand-in network above, able to learn: it records what the scheduler teaches it.
class RecordingActor : public LinearActor {
 public:
  bool can_learn() const override { return true; }
  void learn(const std::vector<SacTransition>& t, int steps) override {
    seen->insert(seen->end(), t.begin(), t.end());
    *step_count += steps;
  }
  std::vector<SacTransition>* seen = nullptr;
  int* step_count = nullptr;
};
}  // namespace

TEST(SacScheduler, OnlineLearningRewardsEachWindowFromTheStatesCounters) {
  Fixture f;
  std::vector<SacTransition> seen;
  int steps = 0;
  auto actor = std::make_unique<RecordingActor>();
  actor->seen = &seen;
  actor->step_count = &steps;
  SacSchedulerOptions o;
  o.online = true;
  o.updates_per_decision = 3;
  o.reward.shared = 0;
  SacScheduler s(*f.est, std::move(actor), o);
  // "slow" at 8 Mbit/s: its reference (best isolated latency) is offload's 12.288 + 9 + 0.16 ms.
  SystemState a = state({device("a", "slow", 8)});
  a.time_s = 0;
  s.decide(a);
  EXPECT_TRUE(seen.empty());  // nothing to learn from before the first window
  SystemState b = a;
  b.time_s = 2;
  b.devices[0].completed = 4;  // 4 results in 2 s: 0.5 s per result
  b.devices[0].latency_sum_s = 1.2;
  s.decide(b);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(steps, 3);
  const double ref = 0.012288 + 0.009 + 0.00016;
  EXPECT_NEAR(seen[0].reward, -std::log(0.5 / ref), 1e-4);
  EXPECT_FALSE(seen[0].done);
  // A window without results while requests wait is charged the window; a device gone ends its episode.
  SystemState c = b;
  c.time_s = 3;
  c.devices[0].unfinished = 2;
  s.decide(c);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NEAR(seen[1].reward, -std::log(1.0 / ref), 1e-4);
  SystemState d = c;
  d.time_s = 4;
  d.devices[0].connected = false;
  s.decide(d);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_TRUE(seen[2].done);
  // Without a learning actor, online is refused.
  SacSchedulerOptions bad;
  bad.online = true;
  EXPECT_THROW(SacScheduler(*f.est, std::make_unique<LinearActor>(), bad), std::invalid_argument);
}

TEST(SacMdp, EnergyObjectiveChargesEachDevicesJoulesPerResult) {
  // The windows of RewardsOfHandComputedWindows with the energy objective: a idles at 1 W, b at 2 W, no
  // device computation and no transfer in the records: window [0, 1) costs a 1 J for its two results
  // (0.5 J each: ln 0.5) and b 2 J for none while its request waits (charged as one: ln 2).
  SacDecision d0{0, {step("a", "local", 1), step("b", "local", 2)}};
  SacDecision d1{1, {step("a", "local", 3), step("b", "local", 4)}};
  const std::vector<RequestRecord> reqs = {uploaded(0, 0.2, 0.5), uploaded(0, 0.6, 0.9), uploaded(1, 0.1, 1.5)};
  SacRewardWeights w;
  w.energy_per_result = true;
  w.shared = 0;
  std::vector<PowerSpec> power(2);
  power[0].idle_w = power[0].busy_w = 1;
  power[1].idle_w = power[1].busy_w = 2;
  const auto t = sac_transitions({d0, d1}, reqs, {"a", "b"}, 2.0, w, nullptr, &power);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_NEAR(t[0].reward, -std::log(0.5), 1e-5);
  EXPECT_NEAR(t[1].reward, -std::log(2.0), 1e-5);
  // Window [1, 2): b's one result cost 2 J (ln 2); a did nothing: the mean of the measured (b's).
  EXPECT_NEAR(t[3].reward, -std::log(2.0), 1e-5);
  EXPECT_NEAR(t[2].reward, -std::log(2.0), 1e-5);
  EXPECT_THROW(sac_transitions({d0, d1}, reqs, {"a", "b"}, 2.0, w), std::invalid_argument);
}
