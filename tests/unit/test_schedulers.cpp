// Estimator formulas and schedulers on hand-built states. LUTs are made in memory for dgcnn/modelnet40
// (9 stages; 12288 B raw input, 8192 B after stage 6, 160 B result) with round per-stage times.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/input_error.hpp"
#include "core/text_util.hpp"
#include "io/model_spec_loader.hpp"
#include "sched/state_json.hpp"
#include "sched/analytic_estimator.hpp"
#include "sched/dp_scheduler.hpp"
#include "sched/gcode_scheduler.hpp"
#include "sched/greedy_scheduler.hpp"
#include "sched/hierarchical_scheduler.hpp"
#include "sched/oracle_scheduler.hpp"
#include "sched/uniform_scheduler.hpp"
#include "sched/batching_choice.hpp"
#include "sched/server_choice.hpp"
#include "sched/scheme_search.hpp"
#include "sched/operator_placement.hpp"
#include "core/device_plan.hpp"
#include "sched/static_scheduler.hpp"
#include "sched/scheduler_factory.hpp"
#include "io/lut_repository.hpp"
#include "sched_fixture.hpp"
#include "core/random_stream.hpp"
#include <cstdio>

using namespace coinfer;
using namespace coinfer::test;

TEST(Estimator, SingleOffloadIsUplinkPlusServerPlusDownlink) {
  Fixture f;
  // 8 Mbit/s = 1e6 B/s, no latency: up 12288 B = 12.288 ms, server 9 ms, down 160 B = 0.16 ms.
  SystemState s = state({device("a", "slow", 8)});
  Prediction p = f.est->predict(s, scheme({{"a", Strategy::offload()}}));
  EXPECT_NEAR(p.devices[0].latency_s, 0.012288 + 0.009 + 0.00016, 1e-9);
  EXPECT_NEAR(p.throughput_rps, 1 / (0.012288 + 0.009 + 0.00016), 1e-6);  // closed loop, one in flight
  EXPECT_NEAR(p.server_utilisation.at("s0"), 0.009 * p.throughput_rps, 1e-9);
}

TEST(Estimator, OneDeviceAloneIsTheSumOfItsPathAtEveryBandwidthAndSplit) {
  // By search: one closed-loop device, one request in flight, no window, alone on a one-worker server.
  // Whatever its type, bandwidth and split, its latency is the closed form device [0,k) + the upload of
  // the bytes at split k + server [k,9) + the 160 B result, and its throughput the inverse (Little's law
  // with one in flight). Stage times of the fixture's LUTs: 100, 5, 10 or 11 ms on the device, 1 ms on
  // the server; bytes at each split from the spec (sched_fixture.hpp), 160 after the last.
  Fixture f;
  const std::map<std::string, double> stage_s = {{"slow", 0.100}, {"fast", 0.005}, {"busy", 0.010}, {"mid", 0.011}};
  RandomStream rng(11, StreamPurpose::service_time, 0);
  int checked = 0;
  for (const auto& [type, per_stage] : stage_s)
    for (int trial = 0; trial < 25; ++trial) {
      const double mbps = std::exp(std::log(0.5) + rng.next_unit() * std::log(400.0));  // 0.5 .. 200 Mbit/s
      const int k = static_cast<int>(rng.next_unit() * 10);                             // 0 .. 9
      const Strategy st = k == 9 ? Strategy::local() : Strategy::pp(k);
      const Prediction p = f.est->predict(state({device("a", type, mbps)}), scheme({{"a", st}}));
      const ModelSpec& m = f.est->model("dgcnn", "modelnet40");
      const double bytes_per_s = mbps * 1e6 / 8;
      const double expected = k * per_stage + (k < 9 ? m.bytes_at_split(k) / bytes_per_s + (9 - k) * 0.001 + 160 / bytes_per_s : 0);
      EXPECT_NEAR(p.devices[0].latency_s, expected, 1e-9 * (1 + expected)) << type << " " << st.to_string() << " at " << mbps << " Mbit/s";
      EXPECT_NEAR(p.throughput_rps, 1 / expected, 1e-6 / expected) << type << " " << st.to_string();
      ++checked;
    }
  EXPECT_EQ(checked, 100);
}

TEST(Estimator, ASaturatedServerServesWorkersOverItsTime) {
  // Many offloading devices (closed loops, one in flight each) on a server whose 'busy' LUT takes 90 ms
  // a request at batch 1 with no batching: 40 devices could offer 40 / 0.102 = 392 req/s, the server
  // serves at most workers / 90 ms: 11.1 req/s with one worker, 22.2 with two, less the estimator's
  // stated margin (its utilisation is capped at 0.999 of the workers, sched/README.md).
  Fixture f;
  std::vector<DeviceState> ds;
  std::map<std::string, Strategy> all;
  for (int i = 0; i < 40; ++i) {
    ds.push_back(device("d" + std::to_string(i), "slow", 1000));
    all["d" + std::to_string(i)] = Strategy::offload();
  }
  EXPECT_NEAR(f.est->predict(state(ds, "busy", 1), scheme(all)).throughput_rps, 0.999 / 0.090, 1e-9);
  EXPECT_NEAR(f.est->predict(state(ds, "busy", 2), scheme(all)).throughput_rps, 2 * 0.999 / 0.090, 1e-9);
  EXPECT_NEAR(f.est->predict(state(ds, "busy", 1), scheme(all)).server_utilisation.at("s0"), 0.999, 1e-9);
}

TEST(Estimator, PipelineThroughputIsCappedByTheSlowestStage) {
  Fixture f;
  DeviceState d = device("a", "busy", 8);
  d.in_flight = 4;  // enough in flight: throughput = 1 / max(device 60 ms, upload 8.192 ms, server 3 ms)
  Prediction p = f.est->predict(state({d}), scheme({{"a", Strategy::pp(6)}}));
  EXPECT_NEAR(p.throughput_rps, 1 / 0.060, 1e-6);
  EXPECT_NEAR(p.devices[0].latency_s, 0.060 + 0.008192 + 0.003 + 0.00016, 1e-9);
  Prediction local = f.est->predict(state({d}), scheme({{"a", Strategy::local()}}));
  EXPECT_NEAR(local.throughput_rps, 1 / 0.090, 1e-6);
}

TEST(Estimator, BatchWindowAddsWaitAndSharedServerQueues) {
  Fixture f;
  // One device alone with a 10 ms window: its request waits the whole window (a batch of one), then the
  // server's 9 ms: 12.288 + 10 + 9 + 0.16 ms.
  SystemState s = state({device("a", "slow", 8)}, "srv", 1, 10, 5);
  Prediction p = f.est->predict(s, scheme({{"a", Strategy::offload()}}));
  EXPECT_NEAR(p.devices[0].latency_s, 0.012288 + 0.010 + 0.009 + 0.00016, 1e-9);
  // Two devices offloading to a slow one-worker server queue behind each other.
  SystemState two = state({device("a", "slow", 8), device("b", "slow", 8)}, "busy");
  Prediction q = f.est->predict(two, scheme({{"a", Strategy::offload()}, {"b", Strategy::offload()}}));
  Prediction alone = f.est->predict(state({device("a", "slow", 8)}, "busy"), scheme({{"a", Strategy::offload()}}));
  EXPECT_GT(q.devices[0].latency_s, alone.devices[0].latency_s);
  EXPECT_LE(q.server_utilisation.at("s0"), 1.0);
}

TEST(Estimator, ASchemesBatchingIsPredictedAsIfTheServerHadIt) {
  Fixture f;
  // The state's s0 dispatches at once (0 ms / 8); a scheme that sets 10 ms / 5 is predicted on the
  // state with that batching, and a lone closed-loop device then waits its window (>= 9 ms more).
  SystemState now = state({device("a", "slow", 8)}, "srv", 1, 0, 8);
  now.servers[0].batch_size_limit = 8;
  Scheme with = scheme({{"a", Strategy::offload()}});
  with.batching["s0"] = BatchSpec{10, 5};
  SystemState windowed = now;
  windowed.servers[0].batch_window_ms = 10;
  windowed.servers[0].batch_max_size = 5;
  const Prediction a = f.est->predict(now, with);
  const Prediction b = f.est->predict(windowed, scheme({{"a", Strategy::offload()}}));
  EXPECT_DOUBLE_EQ(a.devices[0].latency_s, b.devices[0].latency_s);
  // Alone in a 10 ms window: 12.288 ms up + the whole window + 9 ms + 0.16 ms down.
  EXPECT_NEAR(a.devices[0].latency_s, 0.012288 + 0.010 + 0.009 + 0.00016, 1e-9);
  // compare and best_of see it too: without the window the lone device is faster (throughput objective,
  // closed loop: one request in flight).
  EXPECT_LT(f.est->compare(now, with, scheme({{"a", Strategy::offload()}})), 0);
  EXPECT_EQ(f.est->best_of(now, with, {scheme({{"a", Strategy::offload()}})}), 0);
}

TEST(BatchingChoice, AWindowIsChosenWhereOnlyBatchingServesTheLoad) {
  Fixture f;
  // Eight open-loop devices at 2 req/s each (16 req/s) offload to a one-worker 'busy' server: 90 ms a
  // request alone (11.1 req/s: saturated), a batch of b takes 90 ms (1 + 0.5 (b - 1)). With a 200 ms
  // window the estimator's batch is 1 + 16 x 0.2 = 4.2: 90 x 2.6 / 4.2 = 55.7 ms a request, 17.9 req/s
  // > 16: served. Fewer unserved arrivals win first, so 200 ms / 8 is chosen over 0 ms.
  std::vector<DeviceState> ds;
  for (int i = 0; i < 8; ++i) {
    DeviceState d = device("d" + std::to_string(i), "slow", 100);
    d.in_flight = 0;
    d.arrival_rate_per_s = 2;
    d.strategy = Strategy::offload();
    ds.push_back(d);
  }
  SystemState st = state(ds, "busy", 1, 0, 8);
  st.servers[0].batch_size_limit = 8;
  Scheme all;
  for (const auto& d : ds) all.strategies[d.id] = Strategy::offload();
  std::vector<BatchingChosen> detail;
  const Scheme chosen = choose_batching(*f.est, st, all, BatchingChoices{{0, 200}, {8}}, &detail);
  ASSERT_EQ(chosen.batching.count("s0"), 1u);
  EXPECT_EQ(chosen.batching.at("s0"), (BatchSpec{200, 8}));
  ASSERT_EQ(detail.size(), 1u);
  EXPECT_EQ(detail[0].batching, (BatchSpec{200, 8}));
  EXPECT_EQ(detail[0].candidates, 2);                         // 0 ms / 8 (the current one) and 200 ms / 8
  EXPECT_NEAR(detail[0].predicted_throughput_rps, 16, 1e-6);  // every arrival served
  // A lone closed-loop device gains nothing from a window: the server keeps 0 ms (no entry).
  SystemState lone = state({device("a", "slow", 8)}, "srv", 1, 0, 8);
  lone.servers[0].batch_size_limit = 8;
  EXPECT_TRUE(choose_batching(*f.est, lone, scheme({{"a", Strategy::offload()}}), BatchingChoices{{0, 10, 50}, {2, 8}}, nullptr).batching.empty());
  // Sizes beyond the server's limit are never tried: limit 1 leaves only size 1 (no window effect).
  lone.servers[0].batch_size_limit = 1;
  lone.servers[0].batch_max_size = 1;
  EXPECT_TRUE(choose_batching(*f.est, lone, scheme({{"a", Strategy::offload()}}), BatchingChoices{{50}, {8}}, nullptr).batching.empty());
}

namespace {
// Two open-loop devices at 8 req/s each offloading to s0, a one-worker 'busy' server without batching:
// 90 ms a request, 11.1 req/s at most, 16 offered (saturated); s1 is a second such server, idle.
SystemState two_servers_one_loaded() {
  std::vector<DeviceState> ds;
  for (int i = 0; i < 2; ++i) {
    DeviceState d = device("d" + std::to_string(i), "slow", 100);
    d.in_flight = 0;
    d.arrival_rate_per_s = 8;
    d.strategy = Strategy::offload();
    ds.push_back(d);
  }
  SystemState st = state(ds, "busy", 1, 0, 1);
  st.servers.push_back(st.servers[0]);
  st.servers[1].id = "s1";
  return st;
}
}  // namespace

TEST(ServerChoice, ADeviceMovesOnlyWhereThePredictionGains) {
  // d0 first (state order): on s1 each server gets 8 req/s < 11.1, every arrival served (fewer unserved
  // arrivals win first): d0 moves. Then d1, alone on s0 now: moving it to s1 would put 16 req/s there
  // again: it stays. The scheme names d0 only.
  Fixture f;
  const SystemState st = two_servers_one_loaded();
  Scheme all = scheme({{"d0", Strategy::offload()}, {"d1", Strategy::offload()}});
  std::vector<ServerMove> moves;
  int candidates = 0;
  const Scheme chosen = choose_servers(*f.est, st, all, &moves, &candidates);
  EXPECT_EQ(chosen.servers, (std::map<std::string, std::string>{{"d0", "s1"}}));
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].device, "d0");
  EXPECT_EQ(moves[0].from, "s0");
  EXPECT_EQ(moves[0].to, "s1");
  EXPECT_EQ(candidates, 3);  // one other server per device, and the scheme as it came
  EXPECT_NEAR(f.est->predict(st, chosen).throughput_rps, 16, 1e-6);
  EXPECT_LT(f.est->predict(st, all).throughput_rps, 11.2);  // both on s0: at most 1 / 90 ms
  // The scheme already placing d0 on s1 is kept as it is (no move without a gain).
  moves.clear();
  EXPECT_EQ(choose_servers(*f.est, st, chosen, &moves, nullptr).servers, chosen.servers);
  EXPECT_TRUE(moves.empty());
}

TEST(ServerChoice, NeverToAServerThatIsDownOrLacksTheModelsTableNorAHelper) {
  Fixture f;
  SystemState st = two_servers_one_loaded();
  const Scheme all = scheme({{"d0", Strategy::offload()}, {"d1", Strategy::offload()}});
  st.servers[1].up = false;
  EXPECT_TRUE(choose_servers(*f.est, st, all, nullptr, nullptr).servers.empty());
  st.servers[1].up = true;
  st.servers[1].type = "nolut";  // no table for dgcnn on that type
  EXPECT_TRUE(choose_servers(*f.est, st, all, nullptr, nullptr).servers.empty());
  st.servers[1].type = "busy";
  for (auto& d : st.devices) d.generates = false;  // idle devices (helpers) stay with their server
  EXPECT_TRUE(choose_servers(*f.est, st, all, nullptr, nullptr).servers.empty());
}

TEST(ServerChoice, ADeviceLocalBecauseItsServerIsDownFailsOverOffloading) {
  // s0 is down, so d0 runs locally on the slow device: 0.9 s a request, 1.1 req/s. Offloading to the
  // idle s1 takes about 0.1 s (90 ms on the server plus the transfers): ~10 req/s: it moves with
  // offload, both ways of predicting (by server parts; on the whole system under a p95 constraint).
  // With s0 up the same local device stays (its strategy was the scheduler's choice); d1, local on the
  // up s1, never moves.
  Fixture f;
  SystemState st = two_servers_one_loaded();
  st.servers[0].up = false;
  st.servers[1].id = "s1";
  st.devices[1].server = "s1";
  const Scheme local = scheme({{"d0", Strategy::local()}, {"d1", Strategy::local()}});
  Constraints loose;
  loose.max_p95_s = 1e6;
  const AnalyticEstimator whole(f.luts, f.est->models(), Objective::throughput, loose);
  for (const AnalyticEstimator* est : std::vector<const AnalyticEstimator*>{f.est.get(), &whole}) {
    std::vector<ServerMove> moves;
    const Scheme chosen = choose_servers(*est, st, local, &moves, nullptr);
    EXPECT_EQ(chosen.servers, (std::map<std::string, std::string>{{"d0", "s1"}}));
    EXPECT_EQ(chosen.strategies.at("d0"), Strategy::offload());
    EXPECT_EQ(chosen.strategies.at("d1"), Strategy::local());
    ASSERT_EQ(moves.size(), 1u);
    EXPECT_EQ(moves[0].to, "s1");
    EXPECT_GT(est->predict(st, chosen).throughput_rps, est->predict(st, local).throughput_rps + 5);
  }
  st.servers[0].up = true;
  EXPECT_TRUE(choose_servers(*f.est, st, local, nullptr, nullptr).servers.empty());
}

TEST(ServerChoice, ByServerPartsAndOnTheWholeSystemChooseAlike) {
  // Without a p95 constraint each move is predicted on the two servers' parts; with one (here 1e6 s:
  // never binding, the same ranking) on the whole system. A seeded search over systems of 3 servers
  // (types, workers, up) and 9 devices (types, rates or closed loops, strategies, bandwidths) finds the
  // same moves both ways.
  Fixture f;
  Constraints loose;
  loose.max_p95_s = 1e6;
  const AnalyticEstimator whole(f.luts, f.est->models(), Objective::throughput, loose);
  std::mt19937_64 rng(36);
  const std::vector<std::string> device_types = {"slow", "fast", "busy"}, server_types = {"srv", "busy", "mid"};
  const std::vector<Strategy> strategies = {Strategy::offload(), Strategy::local(), Strategy::pp(3), Strategy::pp(6)};
  int moved = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<DeviceState> ds;
    for (int i = 0; i < 9; ++i) {
      DeviceState d = device("d" + std::to_string(i), device_types[rng() % 3], 1 + static_cast<double>(rng() % 200), "s" + std::to_string(rng() % 3));
      d.strategy = strategies[rng() % 4];
      if (rng() % 2) {
        d.in_flight = 0;
        d.arrival_rate_per_s = 1 + static_cast<double>(rng() % 20);
      }
      ds.push_back(d);
    }
    SystemState st = state(ds, server_types[rng() % 3], 1 + static_cast<int>(rng() % 2), 0, 1);
    for (int j = 1; j < 3; ++j) {
      st.servers.push_back(st.servers[0]);
      st.servers.back().id = "s" + std::to_string(j);
      st.servers.back().type = server_types[rng() % 3];
      st.servers.back().up = rng() % 5 != 0;
    }
    Scheme sc;
    for (const auto& d : ds) sc.strategies[d.id] = d.strategy;
    std::vector<ServerMove> a, b;
    const Scheme by_parts = choose_servers(*f.est, st, sc, &a, nullptr);
    const Scheme by_whole = choose_servers(whole, st, sc, &b, nullptr);
    EXPECT_EQ(by_parts.servers, by_whole.servers) << "trial " << trial;
    moved += static_cast<int>(a.size());
  }
  EXPECT_GT(moved, 20);  // the search moves devices, not only ties
}

TEST(ServerChoice, TheWrappedSchedulerDecidesAndTheRecordNamesTheMoves) {
  Fixture f;
  const SystemState st = two_servers_one_loaded();
  ServerChoosingScheduler s(
      std::make_unique<StaticScheduler>(std::map<std::string, Strategy>{{"d0", Strategy::offload()}, {"d1", Strategy::offload()}}), *f.est);
  const Scheme chosen = s.decide(st);
  EXPECT_EQ(chosen.servers, (std::map<std::string, std::string>{{"d0", "s1"}}));
  EXPECT_EQ(chosen.strategies.at("d0"), Strategy::offload());
  EXPECT_EQ(s.decision_detail(), R"({"servers":{"candidates":3,"moved":[{"device":"d0","from":"s0","to":"s1"}]}})");
}

namespace {
// A device with power: idle 2 W, busy 6 W, radio `radio_j_per_mb` J per 1e6 bytes.
DeviceState powered(const std::string& id, const std::string& type, double mbps, double radio_j_per_mb) {
  DeviceState d = device(id, type, mbps);
  d.idle_w = 2;
  d.busy_w = 6;
  d.radio_j_per_mb = radio_j_per_mb;
  return d;
}
}  // namespace

TEST(Estimator, EnergyPerInferenceIsIdlePlusComputePlusRadioOverThroughput) {
  Fixture f;
  // Local on the slow device: 0.9 s a request, busy all the time: 2 + 4 W = 6 W at 1/0.9 req/s: 5.4 J.
  SystemState s = state({powered("a", "slow", 8, 0.05)});
  Prediction local = f.est->predict(s, scheme({{"a", Strategy::local()}}));
  EXPECT_NEAR(local.power_w, 6, 1e-9);
  EXPECT_NEAR(local.energy_per_inference_j, 5.4, 1e-9);
  // Offloading: 21.448 ms a request (12.288 up, 9 server, 0.16 down), the device idle: 2 W x 21.448 ms
  // plus the radio's 0.05 J/MB x (12,288 + 160) B = 0.0006224 J: 0.0435184 J.
  Prediction off = f.est->predict(s, scheme({{"a", Strategy::offload()}}));
  EXPECT_NEAR(off.energy_per_inference_j, 2 * 0.021448 + 0.0006224, 1e-9);
}

TEST(Estimator, RadioPowerStatesPerInferenceFollowTheCycle) {
  Fixture f;
  // The radio of tests/unit/test_radio_energy.cpp: base 1 W, 0.5 / 0.25 W per Mbit/s up / down, tail 2 s
  // at 0.6 W, idle 0.1 W, promotion 1 J. Offloading closed-loop: a cycle of 21.448 ms, of which the
  // radio moves (12,288 + 160) B at 1e6 B/s = 12.448 ms; the other 9 ms are two gaps of 4.5 ms, both in
  // the tail: 2 x 0.6 x 0.0045 = 0.0054 J. Base 0.012448 J; rates 0.098304 x 0.5 + 0.00128 x 0.25 =
  // 0.049472 J. The board idles 2 W x 21.448 ms = 0.042896 J.
  DeviceState d = powered("a", "slow", 8, 0);
  d.radio.base_w = 1;
  d.radio.up_w_per_mbps = 0.5;
  d.radio.down_w_per_mbps = 0.25;
  d.radio.tail_w = 0.6;
  d.radio.tail_s = 2;
  d.radio.idle_w = 0.1;
  d.radio.promotion_w = 2;
  d.radio.promotion_s = 0.5;
  Prediction off = f.est->predict(state({d}), scheme({{"a", Strategy::offload()}}));
  EXPECT_NEAR(off.energy_per_inference_j, 0.042896 + 0.012448 + 0.049472 + 0.0054, 1e-9);
  // With a 1 ms tail each 4.5 ms gap is 1 ms of tail, 3.5 ms idle and a promotion (1 J) after it.
  d.radio.tail_s = 0.001;
  off = f.est->predict(state({d}), scheme({{"a", Strategy::offload()}}));
  EXPECT_NEAR(off.energy_per_inference_j, 0.042896 + 0.012448 + 0.049472 + 2 * (0.0006 + 0.00035 + 1), 1e-9);
  // Local: the radio idles (0.1 W) besides the board's 6 W, over 0.9 s a request.
  Prediction local = f.est->predict(state({d}), scheme({{"a", Strategy::local()}}));
  EXPECT_NEAR(local.energy_per_inference_j, (6 + 0.1) * 0.9, 1e-9);
}

TEST(Estimator, TheP95IsTheMixturesPercentileOfFixedPartsAndTheirWaitsTails) {
  Fixture f;
  // Two local closed-loop devices never wait: the slow one (0.9 s, 1.11 req/s) carries 4.76 % of the
  // 23.33 req/s, less than 5 %: the p95 is the fast one's 45 ms.
  Prediction p =
      f.est->predict(state({device("a", "slow", 8), device("b", "fast", 8)}), scheme({{"a", Strategy::local()}, {"b", Strategy::local()}}));
  EXPECT_NEAR(p.p95_latency_s, 0.045, 1e-8);
  // An open-loop device at 5 req/s on the 'busy' device (90 ms): an M/D/1 queue at rho = 0.45, whose
  // wait's tail is P(W > x) ~ C exp(-theta x) (sched/queue_tail.hpp): y = theta 0.09 solves
  // 0.45 (e^y - 1) = y, y = 1.429529 (e^y = 4.176731: 0.45 x 3.176731 = 1.429529); C = 0.55 / (0.45 x
  // 4.176731 - 1) = 0.55 / 0.879529 = 0.625335. C exp(-theta x) = 0.05 at x = 0.09 ln(12.5067) /
  // 1.429529 = 0.159053 s: p95 = 0.09 + 0.159053 s. (The exponential of the mean wait, 0.45 exp(-x /
  // 0.081818), put it at 0.09 + 0.179772 s: 8 % higher.)
  DeviceState d = device("c", "busy", 8);
  d.in_flight = 0;
  d.arrival_rate_per_s = 5;
  p = f.est->predict(state({d}), scheme({{"c", Strategy::local()}}));
  const double y = 1.429529, c = 0.55 / (0.45 * std::exp(y) - 1);
  EXPECT_NEAR(0.45 * (std::exp(y) - 1), y, 1e-6);
  EXPECT_NEAR(c, 0.625335, 1e-6);
  EXPECT_NEAR(p.p95_latency_s, 0.09 + 0.09 * std::log(c / 0.05) / y, 1e-6);
  // Its mean latency keeps the M/D/1 mean wait: 0.45 x 0.09 / (2 x 0.55) = 0.0368182 s.
  EXPECT_NEAR(p.mean_latency_s, 0.09 + 0.45 * 0.09 / 1.1, 1e-9);
}

TEST(Estimator, AClosedLoopWaitsInTheOthersBatchesOncePerBatchNotAsOftenAsTheServerIsBusy) {
  Fixture f;
  // One worker ('busy': 10 ms a stage), no batching. Device a ('fast', 8 Mbit/s = 1e6 B/s) at pp(8):
  // 40 ms on the device, 1,024 B up (1.024 ms), 10 ms on the server, 160 B down (0.16 ms): 51.184 ms
  // without waits, one request in flight. Device h ('slow', 0.044 Mbit/s = 5,500 B/s) offloads:
  // 12,448 B over its link (2.2633 s) and 90 ms on the server, about 0.42 req/s, so h's share of the
  // server's time is rho_h ~ 0.42 x 0.09 = 0.038 and its share of the requests ~ 0.42 / 18.7 = 2.3 %
  // (a: ~18.3 req/s, its ~3.6 ms mean wait included).
  // Had a's requests waited as often as the server is busy with h (Poisson arrivals: probability rho_h),
  // 2.3 % + 97.7 % x 3.8 % = 6.0 % of all requests would be slower than 51.184 ms: the p95 in a's wait
  // tail. But a closed loop held behind h's 90 ms batch sends nothing more until it ends: one request
  // of a waits per batch of h met, a fraction rho_h x min(1, (1 / lambda_a) / 0.09) = 3.8 % x 0.61 =
  // 2.3 % of a's requests. 2.3 % + 97.7 % x 2.3 % = 4.5 % < 5 %: the p95 is a's fixed 51.184 ms.
  SystemState s = state({device("a", "fast", 8), device("h", "slow", 0.044)}, "busy");
  Prediction p = f.est->predict(s, scheme({{"a", Strategy::pp(8)}, {"h", Strategy::offload()}}));
  ASSERT_NEAR(p.devices[1].throughput_rps, 0.42, 0.01);
  ASSERT_NEAR(p.devices[0].throughput_rps, 18.3, 0.2);
  EXPECT_NEAR(p.p95_latency_s, 0.040 + 0.001024 + 0.010 + 0.00016, 1e-8);
}

TEST(Estimator, AClosedPipelineWaitsForItsSiblingsOnlyWhereABottleneckAfterItsFirstStageBinds) {
  Fixture f;
  // pp(6) on the 'busy' device (10 ms a stage) at 8 Mbit/s, two in flight (pp's default): the device's
  // 60 ms bind (upload 8,192 B = 8.192 ms, server 3 ms). The loop creates an input only once the device
  // is free (core/arrival_process.hpp), so no request waits for its sibling: each takes its own path,
  // 60 + 8.192 + 3 + 0.16 = 71.352 ms, every time (no queue anywhere): the p95 is that. (Little's law
  // applied regardless gave 2 / (1 / 60 ms) = 120 ms: the misses of bench/estimator_accuracy.py.)
  DeviceState busy = device("a", "busy", 8);
  busy.in_flight = 0;  // the strategy's default: 2 for pp
  Prediction p = f.est->predict(state({busy}), scheme({{"a", Strategy::pp(6)}}));
  EXPECT_NEAR(p.throughput_rps, 1 / 0.060, 1e-6);
  EXPECT_NEAR(p.p95_latency_s, 0.071352, 1e-8);
  EXPECT_NEAR(p.mean_latency_s, 0.071352, 1e-8);
  // pp(6) on the 'fast' device (30 ms) at 1 Mbit/s (125,000 B/s): the upload's 65.536 ms binds, after the
  // device. The device computes the next input while the uplink carries this one, which then waits for
  // the uplink: two requests are always in the loop, so each spends 2 / rate = 2 x 65.536 ms.
  DeviceState fast = device("a", "fast", 1);
  fast.in_flight = 0;
  p = f.est->predict(state({fast}), scheme({{"a", Strategy::pp(6)}}));
  EXPECT_NEAR(p.throughput_rps, 1 / 0.065536, 1e-6);
  EXPECT_NEAR(p.p95_latency_s, 2 * 0.065536, 1e-8);
  EXPECT_NEAR(p.mean_latency_s, 2 * 0.065536, 1e-8);  // the mean too (objective: latency)
}

TEST(Estimator, AnOpenLoopDataParallelDeviceSplitsItsInputsAsTheRouterDoes) {
  Fixture f;
  // The 'fast' device (45 ms whole) at 1000 Mbit/s: the server side's round trip is 0.098304 ms up +
  // 9 ms + 0.00128 down = 9.099584 ms, shorter than 45: an input finding both sides free goes to the
  // server (core/data_parallel_router.hpp). Poisson 20 req/s. The server side a takes the inputs that
  // find it free, R (1 - ua), and of those finding both busy the share of its speed, ca / (ca + cb) =
  // 45 / (45 + 9.099584) = 0.831799: la = R [(1 - ua) + ua ub 0.831799], ua = la 0.009099584, ub = (R -
  // la) 0.045. At la = 17.198: ua = 0.156497, ub = 0.126077, 20 [0.843503 + 0.016412] = 17.198: the
  // fixed point; the device takes 2.802 req/s. (The uplink's own M/D/1 wait, 0.1 us, is left out by
  // hand: 0.1 % tolerance.) The split in proportion to the sides' speeds would give 16.64 / 3.36.
  DeviceState d = device("a", "fast", 1000);
  d.in_flight = 0;
  d.arrival_rate_per_s = 20;
  Prediction p = f.est->predict(state({d}), scheme({{"a", Strategy::data_parallel()}}));
  EXPECT_NEAR(p.devices[0].server_rps, 17.198, 17.198e-3);
  EXPECT_NEAR(p.throughput_rps, 20, 1e-9);
  // An input finding both sides busy (0.156497 x 0.126077 = 0.019731) waits in the device's one queue
  // for the first to free: 0.019731 / (2 (109.895 + 22.222 - 20 req/s)) = 0.088 ms (M/M/c's wait
  // halved: hold times that do not vary). Mean: (17.198 x 9.0996 + 2.802 x 45) / 20 + 0.088 = 14.217 ms.
  EXPECT_NEAR(p.devices[0].latency_s, 0.0142172, 0.0142172e-3);
  EXPECT_NEAR(p.unserved_rps, 0, 1e-9);
  // Ten 'slow' devices (0.9 s whole: 1.11 req/s each) at 2 req/s on the 'busy' server (90 ms a request,
  // one worker: 11.1 req/s). Alone, the server side (90.1 ms) is preferred, and the speeds' split would
  // send it 18.2 req/s: 7.1 unserved. The router sends a device's input to the server only when that
  // side is free, so as the server's queue grows its inputs go to the devices: the 20 req/s fit the
  // 11.1 + 11.1 of both sides, all served, the server below its capacity.
  std::vector<DeviceState> ds;
  std::map<std::string, Strategy> all;
  for (int i = 0; i < 10; ++i) {
    DeviceState x = device("d" + std::to_string(i), "slow", 1000);
    x.in_flight = 0;
    x.arrival_rate_per_s = 2;
    ds.push_back(x);
    all[x.id] = Strategy::data_parallel();
  }
  p = f.est->predict(state(ds, "busy", 1), scheme(all));
  EXPECT_NEAR(p.throughput_rps, 20, 1e-6);
  EXPECT_NEAR(p.unserved_rps, 0, 1e-6);
  EXPECT_LT(p.server_utilisation.at("s0"), 1.0);
  EXPECT_GT(p.devices[0].server_rps, 0.5);  // the server still takes a share
}

TEST(Estimator, ConstraintsComeBeforeTheObjective) {
  // The fast device: local 45 ms (22.2 req/s, 6 W: 0.27 J), offloading 21.448 ms (46.6 req/s) with a
  // costly radio (100 J/MB: 1.2448 J a request, 1.2877 J in all). Energy alone: local.
  Fixture base;
  SystemState s = state({powered("a", "fast", 8, 100)});
  const Scheme local = scheme({{"a", Strategy::local()}}), off = scheme({{"a", Strategy::offload()}});
  AnalyticEstimator energy(base.luts, base.est->models(), Objective::energy);
  EXPECT_GT(energy.compare(s, local, off), 0);
  // min_throughput_rps 30: local (22.2) misses it, offloading meets it, and wins.
  Constraints k;
  k.min_throughput_rps = 30;
  AnalyticEstimator with(base.luts, base.est->models(), Objective::energy, k);
  EXPECT_LT(with.compare(s, local, off), 0);
  EXPECT_EQ(k.missed(with.predict(s, local)), std::vector<std::string>{"throughput 22.22 req/s < 30 req/s"});
  EXPECT_TRUE(k.missed(with.predict(s, off)).empty());
  // max_p95_ms 30: local's 45 ms misses it.
  Constraints p95;
  p95.max_p95_s = 0.030;
  AnalyticEstimator tail(base.luts, base.est->models(), Objective::energy, p95);
  EXPECT_LT(tail.compare(s, local, off), 0);
  EXPECT_EQ(p95.missed(tail.predict(s, local)), std::vector<std::string>{"p95 45 ms > 30 ms"});
  // Nobody meets 1000 req/s: the one missing by less (offloading, 46.6) wins, and the miss is said.
  Constraints none;
  none.min_throughput_rps = 1000;
  AnalyticEstimator far(base.luts, base.est->models(), Objective::energy, none);
  EXPECT_LT(far.compare(s, local, off), 0);
  EXPECT_FALSE(none.missed(far.predict(s, off)).empty());
}

TEST(Schedulers, EveryOneFindsTheObviousChoice) {
  Fixture f(Objective::latency);
  // A fast link and a fast server: offloading (21.4 ms) beats 0.9 s locally.
  SystemState good = state({device("a", "slow", 8)});
  // A 0.01 Mbit/s link: 12288 B take 9.8 s; local (45 ms on the fast device) wins.
  SystemState bad = state({device("a", "fast", 0.01)});
  GreedyScheduler greedy(*f.est);
  DpScheduler dp(*f.est);
  OracleScheduler oracle(*f.est);
  HierarchicalScheduler hier(*f.est);
  for (Scheduler* s : std::vector<Scheduler*>{&greedy, &oracle, &hier}) {
    EXPECT_EQ(s->decide(good).strategies.at("a"), Strategy::offload()) << s->name();
    EXPECT_EQ(s->decide(bad).strategies.at("a"), Strategy::local()) << s->name();
  }
  // dp maximises isolated throughput within server capacity: with one device that is the oracle's
  // throughput-optimal choice.
  Fixture ft(Objective::throughput);
  OracleScheduler oracle_t(*ft.est);
  DpScheduler dp_t(*ft.est);
  EXPECT_NEAR(ft.est->score(good, dp_t.decide(good)), ft.est->score(good, oracle_t.decide(good)), 1e-9);
}

TEST(Schedulers, OracleRefusesLargeSystems) {
  Fixture f;
  std::vector<DeviceState> many;
  for (int i = 0; i < 6; ++i) many.push_back(device("d" + std::to_string(i), "slow", 8));
  OracleScheduler oracle(*f.est, 1000);  // 11 options ^ 6 devices = 1.8 M schemes
  try {
    oracle.decide(state(many));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_schemes = 1000"), std::string::npos) << e.what();
  }
}

TEST(Schedulers, HierarchicalMatchesOracleOnSmallSystems) {
  for (Objective o : {Objective::latency, Objective::throughput}) {
    Fixture f(o);
    OracleScheduler oracle(*f.est);
    HierarchicalScheduler hier(*f.est, 20, false);
    for (double mbps : {0.05, 1.0, 8.0, 100.0}) {
      SystemState s = state({device("a", "slow", mbps), device("b", "fast", mbps)}, "srv", 1, 0, 1);
      const Scheme h = hier.decide(s), best = oracle.decide(s);
      EXPECT_NEAR(f.est->compare(s, h, best), 0, 1e-6) << mbps << " Mbps: " << h.to_string() << " vs " << best.to_string();
    }
  }
}

TEST(Schedulers, GreedyCommitsEarlyWhereOracleDoesNot) {
  // One slow one-worker server (90 ms per input). Device "first" gains little from it (99 ms locally,
  // 91 ms offloaded alone); device "second" gains a lot (0.9 s locally). Greedy decides "first" alone
  // and gives it the server; "second" then shares it and both queue (about 180 ms each). The optimum
  // keeps "first" local and offloads "second": (99 + 91) / 2 ms, about twice as good.
  Fixture f(Objective::latency);
  SystemState s = state({device("first", "mid", 100), device("second", "slow", 100)}, "busy");
  GreedyScheduler greedy(*f.est);
  OracleScheduler oracle(*f.est);
  const Scheme g = greedy.decide(s), o = oracle.decide(s);
  EXPECT_EQ(g.strategies.at("first"), Strategy::offload()) << g.to_string();
  EXPECT_EQ(o.strategies.at("first"), Strategy::local()) << o.to_string();
  EXPECT_EQ(o.strategies.at("second"), Strategy::offload()) << o.to_string();
  EXPECT_GT(f.est->compare(s, o, g), 0.8);  // R = L_greedy / L_oracle > 1.8
  HierarchicalScheduler hier(*f.est, 10, false);
  EXPECT_NEAR(f.est->compare(s, hier.decide(s), o), 0, 1e-9);
}

TEST(Schedulers, DpKeepsServerCapacityForTheDeviceThatGainsMost) {
  // Throughput objective, same system.
  Fixture f(Objective::throughput);
  SystemState s = state({device("first", "mid", 100), device("second", "slow", 100)}, "busy");
  GreedyScheduler greedy(*f.est);
  DpScheduler dp(*f.est);
  const Scheme g = greedy.decide(s), d = dp.decide(s);
  // Greedy lets "first" use the server; the knapsack's capacity keeps it local so that "second",
  // the device that gains most, gets the server. (The estimator, which models sharing, rates the two
  // schemes within 1 %: dp is exact for its own capacity model, not for the estimator's.)
  EXPECT_NE(g.strategies.at("first"), Strategy::local()) << g.to_string();
  EXPECT_EQ(d.strategies.at("first"), Strategy::local()) << d.to_string();
  EXPECT_NE(d.strategies.at("second"), Strategy::local()) << d.to_string();
  EXPECT_NEAR(f.est->score(s, d) / f.est->score(s, g), 1, 0.01);
}

TEST(Schedulers, DpIsExactForItsKnapsackModel) {
  Fixture f(Objective::throughput);
  SystemState s = state({device("a", "fast", 100), device("b", "slow", 100), device("c", "busy", 100)}, "busy");
  DpScheduler dp(*f.est, 1000);
  dp.decide(s);
  // Brute force over the same model: isolated throughputs add up while server load stays <= 1.
  struct Opt {
    double value, load;
  };
  std::vector<std::vector<Opt>> per_device;
  for (const auto& d : s.devices) {
    SystemState alone = s;
    for (auto& x : alone.devices) x.connected = x.id == d.id;
    std::vector<Opt> opts;
    for (const Strategy& o : all_options(9)) {
      Prediction p = f.est->predict(alone, scheme({{d.id, o}}));
      opts.push_back({p.throughput_rps, p.server_utilisation.at("s0")});
    }
    per_device.push_back(opts);
  }
  double best = 0;
  for (const auto& x : per_device[0])
    for (const auto& y : per_device[1])
      for (const auto& z : per_device[2])
        if (x.load + y.load + z.load <= 1 + 1e-12) best = std::max(best, x.value + y.value + z.value);
  // Capacity is discretised (1/1000 of the worker, rounded up), so dp can only be a little more careful.
  EXPECT_LE(dp.last_objective(), best + 1e-9);
  EXPECT_GT(dp.last_objective(), best * 0.99);
}

TEST(Schedulers, GcodeSwitchesOnlyBetweenPresetSplitsOnBandwidth) {
  Fixture f;
  GcodeScheduler g(*f.est);
  SystemState s = state({device("a", "busy", 40)});
  // Latency of pp(k) alone: k x 10 ms on the busy device + the bytes at k up + (9 - k) x 1 ms + 160 B
  // down. Bytes at split k (`coinfer model show dgcnn --dataset modelnet40`): 256 KB .. 4 MB for k = 1..5,
  // then 8,192, 2,048 and 1,024 B for k = 6, 7, 8. At 40 Mbit/s (5e6 B/s) pp(6) is best: 60 + 1.64 + 3 +
  // 0.03 = 64.7 ms (pp(1): 10 + 52.4 + 8 = 70.5 ms; pp(7): 70 + 0.41 + 2 = 72.4 ms).
  const Strategy at40 = g.decide(s).strategies.at("a");
  EXPECT_EQ(at40, Strategy::pp(6));  // GCoDE only partitions
  // 0.2 Mbit/s is below every preset level (40, 20, ..., 0.625 >= min 0.5): the lowest level's split.
  // At 0.625 Mbit/s (78,125 B/s) pp(8): 80 + 13.1 + 1 + 2.0 = 96.2 ms beats pp(7): 70 + 26.2 + 2 + 2.0 =
  // 100.3 ms and pp(6): 60 + 104.9 + 3 + 2.0 = 169.9 ms.
  s.devices[0].link_bandwidth_mbps = 0.2;
  const Strategy low = g.decide(s).strategies.at("a");
  EXPECT_EQ(low, Strategy::pp(8));
  s.devices[0].link_bandwidth_mbps = 40;
  EXPECT_EQ(g.decide(s).strategies.at("a"), at40);  // back to the nominal preset
  // A server overload does not move it (bandwidth-only awareness).
  s.servers[0].queue_length = 1000;
  EXPECT_EQ(g.decide(s).strategies.at("a"), at40);
}

TEST(StateJson, StateAndSchemeRoundTrip) {
  SystemState s = state({device("a", "slow", 8), device("b", "fast", 2.5)}, "srv", 3, 10, 5);
  s.devices[1].strategy = Strategy::pp(4);
  s.devices[1].connected = false;
  s.time_s = 12.5;
  s.devices[0].strategy = Strategy::pp(1, 3);  // a cloud tier: the server's cloud and its WAN backlog travel too
  s.servers[0].cloud = "far";
  s.servers[0].to_cloud = 7;
  SystemState back = state_from_json(state_to_json(s));
  EXPECT_EQ(state_to_json(back), state_to_json(s));
  EXPECT_TRUE(back == s);
  EXPECT_EQ(back.devices[1].strategy, Strategy::pp(4));
  EXPECT_EQ(back.devices[0].strategy, Strategy::pp(1, 3));
  EXPECT_EQ(back.servers[0].batch_max_size, 5);
  EXPECT_EQ(back.servers[0].cloud, "far");
  EXPECT_EQ(back.servers[0].to_cloud, 7);
  Scheme sc = scheme({{"a", Strategy::data_parallel()}, {"b", Strategy::pp(3)}});
  sc.helpers = {"c"};
  EXPECT_EQ(scheme_from_json(scheme_to_json(sc)), sc);
  EXPECT_THROW(state_from_json("{\"time_s\": 1}"), InputError);
  EXPECT_THROW(scheme_from_json("not json"), InputError);
}

TEST(Schedulers, UniformAndStaticSchedulersDoWhatTheySay) {
  Fixture f;
  SystemState s = state({device("a", "slow", 8), device("b", "fast", 8)});
  s.devices[1].connected = false;
  EXPECT_EQ(UniformScheduler("offload", Strategy::offload()).decide(s).to_string(), "a=offload helpers=[]");
  EXPECT_EQ(UniformScheduler("local", Strategy::local()).decide(s).to_string(), "a=local helpers=[]");
  // static: the configured strategies; with helpers, the connected idle devices.
  s.devices[1].connected = true;
  s.devices[1].generates = false;
  StaticScheduler st({{"a", Strategy::pp(3)}}, true);
  EXPECT_EQ(st.decide(s).to_string(), "a=pp(3) b=local helpers=[b]");
  EXPECT_EQ(StaticScheduler({{"a", Strategy::pp(3)}}).decide(s).helpers.size(), 0u);
}

// A search over every shipped device type, model and dataset, on either server type, at 1, 5 and 40
// Mbit/s, one device alone: hierarchical is never predicted worse than `local` or `offload` by its own
// estimator, for either objective (with objective latency it could not reach `local`, e.g. a
// Jetson Nano on gcode at 1 Mbit/s given data_parallel at 8.2 ms although local was rated 4.3 ms).
TEST(Schedulers, HierarchicalNeverLosesToTheEndsForEitherObjective) {
  LutSet luts = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut"});
  ModelSpecs specs;
  for (const auto& m : catalog().model_names())
    for (const auto& d : catalog().datasets_for(m)) specs.emplace(ModelKey{m, d}, catalog().instantiate(m, d));
  int cases = 0;
  for (Objective obj : {Objective::throughput, Objective::latency}) {
    AnalyticEstimator est(luts, specs, obj);
    HierarchicalScheduler h(est);
    for (const char* server_type : {"gtx1060", "i7-7700"})
      for (const char* type : {"rpi4b", "rpi3b", "jetson-tx2", "jetson-nano"})
        for (const auto& [key, spec] : specs)
          for (double mbps : {1.0, 5.0, 40.0}) {
            SystemState st;
            ServerState sv;
            sv.id = "s0";
            sv.type = server_type;
            st.servers.push_back(sv);
            DeviceState d = device("d", type, mbps);
            d.model = spec.name;
            d.dataset = spec.dataset.name;
            if (spec.dataset.nodes > 5000) continue;  // the large graphs: minutes of LUT time, same code path
            st.devices.push_back(d);
            const Scheme chosen = h.decide(st);
            for (const Strategy& end : {Strategy::local(), Strategy::offload()}) {
              Scheme alt;
              alt.strategies["d"] = end;
              EXPECT_LE(est.compare(st, alt, chosen), 1e-12)
                  << (obj == Objective::latency ? "latency" : "throughput") << " " << type << " " << key.to_string() << " at " << mbps
                  << " Mbit/s on " << server_type << ": " << end.to_string() << " beats " << chosen.to_string();
            }
            ++cases;
          }
  }
  EXPECT_GT(cases, 100);
}

// dp and gcode optimise system throughput; objective: latency is refused, not ignored.
TEST(Schedulers, DpAndGcodeRefuseTheLatencyObjective) {
  for (const char* name : {"dp", "gcode"}) {
    Scenario s;
    s.scheduler.name = name;
    s.scheduler.params["objective"] = "latency";
    Fixture f;
    try {
      make_scheduler(s, *f.est);
      ADD_FAILURE() << name << " accepted objective: latency";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("throughput"), std::string::npos) << e.what();
    }
    s.scheduler.params["objective"] = "throughput";
    EXPECT_NO_THROW(make_scheduler(s, *f.est)) << name;
  }
}

// Hierarchical's coarse stage under a budget (max_schemes below the product of the options: coordinate
// rounds) against the exhaustive ranking, searched over random systems of 7 Pi 4B / Nano / TX2 with the
// shipped LUTs, random links 1-100 Mbit/s and a GTX 1060 with 1 or 2 workers (every device its own
// group: 3^7 = 2187 combinations). The bounded search's scheme must come within 5 % of the exhaustive
// one's predicted throughput on every system and within 1 % on average. (Measured: equal on all 20.
// Coordinate rounds that took each group's last option instead of its best fell to 0.74 on average.)
TEST(Schedulers, BoundedCoarseStageIsCloseToTheExhaustiveOne) {
  const LutSet luts = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut"});
  ModelSpecs specs;
  specs.emplace(ModelKey{"dgcnn", "modelnet40"}, catalog().instantiate("dgcnn", "modelnet40"));
  const AnalyticEstimator est(luts, specs);
  RandomStream rng(11, StreamPurpose::test, 0);
  const std::vector<std::string> types = {"rpi4b", "jetson-nano", "jetson-tx2"};
  double sum = 0, worst = 1;
  const int systems = 20;
  for (int k = 0; k < systems; ++k) {
    std::vector<DeviceState> devs;
    for (int i = 0; i < 7; ++i)
      devs.push_back(device("d" + std::to_string(i), types[rng.next_u64() % types.size()], std::exp(rng.next_unit() * std::log(100.0))));
    const SystemState s = state(devs, "gtx1060", 1 + static_cast<int>(rng.next_u64() % 2), 10, 4);
    HierarchicalScheduler exhaustive(est, 10, true, 1000000), bounded(est, 10, true, 1);
    const double a = est.score(s, exhaustive.decide(s)), b = est.score(s, bounded.decide(s));
    sum += b / a;
    worst = std::min(worst, b / a);
  }
  std::printf("bounded / exhaustive throughput: mean %.4f, worst %.4f over %d systems\n", sum / systems, worst, systems);
  EXPECT_GE(worst, 0.95);
  EXPECT_GE(sum / systems, 0.99);
}

// greedy and hierarchical refuse, before deciding, systems whose decision work exceeds scheduler.max_work.
TEST(Schedulers, SearchesWhoseWorkExceedsMaxWorkAreRefusedAtLoad) {
  Fixture f;
  std::vector<DeviceState> devs;
  for (int i = 0; i < 4; ++i) devs.push_back(device("d" + std::to_string(i), i % 2 ? "slow" : "fast", 8.0 + i));
  devs.push_back(device("idle", "fast", 8));
  devs.back().generates = false;  // a helper: no options, no predictions
  const SystemState st = state(devs);
  // greedy: dgcnn has n = 9 stages, so n + 2 = 11 options (offload, pp(1..8), local, data_parallel); the
  // i-th device's step is a new state of i devices on the one server: its first option solves them all
  // (i), the other 10 re-solve the server (i each): 11 x (1 + 2 + 3 + 4) = 110 device-solves.
  EXPECT_DOUBLE_EQ(greedy_work(*f.est, st), 110);
  // hierarchical without shared groups: 4 groups of 3 options; 3^4 = 81 <= max_schemes 729, so stage 1
  // ranks all 81 combinations; stage 2 one step per split: 4 x (9 + 1) = 40; each solving the server's
  // 4 devices.
  EXPECT_DOUBLE_EQ(hierarchical_work(*f.est, st, false, 729), 4 * (81 + 40));
  // Above max_schemes (80 < 81): one coordinate round, 4 x 3 options.
  EXPECT_DOUBLE_EQ(hierarchical_work(*f.est, st, false, 80), 4 * (12 + 40));
  // Two servers, devices alternating (d0, d2 on s0; d1, d3 on s1): a candidate re-solves only the
  // changed device's server. greedy: step i solves the i devices decided, then 10 options x the k
  // devices decided on its server: (1 + 10 x 1) + (2 + 10 x 1) + (3 + 10 x 2) + (4 + 10 x 2) = 70.
  SystemState two = st;
  two.servers.push_back(two.servers[0]);
  two.servers[1].id = "s1";
  for (int i : {1, 3}) two.devices[static_cast<size_t>(i)].server = "s1";
  EXPECT_DOUBLE_EQ(greedy_work(*f.est, two), 70);
  // hierarchical: stage 1's 81 combinations change every group (each solves all 4 devices): 324; stage
  // 2's 4 x 10 steps each re-solve a 2-device server: 80.
  EXPECT_DOUBLE_EQ(hierarchical_work(*f.est, two, false, 729), 81 * 4 + 40 * 2);
  // Coordinate round instead: 4 x 3 options, each re-solving a 2-device server: 24.
  EXPECT_DOUBLE_EQ(hierarchical_work(*f.est, two, false, 80), 12 * 2 + 40 * 2);
  Scenario s;
  s.file = "big.yaml";
  for (const char* name : {"greedy", "hierarchical"}) {
    s.scheduler = SchedulerSpec{};
    s.scheduler.name = name;
    s.scheduler.params["share_groups"] = "false";
    if (std::string(name) == "greedy") s.scheduler.params.erase("share_groups");
    const double work = std::string(name) == "greedy" ? 110 : 4 * (81 + 40);
    s.scheduler.params["max_work"] = format_double(work);
    EXPECT_NO_THROW(check_decision_work(s, *f.est, st)) << name;
    s.scheduler.params["max_work"] = format_double(work - 1);
    try {
      check_decision_work(s, *f.est, st);
      ADD_FAILURE() << name << " accepted work above max_work";
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "scheduler.max_work") << e.what();
      EXPECT_NE(std::string(e.what()).find("on 4 devices"), std::string::npos) << e.what();
    }
  }
  // Disconnected devices count too: the check is for the whole system (every device that may join).
  SystemState later = st;
  later.devices[0].connected = false;
  s.scheduler = SchedulerSpec{};
  s.scheduler.name = "greedy";
  s.scheduler.params["max_work"] = "109";
  EXPECT_THROW(check_decision_work(s, *f.est, later), InputError);
  // Other schedulers are not bounded this way.
  s.scheduler.name = "dp";
  EXPECT_NO_THROW(check_decision_work(s, *f.est, st));
}

// A device with several processors: the search schedulers' options add its device stages
// whole on each other processor whose own table is loaded; nothing is added without that table.
TEST(Schedulers, SearchOptionsPlaceTheDevicePartOnEachProcessorWithItsOwnTable) {
  const std::string root = COINFER_SOURCE_DIR;
  ModelSpecs specs;
  specs.emplace(ModelKey{"gcode", "modelnet40"}, catalog().instantiate("gcode", "modelnet40"));
  DeviceState d;
  d.id = "tx2";
  d.type = "jetson-tx2";
  d.model = "gcode";
  d.dataset = "modelnet40";
  d.processor = "gpu";
  const DeviceHardware hw = test::gpu_cpu_board(8e9);
  d.hardware = std::make_shared<const DeviceHardware>(hw);
  // gcode has 9 stages: local, offload, pp(1..8), data_parallel = 11; on the CPU: local and pp(1..8);
  // then, jointly with the split, local, pp(1..8) and data_parallel with the stages they
  // run on the board placed by the operator-placement DP (sched/operator_placement.hpp) where that is
  // not one whole processor: 10 more.
  const LutSet both = load_luts({root + "/traces/lut", root + "/traces/lut_processors/jetson-tx2-cpu.h5"});
  const AnalyticEstimator with_cpu(both, specs);
  std::vector<std::string> texts;
  for (const Strategy& s : device_options(with_cpu, d)) texts.push_back(s.to_string());
  ASSERT_EQ(texts.size(), 30u);
  EXPECT_EQ(texts[0], "local");
  EXPECT_EQ(texts[11], "local[cpu]");
  EXPECT_EQ(texts[12], "pp(1)[cpu]");
  EXPECT_EQ(texts[19], "pp(8)[cpu]");
  for (size_t i = 20; i < 30; ++i) {
    const Strategy s = parse_strategy(texts[i]);
    const int k = i == 29 ? 9 : s.device_split(9);                                // data_parallel last: the inputs it keeps, whole
    EXPECT_EQ(k, i == 20 || i == 29 ? 9 : static_cast<int>(i) - 20) << texts[i];  // local, pp(1..8), data_parallel
    EXPECT_EQ(s.kind == Strategy::Kind::data_parallel, i == 29) << texts[i];
    const PlacementChoice dp = place_stages(PlacementRule::dp, catalog().spec("gcode", "modelnet40"), k, hw,
                                            processor_tables(both, d.lut_key("gcode"), &both.table(d.lut_key("gcode")), hw));
    EXPECT_EQ(s.placement, dp.placement) << texts[i];
  }
  // The estimator prices local[cpu] on the CPU's table: its predicted latency is the table's
  // whole-model mean (one request in flight, nothing else on the device).
  SystemState st;
  ServerState sv;
  sv.id = "s0";
  sv.type = "i7-7700";
  st.servers.push_back(sv);
  d.server = "s0";
  d.link_bandwidth_mbps = 20;
  d.in_flight = 1;
  st.devices.push_back(d);
  Scheme on_cpu;
  on_cpu.strategies["tx2"] = parse_strategy("local[cpu]");
  const double cpu_whole_s = both.table({"jetson-tx2", "gcode", "modelnet40", "cpu"}).latency(0, 9, 1).mean_s;
  EXPECT_NEAR(with_cpu.predict(st, on_cpu).devices.at(0).latency_s, cpu_whole_s, 1e-12);
  const LutSet gpu_only = load_luts({root + "/traces/lut"});
  const AnalyticEstimator without(gpu_only, specs);
  EXPECT_EQ(device_options(without, d).size(), 11u);
}

TEST(Schedulers, JointPlacementAndSplitIsNeverWorseThanSplitOnly) {
  // Random systems of 1..3 Jetson TX2s (GPU + CPU in one memory) running gcode or DGCNN on one server,
  // each at a random bandwidth: greedy (and hierarchical) searching placements inside the boards together with the split
  // (the CPU's tables loaded) against greedy with the split only (the boards compute on their GPU, the
  // tables ACE-GNN's device model has). Both schemes priced by the same estimator (with the CPU's
  // tables: the split-only scheme runs unchanged there); the joint one is never worse.
  const std::string root = COINFER_SOURCE_DIR;
  ModelSpecs specs;
  for (const char* m : {"gcode", "dgcnn"}) specs.emplace(ModelKey{m, "modelnet40"}, catalog().instantiate(m, "modelnet40"));
  const LutSet both = load_luts({root + "/traces/lut", root + "/traces/lut_processors/jetson-tx2-cpu.h5"});
  const LutSet gpu_only = load_luts({root + "/traces/lut"});
  const AnalyticEstimator joint_est(both, specs), split_est(gpu_only, specs);
  const DeviceHardware hw = test::gpu_cpu_board(8e9);
  const auto board = std::make_shared<const DeviceHardware>(hw);
  int better = 0;
  for (int trial = 0; trial < 24; ++trial) {
    RandomStream rng(11, StreamPurpose::test, static_cast<std::uint64_t>(trial));
    SystemState st;
    ServerState sv;
    sv.id = "s0";
    sv.type = rng.next_unit() < 0.5 ? "i7-7700" : "gtx1060";
    st.servers.push_back(sv);
    const int n = 1 + static_cast<int>(3 * rng.next_unit());
    for (int i = 0; i < n; ++i) {
      DeviceState d;
      d.id = "tx" + std::to_string(i);
      d.type = "jetson-tx2";
      d.model = rng.next_unit() < 0.5 ? "gcode" : "dgcnn";
      d.dataset = "modelnet40";
      d.processor = "gpu";
      d.hardware = board;
      d.server = "s0";
      d.link_bandwidth_mbps = 0.5 + 50 * rng.next_unit();
      d.strategy = Strategy::local();
      st.devices.push_back(d);
    }
    GreedyScheduler joint(joint_est), split_only(split_est);
    const Scheme a = joint.decide(st), b = split_only.decide(st);
    const double ta = joint_est.predict(st, a).throughput_rps, tb = joint_est.predict(st, b).throughput_rps;
    EXPECT_GE(ta, tb * (1 - 1e-9)) << "trial " << trial << ": joint " << a.to_string() << " vs split-only " << b.to_string();
    better += ta > tb * 1.01;
    // Hierarchical: ACE-GNN's candidates {data_parallel, PP_comp, PP_comm}, each also placed.
    HierarchicalScheduler hjoint(joint_est), hsplit(split_est);
    const Scheme ha = hjoint.decide(st), hb = hsplit.decide(st);
    EXPECT_GE(joint_est.predict(st, ha).throughput_rps, joint_est.predict(st, hb).throughput_rps * (1 - 1e-9))
        << "trial " << trial << ": hierarchical joint " << ha.to_string() << " vs split-only " << hb.to_string();
  }
  EXPECT_GT(better, 0);  // and better somewhere (a board's CPU idle under split-only)
}

TEST(SchedulerTable, ARunTimeRegistrationIsOneMoreRowAndCannotReplaceABuiltIn) {
  // One table. A scheduler registered at run time is listed with the built-ins (the
  // CLI's list, the docs' table and the matrix read scheduler_catalog()), and a built-in's name is refused.
  auto make = [](const Scenario&, const std::map<std::string, int>&) { return std::unique_ptr<Scheduler>(new StaticScheduler({})); };
  const size_t before = scheduler_names().size();
  register_scheduler({{"test_row", "a test's own", "", {"k"}, {}}, make});
  const std::vector<std::string> names = scheduler_names();
  ASSERT_EQ(names.size(), before + 1);
  EXPECT_EQ(names.back(), "test_row");
  EXPECT_NE(scheduler_table_markdown().find("| `test_row` | a test's own |"), std::string::npos);
  EXPECT_THROW(register_scheduler({{"greedy", "x", "", {}, {}}, make}), std::invalid_argument);
  EXPECT_EQ(scheduler_names().size(), before + 1);
}

TEST(SchedulerTable, TraitsComeFromTheRegistry) {
  // What the loader, the simulator and the pre-flight checks rely on, declared with each registration.
  using Check = SchedulerTraits::SizeCheck;
  EXPECT_TRUE(scheduler_traits("static").keeps_scenario_strategies);  // only its strategies' LUT entries are needed
  for (const char* adaptive : {"local", "offload", "gcode", "greedy", "dp", "oracle", "hierarchical", "sac", "placement", "external"})
    EXPECT_FALSE(scheduler_traits(adaptive).keeps_scenario_strategies) << adaptive;
  EXPECT_TRUE(scheduler_traits("external").from_outside);
  EXPECT_FALSE(scheduler_traits("hierarchical").from_outside);
  EXPECT_EQ(scheduler_traits("greedy").size_check, Check::decision_work);
  EXPECT_EQ(scheduler_traits("hierarchical").size_check, Check::decision_work);
  EXPECT_EQ(scheduler_traits("oracle").size_check, Check::scheme_count);
  EXPECT_EQ(scheduler_traits("dp").size_check, Check::none);
  // A run-time registration comes from outside whatever it declares: it sets servers and batching in
  // its own schemes (the simulator lets it move devices, the factory refuses choose_servers for it).
  auto make = [](const Scenario&, const std::map<std::string, int>&) { return std::unique_ptr<Scheduler>(new StaticScheduler({})); };
  SchedulerInfo info{"test_traits", "a test's own", "", {}, {}};
  info.traits.keeps_scenario_strategies = true;
  register_scheduler({info, make});
  EXPECT_TRUE(scheduler_traits("test_traits").from_outside);
  EXPECT_FALSE(scheduler_traits("test_traits").keeps_scenario_strategies);
  // Every catalog row carries the same traits as the lookup.
  for (const auto& row : scheduler_catalog()) EXPECT_EQ(row.traits.from_outside, scheduler_traits(row.name).from_outside) << row.name;
  // An unknown name: an adaptive scheduler's defaults (make_scheduler refuses the name itself).
  EXPECT_FALSE(scheduler_traits("no_such").keeps_scenario_strategies);
  EXPECT_FALSE(scheduler_traits("no_such").from_outside);
}
