// Batching learned by the SAC scheduler (sched/sac_batching.hpp): the candidates and
// the action's slots, the server observation worked by hand, a server's reward (the mean of its
// devices'), the decision record, and the scheduler carrying out the batching action with a stand-in
// for the network (the network and the trainer: tests/golden/sac.sh).
#include <gtest/gtest.h>

#include <cmath>

#include "sched/sac_batching.hpp"
#include "sched/sac_mdp.hpp"
#include "sched/sac_scheduler.hpp"
#include "sched_fixture.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;
using namespace coinfer::test;

TEST(SacBatching, CandidatesAreTheGridWithinTheLimitInOrder) {
  // Listed out of order, a size beyond the limit (8 > 4): windows then sizes, ascending.
  const auto c = sac_batching_candidates({{20, 0, 5}, {8, 2, 1}}, {10, 4}, 4);
  const std::vector<BatchSpec> want = {{0, 1}, {0, 2}, {5, 1}, {5, 2}, {20, 1}, {20, 2}};
  EXPECT_EQ(c, want);
  // An empty list stands for the current value; duplicates once.
  EXPECT_EQ(sac_batching_candidates({{}, {2, 2, 1}}, {10, 4}, 4), (std::vector<BatchSpec>{{10, 1}, {10, 2}}));
  EXPECT_EQ(sac_batching_candidates({{5, 5}, {}}, {10, 4}, 4), (std::vector<BatchSpec>{{5, 4}}));
  // No size fits the limit: the current batching alone.
  EXPECT_EQ(sac_batching_candidates({{0, 5}, {8}}, {10, 4}, 4), (std::vector<BatchSpec>{{10, 4}}));
}

TEST(SacBatching, ActionSlotsSplitTheUnitIntervalEvenly) {
  // Six candidates: slots of width 1/6; 1 and beyond in the last, NaN and below 0 in the first.
  EXPECT_EQ(sac_batching_slot(0.0, 6), 0);
  EXPECT_EQ(sac_batching_slot(0.16, 6), 0);
  EXPECT_EQ(sac_batching_slot(0.17, 6), 1);
  EXPECT_EQ(sac_batching_slot(0.5, 6), 3);
  EXPECT_EQ(sac_batching_slot(0.9, 6), 5);
  EXPECT_EQ(sac_batching_slot(1.0, 6), 5);
  EXPECT_EQ(sac_batching_slot(3.0, 6), 5);
  EXPECT_EQ(sac_batching_slot(-1.0, 6), 0);
  EXPECT_EQ(sac_batching_slot(NAN, 6), 0);
  EXPECT_EQ(sac_batching_slot(0.7, 1), 0);
  EXPECT_THROW(sac_batching_slot(0.5, 0), std::invalid_argument);
  // A slot's centre maps back to it.
  for (int k = 0; k < 6; ++k) EXPECT_EQ(sac_batching_slot(sac_batching_slot_action(k, 6), 6), k);
  EXPECT_DOUBLE_EQ(sac_batching_slot_action(3, 6), 3.5 / 6);
}

namespace {
// Server s0 ("srv": 1 ms a stage; a batch of b takes 1 + 0.5 (b - 1) times one sample) with two
// workers, one busy, 3 requests queued, batching 10 ms / 4 now, at most 8; s1 with no device.
// Device a (8 Mbit/s, Poisson 20/s) and b (100 Mbit/s, closed loop of 3) act; c is idle, d gone.
SystemState batching_state() {
  DeviceState a = device("a", "slow", 8), b = device("b", "fast", 100), c = device("c", "fast", 8), d = device("d", "fast", 8);
  a.arrival_rate_per_s = 20;
  b.in_flight = 3;
  c.generates = false;
  d.connected = false;
  SystemState s = state({a, b, c, d}, "srv", 2, 10, 4);
  s.servers[0].busy_workers = 1;
  s.servers[0].queue_length = 3;
  s.servers[0].batch_size_limit = 8;
  ServerState other = s.servers[0];
  other.id = "s1";
  s.servers.push_back(other);
  return s;
}
const BatchingChoices kChoices{{0, 10, 20}, {1, 4, 16}};  // 16 beyond the limit: 6 candidates
}  // namespace

TEST(SacBatching, ObservationWorkedByHand) {
  Fixture f;
  const SystemState s = batching_state();
  // a offloads the whole model (stages [0, 9)); b runs pp(7): the server runs [7, 9).
  const auto obs = sac_batching_observe(s, *f.est, {{"a", Strategy::offload()}, {"b", Strategy::pp(7)}}, kChoices);
  ASSERT_EQ(obs.size(), 1u);  // s1 has no device
  const auto& o = obs[0];
  EXPECT_EQ(o.server, "s0");
  EXPECT_EQ(o.devices, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.candidates, (std::vector<BatchSpec>{{0, 1}, {0, 4}, {10, 1}, {10, 4}, {20, 1}, {20, 4}}));
  ASSERT_EQ(static_cast<int>(o.features.size()), sac_batching_feature_count());
  EXPECT_NEAR(o.features[0], std::log(3.0), 1e-6);   // two offloading devices: log1p(2)
  EXPECT_NEAR(o.features[1], std::log(21.0), 1e-6);  // a's 20/s
  EXPECT_NEAR(o.features[2], std::log(4.0), 1e-6);   // b's 3 in flight
  // Server parts at batch 1: a 9 stages = 9 ms, b 2 stages = 2 ms; mean 5.5 ms.
  EXPECT_NEAR(o.features[3], std::log10(0.0055), 1e-6);
  // At the limit 8 a batch takes 1 + 0.5 x 7 = 4.5 samples' time: 4.5 / 8 per request, for both.
  EXPECT_NEAR(o.features[4], 4.5 / 8, 1e-6);
  // Uploads: a's 12,288 B input at 8 Mbit/s (1e6 B/s) = 12.288 ms; b's 2,048 B at split 7 at 100 Mbit/s
  // (12.5e6 B/s) = 0.16384 ms; no latency; mean 6.22592 ms.
  EXPECT_NEAR(o.features[5], std::log10(0.00622592), 1e-6);
  EXPECT_NEAR(o.features[6], std::log(4.0), 1e-6);  // 3 queued
  EXPECT_NEAR(o.features[7], 0.5, 1e-6);            // 1 of 2 workers busy
  EXPECT_NEAR(o.features[8], 0.25, 1e-6);           // log2(2) / 4
  EXPECT_NEAR(o.features[9], 0.1, 1e-6);            // 10 ms x 10 / 1000
  EXPECT_NEAR(o.features[10], 2.0 / 6, 1e-6);       // log2(4) / 6
  EXPECT_NEAR(o.features[11], 3.0 / 6, 1e-6);       // log2(8) / 6
  EXPECT_NEAR(o.features[12], 3.5 / 6, 1e-6);       // 10 ms / 4 is candidate 3 of 6
  EXPECT_NEAR(o.features[13], 0.1, 1e-6);           // two devices act: log2(2) / 10
  // Both local (the state's strategies): nothing offloaded, the per-device means are neutral.
  const auto local = sac_batching_observe(s, *f.est, {}, kChoices);
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].features[0], 0.0f);
  EXPECT_EQ(local[0].features[3], 0.0f);
  EXPECT_EQ(local[0].features[4], 1.0f);
  // A server that is down observes nothing.
  SystemState down = s;
  down.servers[0].up = false;
  EXPECT_TRUE(sac_batching_observe(down, *f.est, {}, kChoices).empty());
}

namespace {
SacStep device_step(const std::string& id, float marker) {
  SacStep s;
  s.device = id;
  s.features.assign(static_cast<size_t>(sac_feature_count()), marker);
  s.features[7] = -1;  // reference latency 0.1 s
  s.action = 0.5;
  s.strategy = "local";
  return s;
}
SacServerStep server_step(const std::string& id, std::vector<std::string> devices, float marker) {
  SacServerStep s;
  s.server = id;
  s.features.assign(static_cast<size_t>(sac_batching_feature_count()), marker);
  s.action = 0.25;
  s.batching = {10, 4};
  s.devices = std::move(devices);
  return s;
}
using coinfer::test::request;
}  // namespace

TEST(SacBatching, AServersRewardIsTheMeanOfItsDevices) {
  // The windows of SacMdp.RewardsOfHandComputedWindows: in [0, 1) a's time per result is 0.5 s = 5
  // references (ln 5), b waits the whole window (ln 10); shared 0.5, so a's reward is
  // -(0.5 ln 5 + 0.5 m) and b's -(0.5 ln 10 + 0.5 m), m = (ln 5 + ln 10) / 2.
  SacDecision d0{
      0, {device_step("a", 1), device_step("b", 2)}, {server_step("s0", {"a"}, 5), server_step("s1", {"a", "b"}, 6), server_step("s2", {"z"}, 7)}};
  SacDecision d1{1, {device_step("a", 3), device_step("b", 4)}, {server_step("s0", {"a"}, 8)}};
  d1.steps[0].strategy = "offload";  // a switches: 0.05 in window [1, 2)
  const std::vector<RequestRecord> reqs = {request(0, 0.2, 0.5), request(0, 0.6, 0.9), request(1, 0.1, 1.5)};
  std::vector<SacTransition> servers;
  const auto devices = sac_transitions({d0, d1}, reqs, {"a", "b"}, 2.0, SacRewardWeights{}, nullptr, nullptr, &servers);
  ASSERT_EQ(devices.size(), 4u);
  // s0, s1 in window 0 (s2's device took no step: no transition), s0 in window 1.
  ASSERT_EQ(servers.size(), 3u);
  const double la = std::log(5.0), lb = std::log(10.0), m = (la + lb) / 2;
  EXPECT_NEAR(servers[0].reward, -(0.5 * la + 0.5 * m), 1e-5);  // a's
  EXPECT_NEAR(servers[1].reward, -m, 1e-5);                     // (a's + b's) / 2 = -(m / 2 + m / 2)
  EXPECT_FLOAT_EQ(servers[0].action, 0.25f);
  EXPECT_EQ(servers[0].obs[0], 5.0f);
  EXPECT_EQ(servers[0].next_obs[0], 8.0f);  // s0's step at the next decision
  EXPECT_FALSE(servers[0].done);
  EXPECT_TRUE(servers[1].done);  // s1 took no step at the next decision
  // Window [1, 2), the last: a measured nothing and takes b's ln 10, plus its switch.
  EXPECT_NEAR(servers[2].reward, -(lb + 0.05), 1e-5);
  EXPECT_TRUE(servers[2].done);
  // Without the output the device transitions are the same.
  const auto alone = sac_transitions({d0, d1}, reqs, {"a", "b"}, 2.0, SacRewardWeights{});
  ASSERT_EQ(alone.size(), devices.size());
  for (size_t k = 0; k < alone.size(); ++k) EXPECT_EQ(alone[k].reward, devices[k].reward);
}

TEST(SacBatching, DecisionRecordsKeepTheServerStepsAndRefuseForeignOnes) {
  SacDecision d{2, {device_step("a", 1)}, {server_step("s0", {"a", "b"}, 0.5f)}};
  const SacDecision back = sac_decision_from_json(sac_decision_to_json(d));
  ASSERT_EQ(back.servers.size(), 1u);
  EXPECT_EQ(back.servers[0].server, "s0");
  EXPECT_EQ(back.servers[0].batching, (BatchSpec{10, 4}));
  EXPECT_EQ(back.servers[0].devices, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(back.servers[0].features, d.servers[0].features);
  EXPECT_DOUBLE_EQ(back.servers[0].action, 0.25);
  // Without server steps the record has none (and no batching layout).
  const std::string plain = sac_decision_to_json(SacDecision{1, {device_step("a", 1)}, {}});
  EXPECT_EQ(plain.find("sac_batching_layout"), std::string::npos);
  EXPECT_TRUE(sac_decision_from_json(plain).servers.empty());
  // Another batching layout, or a server step of another width, is refused.
  std::string other = sac_decision_to_json(d);
  other.replace(other.find("\"sac_batching_layout\":1"), 23, "\"sac_batching_layout\":9");
  EXPECT_THROW(sac_decision_from_json(other), std::invalid_argument);
  SacDecision narrow = d;
  narrow.servers[0].features.pop_back();
  EXPECT_THROW(sac_decision_from_json(sac_decision_to_json(narrow)), std::invalid_argument);
}

namespace {
// Stand-ins for the networks: every device offloads (mean -10: action ~0, slot 0); a server's mean is
// its first feature, log1p(offloading devices).
class OffloadActor : public SacActor {
 public:
  void forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const override {
    mean.assign(obs.size(), -10);
    log_std.assign(obs.size(), 0);
  }
  std::string describe() const override { return "offload"; }
};
class FirstFeatureActor : public SacActor {
 public:
  void forward(const std::vector<std::vector<float>>& obs, std::vector<double>& mean, std::vector<double>& log_std) const override {
    mean.clear();
    log_std.assign(obs.size(), 0);
    for (const auto& o : obs) mean.push_back(o[0]);
  }
  std::string describe() const override { return "first feature"; }
};
}  // namespace

TEST(SacBatching, TheSchedulerSetsTheBatchingItsPolicyChooses) {
  Fixture f;
  const SystemState s = batching_state();
  SacSchedulerOptions o;
  o.batching_policy = std::make_shared<FirstFeatureActor>();
  o.batching_choices = kChoices;
  SacScheduler sac(*f.est, std::make_unique<OffloadActor>(), o);
  EXPECT_TRUE(sac.chooses_batching());
  const Scheme sc = sac.decide(s);
  EXPECT_EQ(sc.strategies.at("a"), Strategy::offload());
  EXPECT_EQ(sc.strategies.at("b"), Strategy::offload());
  // Both offload: s0's mean is log1p(2) = ln 3, so its action is (tanh(ln 3) + 1) / 2 = (0.8 + 1) / 2 =
  // 0.9: slot floor(0.9 x 6) = 5 of the six candidates, 20 ms / 4 (from 10 ms / 4 now).
  ASSERT_EQ(sc.batching.count("s0"), 1u);
  EXPECT_EQ(sc.batching.at("s0"), (BatchSpec{20, 4}));
  EXPECT_EQ(sc.batching.count("s1"), 0u);  // no device: no agent
  const SacDecision rec = sac_decision_from_json(sac.decision_detail());
  ASSERT_EQ(rec.servers.size(), 1u);
  EXPECT_NEAR(rec.servers[0].action, 0.9, 1e-6);  // the feature is a float
  EXPECT_EQ(rec.servers[0].batching, (BatchSpec{20, 4}));
  // A choice equal to the server's batching now sets nothing: with 20 ms / 4 in force, the same action.
  SystemState at20 = s;
  at20.servers[0].batch_window_ms = 20;
  EXPECT_EQ(sac.decide(at20).batching.count("s0"), 0u);
  // Without a batching policy the scheme sets no batching and the scheduler leaves it to others.
  SacScheduler plain(*f.est, std::make_unique<OffloadActor>(), SacSchedulerOptions{});
  EXPECT_FALSE(plain.chooses_batching());
  EXPECT_TRUE(plain.decide(s).batching.empty());
  EXPECT_TRUE(sac_decision_from_json(plain.decision_detail()).servers.empty());
}
