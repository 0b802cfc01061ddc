// The engine-free runtime policies that the simulator and the real runtime both drive: batching,
// helper forwarding, data_parallel routing, closed-loop admission, execution times, rescheduling and
// the decision codec. Expected values are worked out by hand in each test.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

#include "core/arrival_process.hpp"
#include "core/background_load.hpp"
#include "core/batch_queue.hpp"
#include "core/data_parallel_router.hpp"
#include "core/dynamic_batching.hpp"
#include "core/execution_time.hpp"
#include "core/helper_forwarding.hpp"
#include "core/input_error.hpp"
#include "core/model_key.hpp"
#include "core/server_failures.hpp"
#include "core/server_timing.hpp"
#include "core/server_lut_index.hpp"
#include "core/server_request_rules.hpp"
#include "core/system_state.hpp"
#include "core/text_util.hpp"
#include "core/units.hpp"
#include "io/decisions_jsonl.hpp"
#include "io/model_spec_loader.hpp"
#include "sched/analytic_estimator.hpp"
#include "sched/coordinator_loop.hpp"
#include "sched/rescheduler.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

// ---- BatchQueue -------------------------------------------------------------------------------

TEST(BatchQueue, ABatchSealsWhenItsWindowEndsNotWhenAWorkerFrees) {
  // Window 10 ms, max 4. Requests of group 0 at t = 0, 0.004, 0.009: one batch open until 0.010.
  BatchQueue<int> q(BatchSpec{10, 4});
  EXPECT_TRUE(q.add(1, 0, 0.000).opened);
  EXPECT_FALSE(q.add(2, 0, 0.004).opened);
  q.add(3, 0, 0.009);
  EXPECT_DOUBLE_EQ(q.next_deadline_s(), 0.010);
  EXPECT_EQ(q.seal_due(0.0099), 0);  // still open just before the deadline
  EXPECT_FALSE(q.has_ready());
  EXPECT_EQ(q.seal_due(0.010), 1);  // sealed at the deadline, workers or not
  // A request after the seal opens the next batch instead of joining the sealed one.
  EXPECT_TRUE(q.add(4, 0, 0.011).opened);
  EXPECT_EQ(q.take_oldest(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(q.queued(), 1);
  EXPECT_DOUBLE_EQ(q.next_deadline_s(), 0.021);
}

TEST(BatchQueue, AFullBatchSealsAtOnceAndGroupsNeverMix) {
  BatchQueue<int> q(BatchSpec{50, 2});
  q.add(1, 0, 0);
  q.add(2, 1, 0);                          // another group: its own batch
  EXPECT_TRUE(q.add(3, 0, 0.001).sealed);  // group 0 reaches max_size 2
  ASSERT_EQ(q.ready().size(), 1u);
  EXPECT_EQ(q.ready().front(), (std::vector<int>{1, 3}));
  EXPECT_EQ(q.queued(), 3);
  EXPECT_DOUBLE_EQ(q.next_deadline_s(), 0.050);  // group 1's window
}

TEST(BatchQueue, WithoutAWindowEveryRequestIsItsOwnBatch) {
  for (BatchSpec spec : {BatchSpec{0, 8}, BatchSpec{10, 1}}) {
    BatchQueue<int> q(spec);
    const auto a = q.add(1, 0, 0);
    EXPECT_TRUE(a.sealed);
    q.add(2, 0, 0);
    EXPECT_EQ(q.ready().size(), 2u);
    EXPECT_EQ(q.next_deadline_s(), kInf);
  }
}

TEST(BatchQueue, SealsDueBatchesInTheOrderTheyOpenedAndTakesOldestOrNewest) {
  BatchQueue<int> q(BatchSpec{10, 8});
  q.add(20, 2, 0.000);  // group 2 opened first
  q.add(10, 1, 0.001);
  q.add(30, 3, 0.002);
  EXPECT_EQ(q.seal_due(0.0115), 2);  // groups 2 and 1 (deadlines 0.010, 0.011), not 3 (0.012)
  EXPECT_EQ(q.ready()[0], std::vector<int>{20});
  EXPECT_EQ(q.ready()[1], std::vector<int>{10});
  EXPECT_EQ(q.take_newest(), std::vector<int>{10});
  EXPECT_EQ(q.take_oldest(), std::vector<int>{20});
}

TEST(BatchQueue, RemovingADevicesItemsDropsEmptiedBatches) {
  BatchQueue<int> q(BatchSpec{10, 2});
  q.add(1, 0, 0);
  q.add(2, 0, 0);                                                // sealed {1, 2}
  q.add(3, 1, 0);                                                // open {3}
  q.add(5, 0, 0);                                                // open {5}
  EXPECT_EQ(q.remove_if([](int x) { return x % 2 == 1; }), 3u);  // 1, 3, 5
  EXPECT_EQ(q.queued(), 1);
  ASSERT_EQ(q.ready().size(), 1u);
  EXPECT_EQ(q.ready().front(), std::vector<int>{2});
  EXPECT_EQ(q.next_deadline_s(), kInf);  // both open batches emptied
}

TEST(BatchQueue, ANewSpecAppliesToOpenBatchesAsIfTheyOpenedUnderIt) {
  // Window 50 ms, max 8: group 0 opened at t = 0 (3 requests), group 1 at t = 0.030 (1 request).
  BatchQueue<int> q(BatchSpec{50, 8});
  q.add(1, 0, 0.000);
  q.add(2, 0, 0.001);
  q.add(3, 0, 0.002);
  q.add(4, 1, 0.030);
  // At t = 0.035 the window becomes 40 ms and the size 3: group 0 already holds 3 (sealed at once);
  // group 1's window now ends at 0.030 + 0.040 = 0.070 instead of 0.080.
  EXPECT_EQ(q.set_spec(BatchSpec{40, 3}, 0.035), 1);
  ASSERT_EQ(q.ready().size(), 1u);
  EXPECT_EQ(q.ready().front(), (std::vector<int>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(q.next_deadline_s(), 0.070);
  // A 20 ms window at t = 0.060: group 1's ended at 0.050, before now, so it is sealed now.
  EXPECT_EQ(q.set_spec(BatchSpec{20, 3}, 0.060), 1);
  EXPECT_EQ(q.ready().back(), std::vector<int>{4});
  // A batch opened later uses the new window: 0.061 + 0.020.
  q.add(5, 0, 0.061);
  EXPECT_DOUBLE_EQ(q.next_deadline_s(), 0.081);
  EXPECT_EQ(q.spec().max_size, 3);
}

TEST(BatchQueue, ASpecWithoutAWindowSealsEveryOpenBatchInTheOrderTheyOpened) {
  BatchQueue<int> q(BatchSpec{50, 8});
  q.add(7, 2, 0.000);
  q.add(8, 1, 0.010);
  EXPECT_EQ(q.set_spec(BatchSpec{0, 8}, 0.011), 2);
  EXPECT_EQ(q.take_oldest(), std::vector<int>{7});
  EXPECT_EQ(q.take_oldest(), std::vector<int>{8});
  EXPECT_TRUE(q.add(9, 1, 0.012).sealed);  // and later requests are their own batches
  EXPECT_EQ(q.next_deadline_s(), kInf);
}

TEST(BatchGroupIds, EqualKeysShareAnIdAndTheKeyNamesModelDatasetSplit) {
  BatchGroupIds ids;
  const BatchGroupKey a{{"dgcnn", "modelnet40"}, 3}, b{{"dgcnn", "modelnet40"}, 4}, c{{"gcn", "cora"}, 3};
  EXPECT_EQ(ids.id(a), 0);
  EXPECT_EQ(ids.id(b), 1);
  EXPECT_EQ(ids.id(c), 2);
  EXPECT_EQ(ids.id(BatchGroupKey{{"dgcnn", "modelnet40"}, 3}), 0);
  EXPECT_EQ(ids.key(1).to_string(), "dgcnn/modelnet40/4");
}

// ---- HelperForwardPolicy ----------------------------------------------------------------------

TEST(HelperForwarding, TheNewestWaitingBatchGoesToAHelperThatFinishesSooner) {
  // 1 worker, busy until t = 1.3 (now 1.0). Two batches wait, 0.2 s each on the server.
  // Newest via server: (1.3 - 1.0) + 0.2 / 1 + 0.2 = 0.7 s. Helper 5 takes 0.5 s: forwarded.
  // Then one batch waits and no worker is idle: via server 0.3 + 0 + 0.2 = 0.5 s; the helper is
  // busy now, helper 7 would take 0.5 s: not sooner (>=), so it stays.
  HelperForwardPolicy p;
  p.set_helpers({7, 5});
  ServerLoad load{1.0, 1, 1, {1.3}};
  auto chosen = p.plan(load, {0.2, 0.2}, [](int h, size_t) { return h == 5 ? 0.5 : 0.5; });
  ASSERT_EQ(chosen, std::vector<int>{5});  // lowest index first
  EXPECT_TRUE(p.busy(5));
  EXPECT_FALSE(p.busy(7));
  // Helper 7 at 0.49 s would win the remaining batch.
  chosen = p.plan(load, {0.2}, [](int, size_t) { return 0.49; });
  EXPECT_EQ(chosen, std::vector<int>{7});
}

TEST(HelperForwarding, AHelpersEstimateIsItsInputTransferPlusItsOwnLutTime) {
  // 2 inputs of 12288 B at 1 Mbit/s (125,000 B/s): 0.196608 s; [6, 9) at batch 2 on the helper's
  // LUT: 0.030 s. Batch 16 is beyond the LUT's largest (4): 0.040 * 16 / 4 = 0.160 s.
  LutTable t({"h", "m", "d"}, 9, 4);
  t.set_latency(6, 9, 2, {0.030, 0, 0, 0, 1});
  t.set_latency(6, 9, 4, {0.040, 0, 0, 0, 1});
  EXPECT_DOUBLE_EQ(helper_batch_seconds(2 * 12288, mbps_to_bytes_per_s(1), t, 6, 2), 0.196608 + 0.030);
  EXPECT_DOUBLE_EQ(helper_batch_seconds(0, 1, t, 6, 16), 0.160);
}

// Both engines' servers take a batch's expected seconds from one ServerTiming (core/server_timing.hpp).
// Server A (type srv) has origin d0 (model m, may also run variant m@v) and idle d1 (a nano: a
// helper); server B (srv2) has origin d2 and idle d3 (a tx2). Stages [1, 3) of each LUT:
//   srv  m   batch 2: 0.050 s;  srv m@v batch 1: 0.020 s;  nano m batch 2: 0.080 s;  tx2 m batch 1: 0.010 s.
TEST(ServerTiming, EachServerTimesEveryDevicesBatchesByItsTypesLutsAndItsOwnHelpers) {
  Scenario sc;
  for (const char* id : {"A", "B"}) {
    ServerSpec sv;
    sv.id = id;
    sv.type = std::string(id) == "A" ? "srv" : "srv2";
    sc.servers.push_back(sv);
  }
  const struct {
    const char* id;
    const char* type;
    const char* server;
    bool idle;
  } devices[] = {{"d0", "pi", "A", false}, {"d1", "nano", "A", true}, {"d2", "pi", "B", false}, {"d3", "tx2", "B", true}};
  for (const auto& x : devices) {
    DeviceSpec d;
    d.id = x.id;
    d.type = x.type;
    d.server = x.server;
    d.model = "m";
    d.dataset = "d";
    d.workload.arrival = x.idle ? WorkloadSpec::Arrival::none : WorkloadSpec::Arrival::poisson;
    sc.devices.push_back(d);
  }
  LutSet luts;
  auto add = [&](const char* type, const char* model, int batch, double s) {
    LutTable t({type, model, "d"}, 3, 2);
    t.set_latency(1, 3, batch, {s, 0, 0, 0, 1});
    luts.add(std::move(t), "test");
  };
  add("srv", "m", 2, 0.050);
  add("srv", "m@v", 1, 0.020);
  add("srv2", "m", 1, 0.030);
  add("nano", "m", 2, 0.080);
  add("tx2", "m", 1, 0.010);
  const std::vector<std::vector<std::string>> run_models = {{"m", "m@v"}, {"m"}, {"m"}, {"m"}};
  const ServerTiming a(sc, 0, luts, run_models), b(sc, 1, luts, run_models);
  EXPECT_DOUBLE_EQ(a.batch_seconds(0, 0, 1, 2), 0.050);  // d0's model as named
  EXPECT_DOUBLE_EQ(a.batch_seconds(0, 1, 1, 1), 0.020);  // d0's variant: binding 1
  // d2 is B's device; a scheme may move it to A (Scheme::servers): A times it by its own type's table.
  EXPECT_DOUBLE_EQ(a.batch_seconds(2, 0, 1, 2), 0.050);
  EXPECT_EQ(a.server_lut(2, 0), a.server_lut(0, 0));
  EXPECT_EQ(b.server_lut(0, 1), nullptr);  // srv2 has no table for d0's variant m@v
  EXPECT_DOUBLE_EQ(b.batch_seconds(2, 0, 1, 1), 0.030);
  // Helper d1 for d0: 25,000 B at 125,000 B/s (1 Mbit/s) = 0.2 s, plus the nano's 0.080 s at batch 2.
  EXPECT_DOUBLE_EQ(a.helper_seconds(1, 0, 0, 1, 2, 25000, 125000), 0.2 + 0.080);
  EXPECT_EQ(a.helper_seconds(1, 0, 1, 1, 1, 0, 1), std::numeric_limits<double>::infinity());  // no nano LUT for m@v
  EXPECT_EQ(a.helper_seconds(3, 2, 0, 1, 1, 0, 1), std::numeric_limits<double>::infinity());  // d3 helps on B only
  EXPECT_DOUBLE_EQ(b.helper_seconds(3, 2, 0, 1, 1, 0, 1), 0.010);
  EXPECT_TRUE(a.may_have_helpers());
  // Without an idle device, server A has no helper: no forwarder in either engine.
  sc.devices[1].workload.arrival = WorkloadSpec::Arrival::poisson;
  EXPECT_FALSE(ServerTiming(sc, 0, luts, run_models).may_have_helpers());
  EXPECT_TRUE(ServerTiming(sc, 1, luts, run_models).may_have_helpers());
}

// A server's rules on a request's facts (core/server_request_rules.hpp), both engines'. By hand, with
// server A's table "srv m" (stages [1,3): 0.025 s at batch 1, 0.050 s at batch 2), helper h's "nano m"
// (0.080 s at batch 2) and d0 dropping late at 40 ms with priority 2:
TEST(ServerRequestRules, AnswerFromTheFactsAsBothEnginesNeed) {
  Scenario sc;
  ServerSpec sv;
  sv.id = "A";
  sv.type = "srv";
  sc.servers.push_back(sv);
  for (const char* id : {"d0", "d1", "h"}) {
    DeviceSpec d;
    d.id = id;
    d.type = std::string(id) == "h" ? "nano" : "pi";
    d.server = "A";
    d.model = "m";
    d.dataset = "d";
    d.workload.arrival = std::string(id) == "h" ? WorkloadSpec::Arrival::none : WorkloadSpec::Arrival::poisson;
    sc.devices.push_back(d);
  }
  sc.devices[0].workload.drop_late = true;
  sc.devices[0].workload.deadline_ms = 40;
  sc.devices[0].workload.priority = 2;
  LutSet luts;
  for (auto [type, s] : {std::pair{"srv", 0.050}, std::pair{"nano", 0.080}}) {
    LutTable t({type, "m", "d"}, 3, 2);
    t.set_latency(1, 3, 2, {s, 0, 0, 0, 1});
    t.set_latency(1, 3, 1, {s / 2, 0, 0, 0, 1});
    luts.add(std::move(t), "test");
  }
  const ServerTiming timing(sc, 0, luts, ServerTiming::named_models(sc));
  const ServerRequestRules rules(sc, 0, timing);
  ServerRequestFacts r;
  r.device = 0;
  r.begin = 1;
  r.device_split = 1;
  r.t_created_s = 2.5;
  EXPECT_DOUBLE_EQ(rules.expected_seconds(r, 2), 0.050);
  EXPECT_DOUBLE_EQ(rules.seconds_alone(r), 0.025);
  EXPECT_EQ(rules.priority(r), 2);
  EXPECT_DOUBLE_EQ(rules.drop_after_s(r), 2.5 + 0.040);  // created at 2.5 s, 40 ms deadline
  // Dropped at 2.55 s: 50 ms old, against its 40 ms, 25 ms alone.
  EXPECT_EQ(rules.drop_reason(r, 2.55),
            "dropped at server A: 50 ms old, its deadline of 40 ms cannot be met (25 ms alone on the server; workload.drop_late)");
  // Helper h: 25,000 B at 125,000 B/s = 0.2 s, plus its 0.080 s at batch 2; not when the batch may not go.
  EXPECT_DOUBLE_EQ(rules.helper_seconds(2, r, 2, 25000, 125000), 0.2 + 0.080);
  r.may_forward = false;
  EXPECT_EQ(rules.helper_seconds(2, r, 2, 25000, 125000), std::numeric_limits<double>::infinity());
  // d1 does not drop late; a request whose creation is unknown (the testbed's "not sent") is never
  // dropped; a request of no device has priority 0, no time alone and no batch limit.
  ServerRequestFacts q = r;
  q.device = 1;
  EXPECT_EQ(rules.drop_after_s(q), std::numeric_limits<double>::infinity());
  EXPECT_EQ(rules.priority(q), 0);
  r.t_created_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(rules.drop_after_s(r), std::numeric_limits<double>::infinity());
  q.device = -1;
  EXPECT_EQ(rules.priority(q), 0);
  EXPECT_EQ(rules.seconds_alone(q), 0);
  EXPECT_EQ(rules.batch_limit(q), 0);
}

// One index of server tables for the whole run (core/server_lut_index.hpp): three servers of two types
// and four devices over two (model, dataset) pairs. Expected by hand: a server answers by its type's
// table for the device's binding's (model, dataset); a missing table, an unknown binding, server or
// device is null. The index holds one column per distinct (model, dataset), not one per device.
TEST(ServerLutIndex, EachServerAnswersByItsTypeForTheDevicesModelAndDataset) {
  Scenario sc;
  for (const auto& [id, type] : {std::pair<const char*, const char*>{"A", "srv"}, {"B", "srv2"}, {"C", "srv"}}) {
    ServerSpec sv;
    sv.id = id;
    sv.type = type;
    sc.servers.push_back(sv);
  }
  for (const char* ds : {"d", "d", "e", "d"}) {
    DeviceSpec d;
    d.id = "x" + std::to_string(sc.devices.size());
    d.server = "A";
    d.model = "m";
    d.dataset = ds;
    sc.devices.push_back(d);
  }
  LutSet luts;
  for (const auto& [type, model, ds] :
       {std::tuple<const char*, const char*, const char*>{"srv", "m", "d"}, {"srv", "m@v", "d"}, {"srv2", "m", "e"}}) {
    LutTable t({type, model, ds}, 3, 1);
    t.set_latency(0, 3, 1, {0.01, 0, 0, 0, 1});
    luts.add(std::move(t), "test");
  }
  const std::vector<std::vector<std::string>> run_models = {{"m", "m@v"}, {"m"}, {"m"}, {"m", "m@v"}};
  const ServerLutIndex index(sc, luts, run_models);
  const LutTable* srv_m_d = &luts.table({"srv", "m", "d"});
  const LutTable* srv_v_d = &luts.table({"srv", "m@v", "d"});
  EXPECT_EQ(index.table(0, 0, 0), srv_m_d);
  EXPECT_EQ(index.table(0, 0, 1), srv_v_d);
  EXPECT_EQ(index.table(2, 3, 1), srv_v_d);  // C has A's type
  EXPECT_EQ(index.table(0, 1, 0), srv_m_d);
  EXPECT_EQ(index.table(1, 1, 0), nullptr);  // srv2 has no (m, d)
  EXPECT_EQ(index.table(1, 2, 0), &luts.table({"srv2", "m", "e"}));
  EXPECT_EQ(index.table(0, 2, 0), nullptr);  // srv has no (m, e)
  EXPECT_EQ(index.table(0, 1, 1), nullptr);  // x1 runs one model only
  EXPECT_EQ(index.table(3, 0, 0), nullptr);  // no server 3
  EXPECT_EQ(index.table(0, 4, 0), nullptr);  // no device 4
  EXPECT_EQ(index.table(0, 0, -1), nullptr);
  EXPECT_EQ(index.types(), 2u);
  EXPECT_EQ(index.models(), 3u);  // (m, d), (m@v, d), (m, e)
}

TEST(HelperForwarding, NothingMovesWhileIdleWorkersWillTakeTheBatches) {
  HelperForwardPolicy p;
  p.set_helpers({1});
  // 2 workers, 1 busy: one waiting batch is taken by the idle worker; a helper at 0 s is not used.
  EXPECT_TRUE(p.plan(ServerLoad{0, 2, 1, {0.5}}, {0.2}, [](int, size_t) { return 0.0; }).empty());
  // Two waiting batches: the newest goes (via server = 0 + 0.2 / 2 + 0.3 = 0.4 > 0.1).
  EXPECT_EQ(p.plan(ServerLoad{0, 2, 1, {0.5}}, {0.2, 0.3}, [](int, size_t i) { return i == 1 ? 0.1 : 9.0; }), std::vector<int>{1});
}

TEST(HelperForwarding, UnavailableOrBusyHelpersAreSkippedAndKeepTheirFlagAcrossSchemes) {
  HelperForwardPolicy p;
  p.set_helpers({1, 2});
  ServerLoad full{0, 1, 1, {10}};
  auto chosen = p.plan(
      full, {1, 1}, [](int, size_t) { return 0.1; }, [](int h) { return h != 1; });
  EXPECT_EQ(chosen, (std::vector<int>{2}));
  p.set_helpers({2, 3});  // 2 stays busy, 1 leaves, 3 arrives free
  EXPECT_TRUE(p.busy(2));
  EXPECT_FALSE(p.is_helper(1));
  p.helper_done(2);
  EXPECT_FALSE(p.busy(2));
  // No helpers: nothing.
  HelperForwardPolicy none;
  EXPECT_TRUE(none.plan(full, {1, 1}, [](int, size_t) { return 0.0; }).empty());
}

// ---- DataParallelRouter and closed-loop admission --------------------------------------------

TEST(DataParallelRouter, BothFreeTakesTheLowerEstimateCountingTheAccessPoint) {
  // local 0.9 s; server: round trip 2 * (10 + 5) ms = 0.03 s, (12288 + 160) B at 125,000 B/s
  // (1 Mbit/s) = 0.099584 s, compute 0.009 s: 0.138584 s < 0.9 -> server.
  DataParallelCosts c{0.9, 0.009, 12288, 160, 0.030};
  DataParallelRouter r(c);
  EXPECT_EQ(*r.route_next(mbps_to_bytes_per_s(1)), DataParallelRouter::Side::server);
  // The server side is busy now: the next input takes the device whatever the estimate.
  EXPECT_EQ(*r.route_next(mbps_to_bytes_per_s(1)), DataParallelRouter::Side::device);
  EXPECT_FALSE(r.route_next(1e9).has_value());
  r.release(DataParallelRouter::Side::server);
  r.release(DataParallelRouter::Side::device);
  // At 0.1 Mbit/s the transfer alone is 0.99584 s: 0.03 + 0.99584 + 0.009 > 0.9 -> device.
  EXPECT_EQ(*r.route_next(mbps_to_bytes_per_s(0.1)), DataParallelRouter::Side::device);
}

TEST(DataParallelRouter, CostsComeFromTheSpecsTheAccessPointAndTheLuts) {
  ModelCatalog cat = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
  ModelSpec m = cat.instantiate("dgcnn", "modelnet40");
  LutTable dev({"d", "dgcnn", "modelnet40"}, 9, 1), srv({"s", "dgcnn", "modelnet40"}, 9, 1);
  dev.set_latency(0, 9, 1, {0.9, 0.9, 0.9, 0, 1});
  srv.set_latency(0, 9, 1, {0.009, 0.009, 0.009, 0, 1});
  DeviceSpec d;
  d.link.latency_ms = 10;
  AccessPointSpec ap;
  ap.latency_ms = 5;
  const DataParallelCosts c = data_parallel_costs(d, ap, m, &dev, &srv);
  EXPECT_DOUBLE_EQ(c.local_s, 0.9);
  EXPECT_DOUBLE_EQ(c.remote_compute_s, 0.009);
  EXPECT_DOUBLE_EQ(c.round_trip_latency_s, 0.030);  // 2 * (10 + 5) ms: the access point counts
  EXPECT_DOUBLE_EQ(c.input_bytes, 12288);
  EXPECT_DOUBLE_EQ(c.result_bytes, 160);
}

TEST(ClosedLoop, AdmitsWhenTheFirstStageIsIdleAndFewerThanInFlightAreUnfinished) {
  ClosedLoopView v;
  v.num_stages = 9;
  v.in_flight_limit = 2;
  v.unfinished = 1;
  v.compute_idle = true;
  v.upload_idle = false;
  EXPECT_TRUE(ArrivalProcess::admits(Strategy::pp(3), v));  // pp starts by computing
  EXPECT_TRUE(ArrivalProcess::admits(Strategy::local(), v));
  EXPECT_FALSE(ArrivalProcess::admits(Strategy::offload(), v));  // offload starts by uploading
  v.unfinished = 2;
  EXPECT_FALSE(ArrivalProcess::admits(Strategy::pp(3), v));  // in_flight reached
  v.compute_idle = false;
  v.unfinished = 0;
  EXPECT_FALSE(ArrivalProcess::admits(Strategy::local(), v));
  // data_parallel: no input waiting for a side and a side free, whatever in_flight says.
  v.unfinished = 5;
  EXPECT_TRUE(ArrivalProcess::admits(Strategy::data_parallel(), v));
  v.data_parallel_side_free = false;
  EXPECT_FALSE(ArrivalProcess::admits(Strategy::data_parallel(), v));
  v.data_parallel_side_free = true;
  v.data_parallel_input_waiting = true;
  EXPECT_FALSE(ArrivalProcess::admits(Strategy::data_parallel(), v));
}

// ---- Execution time, strategies, units ---------------------------------------------------------

TEST(ExecutionTime, LutMeanScalesLinearlyBeyondTheLargestMeasuredBatch) {
  LutTable t({"x", "m", "d"}, 2, 4);
  t.set_latency(0, 2, 1, {0.010, 0, 0, 0, 1});
  t.set_latency(0, 2, 4, {0.020, 0, 0, 0, 1});
  const ExecutionTimeModel& time = lut_mean_time();
  EXPECT_DOUBLE_EQ(time.seconds(t, 0, 2, 1), 0.010);
  EXPECT_DOUBLE_EQ(time.seconds(t, 0, 2, 4), 0.020);
  EXPECT_DOUBLE_EQ(time.seconds(t, 0, 2, 10), 0.050);  // 0.020 * 10 / 4
  EXPECT_DOUBLE_EQ(time.seconds(t, 1, 1, 3), 0.0);     // empty range
  EXPECT_THROW(time.seconds(t, 0, 2, 2), LutMissingError);
}

TEST(Strategy, AtSplitNamesTheEndsLocalAndOffload) {
  EXPECT_EQ(Strategy::at_split(0, 9), Strategy::offload());
  EXPECT_EQ(Strategy::at_split(9, 9), Strategy::local());
  EXPECT_EQ(Strategy::at_split(4, 9), Strategy::pp(4));
  EXPECT_DOUBLE_EQ(mbps_to_bytes_per_s(8), 1e6);
  EXPECT_DOUBLE_EQ(bytes_per_s_to_mbps(1e6), 8);
}

TEST(Strategy, ACloudPartIsDroppedWhereTheServerHasNoCloud) {
  // A device moved to a server without a cloud cannot run a cloud part: pp(2,5) runs pp(2) there and
  // pp(0,3) (the raw input to the edge) runs offload; at a server with a cloud both stay.
  ServerState bare, edge;
  bare.id = "bare";
  edge.id = "edge";
  edge.cloud = "cloud";
  EXPECT_EQ(strategy_at(Strategy::pp(2, 5), bare), Strategy::pp(2));
  EXPECT_EQ(strategy_at(Strategy::pp(0, 3), bare), Strategy::offload());
  EXPECT_EQ(strategy_at(Strategy::pp(2, 5).with_variant("int8"), bare), Strategy::pp(2).with_variant("int8"));
  EXPECT_EQ(strategy_at(Strategy::pp(2, 5), edge), Strategy::pp(2, 5));
  EXPECT_EQ(strategy_at(Strategy::local(), bare), Strategy::local());
  // state_under moves devices with it: d moved to bare runs pp(2), e (not moved) keeps pp(1,4).
  SystemState st;
  st.servers = {bare, edge};
  DeviceState d, e;
  d.id = "d", d.server = "edge", d.strategy = Strategy::pp(2, 5);
  e.id = "e", e.server = "edge", e.strategy = Strategy::pp(1, 4);
  st.devices = {d, e};
  Scheme moves;
  moves.servers["d"] = "bare";
  const SystemState under = state_under(st, moves);
  EXPECT_EQ(under.devices[0].server, "bare");
  EXPECT_EQ(under.devices[0].strategy, Strategy::pp(2));
  EXPECT_EQ(under.devices[1].strategy, Strategy::pp(1, 4));
}

// ---- Rescheduler --------------------------------------------------------------------------------

namespace {
// A scheduler returning the schemes a test queues (the Rescheduler is what is under test).
class ScriptedScheduler : public Scheduler {
 public:
  std::deque<Scheme> next;
  std::vector<SystemState> seen;
  std::string name() const override { return "scripted"; }
  Scheme decide(const SystemState& s) override {
    seen.push_back(s);
    Scheme x = next.front();
    next.pop_front();
    return x;
  }
};

struct RescheduleFixture {
  Scenario sc;
  LutSet luts;
  std::unique_ptr<AnalyticEstimator> est;
  ScriptedScheduler sched;
  RescheduleFixture() {
    ModelCatalog cat = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
    for (const char* type : {"dev", "srv"}) {
      LutTable t({type, "dgcnn", "modelnet40"}, 9, 1);
      for (int i = 0; i < 9; ++i)
        for (int j = i + 1; j <= 9; ++j) t.set_latency(i, j, 1, {0.01 * (j - i), 0, 0, 0, 1});
      luts.add(t, "mem");
    }
    ModelSpecs specs;
    specs.emplace(ModelKey{"dgcnn", "modelnet40"}, cat.instantiate("dgcnn", "modelnet40"));
    est = std::make_unique<AnalyticEstimator>(luts, specs);
    ServerSpec s;
    s.id = "s0";
    s.type = "srv";
    sc.servers.push_back(s);
    for (const char* id : {"a", "b", "idle"}) {
      DeviceSpec d;
      d.id = id;
      d.type = "dev";
      d.model = "dgcnn";
      d.dataset = "modelnet40";
      d.server = "s0";
      d.link.bandwidth_mbps = 10;
      d.strategy = Strategy::local();
      sc.devices.push_back(d);
    }
    sc.scheduler.bandwidth_threshold_pct = 20;
    sc.scheduler.period_s = 2;
  }
  Scheme scheme(Strategy a, Strategy b, std::vector<std::string> helpers = {}) {
    Scheme s;
    s.strategies = {{"a", a}, {"b", b}, {"idle", Strategy::local()}};
    s.helpers = std::move(helpers);
    return s;
  }
};
}  // namespace

TEST(Rescheduler, OnlyDevicesWhoseStrategyOrHelperRoleChangedAreTold) {
  RescheduleFixture f;
  Rescheduler r(f.sc, f.sched, *f.est);
  EXPECT_TRUE(r.offer(Trigger{trigger::Start{}}));
  EXPECT_TRUE(r.offer(Trigger{trigger::Join{DeviceIndex(1)}}));
  f.sched.next.push_back(f.scheme(Strategy::offload(), Strategy::local(), {"idle"}));
  Decision d = r.decide(scenario_state(f.sc, 0));
  EXPECT_EQ(d.record.trigger, "start+join:b");
  ASSERT_EQ(d.changes.size(), 2u);  // a: local -> offload; idle: becomes a helper; b unchanged
  EXPECT_EQ(d.changes[0].device.value, 0);
  EXPECT_TRUE(d.changes[0].strategy_changed);
  EXPECT_EQ(d.changes[1].device.value, 2);
  EXPECT_TRUE(d.changes[1].helper && d.changes[1].helper_changed && !d.changes[1].strategy_changed);
  EXPECT_EQ(d.record.switched, 1);
  EXPECT_EQ(d.helpers, std::vector<int>{2});
  EXPECT_FALSE(r.has_pending());
  // The same scheme again: nobody is told anything.
  r.offer(Trigger{trigger::Period{}});
  f.sched.next.push_back(f.scheme(Strategy::offload(), Strategy::local(), {"idle"}));
  d = r.decide(scenario_state(f.sc, 2));
  EXPECT_TRUE(d.changes.empty());
  EXPECT_EQ(d.record.switched, 0);
  EXPECT_EQ(r.strategy(DeviceIndex(0)), Strategy::offload());
  EXPECT_TRUE(r.is_helper(DeviceIndex(2)));
}

TEST(Rescheduler, AServerIsToldANewBatchingOnceAndLaterSnapshotsCarryIt) {
  // The scenario's s0 batches 0 ms / 1. A scheme setting 20 ms / 4 changes it (told once, to server
  // 0); the same batching again, or a scheme not naming s0, tells nothing and keeps 20 ms / 4.
  RescheduleFixture f;
  f.sc.servers[0].batch = BatchSpec{0, 4};
  Rescheduler r(f.sc, f.sched, *f.est);
  r.offer(Trigger{trigger::Start{}});
  Scheme x = f.scheme(Strategy::offload(), Strategy::offload());
  x.batching["s0"] = BatchSpec{20, 4};
  f.sched.next.push_back(x);
  Decision d = r.decide(r.snapshot(0, {}, {}));
  ASSERT_EQ(d.batching.size(), 1u);
  EXPECT_EQ(d.batching[0].first.value, 0);
  EXPECT_EQ(d.batching[0].second, (BatchSpec{20, 4}));
  EXPECT_NE(d.record.scheme.find("batching=[s0:20ms/4]"), std::string::npos) << d.record.scheme;
  EXPECT_EQ(r.batching(ServerIndex(0)), (BatchSpec{20, 4}));
  r.offer(Trigger{trigger::Period{}});
  f.sched.next.push_back(x);
  d = r.decide(r.snapshot(2, {}, {}));
  EXPECT_TRUE(d.batching.empty());
  r.offer(Trigger{trigger::Period{}});
  f.sched.next.push_back(f.scheme(Strategy::offload(), Strategy::offload()));
  d = r.decide(r.snapshot(4, {}, {}));
  EXPECT_TRUE(d.batching.empty());
  // What the scheduler saw at t = 2 and 4: the batching decided at 0, not the scenario's.
  ASSERT_EQ(f.sched.seen.size(), 3u);
  EXPECT_DOUBLE_EQ(f.sched.seen[0].servers[0].batch_window_ms, 0);
  EXPECT_DOUBLE_EQ(f.sched.seen[2].servers[0].batch_window_ms, 20);
  EXPECT_EQ(f.sched.seen[2].servers[0].batch_max_size, 4);
  EXPECT_EQ(f.sched.seen[2].servers[0].batch_size_limit, 4);
}

TEST(Rescheduler, ADeviceMovedToAnotherServerIsToldOnceAndLaterSnapshotsCarryIt) {
  // Server choice (Scheme::servers): a scheme moving a to s1 tells a once (server 1); the same scheme
  // again, or one not naming a, tells nothing and a stays on s1; the scheduler sees a on s1 from then
  // on. A move alone (strategy unchanged) counts as switching the device in the record.
  RescheduleFixture f;
  ServerSpec s1;
  s1.id = "s1";
  s1.type = "srv";
  f.sc.servers.push_back(s1);
  Rescheduler r(f.sc, f.sched, *f.est);
  EXPECT_EQ(r.server(DeviceIndex(0)), ServerIndex(0));
  r.offer(Trigger{trigger::Start{}});
  Scheme x = f.scheme(Strategy::offload(), Strategy::offload());
  x.servers["a"] = "s1";
  f.sched.next.push_back(x);
  Decision d = r.decide(r.snapshot(0, {}, {}));
  ASSERT_EQ(d.changes.size(), 2u);  // a (strategy and server), b (strategy)
  EXPECT_EQ(d.changes[0].device.value, 0);
  EXPECT_TRUE(d.changes[0].server_changed);
  EXPECT_EQ(d.changes[0].server.value, 1);
  EXPECT_FALSE(d.changes[1].server_changed);
  EXPECT_EQ(d.changes[1].server.value, 0);
  EXPECT_EQ(d.record.switched, 2);
  EXPECT_NE(d.record.scheme.find(" servers=[a:s1]"), std::string::npos) << d.record.scheme;
  EXPECT_EQ(r.server(DeviceIndex(0)), ServerIndex(1));
  r.offer(Trigger{trigger::Period{}});
  f.sched.next.push_back(x);
  d = r.decide(r.snapshot(2, {}, {}));
  EXPECT_TRUE(d.changes.empty());
  r.offer(Trigger{trigger::Period{}});
  f.sched.next.push_back(f.scheme(Strategy::offload(), Strategy::offload()));
  d = r.decide(r.snapshot(4, {}, {}));
  EXPECT_TRUE(d.changes.empty());
  EXPECT_EQ(r.server(DeviceIndex(0)), ServerIndex(1));
  ASSERT_EQ(f.sched.seen.size(), 3u);
  EXPECT_EQ(f.sched.seen[0].devices[0].server, "s0");
  EXPECT_EQ(f.sched.seen[2].devices[0].server, "s1");
  EXPECT_EQ(f.sched.seen[2].devices[1].server, "s0");
  // Moved back: told again.
  r.offer(Trigger{trigger::Period{}});
  x.servers["a"] = "s0";
  f.sched.next.push_back(x);
  d = r.decide(r.snapshot(6, {}, {}));
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_TRUE(d.changes[0].server_changed);
  EXPECT_FALSE(d.changes[0].strategy_changed);
  EXPECT_EQ(d.changes[0].server.value, 0);
  EXPECT_EQ(d.record.switched, 1);
}

TEST(Rescheduler, AMoveToAServerOrOfADeviceTheScenarioLacksIsTheSchedulersFailure) {
  RescheduleFixture f;
  Rescheduler r(f.sc, f.sched, *f.est);
  r.offer(Trigger{trigger::Start{}});
  Scheme x = f.scheme(Strategy::offload(), Strategy::offload());
  x.servers["a"] = "nowhere";
  f.sched.next.push_back(x);
  try {
    r.decide(r.snapshot(0, {}, {}));
    FAIL() << "a move to an unknown server was accepted";
  } catch (const SchedulerFailure& e) {
    EXPECT_EQ(std::string(e.what()), "scheduler scripted moved device a to server 'nowhere', which the scenario does not have");
  }
  r.offer(Trigger{trigger::Start{}});
  x.servers = {{"ghost", "s0"}};
  f.sched.next.push_back(x);
  try {
    r.decide(r.snapshot(0, {}, {}));
    FAIL() << "a move of an unknown device was accepted";
  } catch (const SchedulerFailure& e) {
    EXPECT_EQ(std::string(e.what()), "scheduler scripted moved device 'ghost', which the scenario does not have, to server s0");
  }
}

TEST(Rescheduler, ADecisionThatMissesAConstraintSaysSoInItsRecord) {
  // Every device local on the fixture's 'dev' (9 stages x 10 ms = 90 ms, closed loop: no wait): the p95
  // is 90 ms. With max_p95_ms 50 the decision's detail says the scheme misses it, and by how much.
  RescheduleFixture f;
  Constraints k;
  k.max_p95_s = 0.050;
  AnalyticEstimator est(f.luts, f.est->models(), Objective::throughput, k);
  Rescheduler r(f.sc, f.sched, est);
  r.offer(Trigger{trigger::Start{}});
  f.sched.next.push_back(f.scheme(Strategy::local(), Strategy::local()));
  const Decision d = r.decide(r.snapshot(0, {}, {}));
  EXPECT_NE(d.record.detail.find("\"constraints\":{\"met\":false,\"missed\":[\"p95 90 ms > 50 ms\"]"), std::string::npos) << d.record.detail;
  // Without constraints the record has no such part.
  Rescheduler plain(f.sc, f.sched, *f.est);
  plain.offer(Trigger{trigger::Start{}});
  f.sched.next.push_back(f.scheme(Strategy::local(), Strategy::local()));
  EXPECT_EQ(plain.decide(plain.snapshot(0, {}, {})).record.detail.find("constraints"), std::string::npos);
}

TEST(Rescheduler, BandwidthTriggersOnlyBeyondTheThresholdOncePerChange) {
  RescheduleFixture f;
  Rescheduler r(f.sc, f.sched, *f.est);
  // Before the first decision a heartbeat compares with the scenario's rate (10 Mbit/s): the same
  // rate is no trigger.
  EXPECT_FALSE(r.offer(Trigger{trigger::Bandwidth{DeviceIndex(1), 10}}));
  r.offer(Trigger{trigger::Start{}});
  f.sched.next.push_back(f.scheme(Strategy::local(), Strategy::local()));
  r.decide(scenario_state(f.sc, 0));  // every device decided at 10 Mbit/s
  // 20 % threshold: 12 Mbit/s is exactly 20 % (not beyond), 12.5 is 25 %.
  EXPECT_FALSE(r.offer(Trigger{trigger::Bandwidth{DeviceIndex(0), 12}}));
  EXPECT_FALSE(r.offer(Trigger{trigger::Bandwidth{DeviceIndex(0), 8}}));
  EXPECT_TRUE(r.offer(Trigger{trigger::Bandwidth{DeviceIndex(0), 12.5}}));
  // Heartbeats repeating the new rate do not trigger again; a further 25 % move does.
  EXPECT_FALSE(r.offer(Trigger{trigger::Bandwidth{DeviceIndex(0), 12.5}}));
  EXPECT_TRUE(r.offer(Trigger{trigger::Bandwidth{DeviceIndex(0), 9.0}}));
  f.sched.next.push_back(f.scheme(Strategy::local(), Strategy::local()));
  EXPECT_EQ(r.decide(scenario_state(f.sc, 1)).record.trigger, "bandwidth:a+bandwidth:a");
  EXPECT_DOUBLE_EQ(r.next_period_after(0), 2);
  EXPECT_DOUBLE_EQ(r.next_period_after(2), 4);
  EXPECT_DOUBLE_EQ(r.next_period_after(3.9), 4);
}

// One rule for periodic triggers in both engines: k * period while before the end of
// arrivals, none during the drain. duration 7 s, period 2 s: 2, 4, 6, then nothing (8 > 7); the real
// server's timer (next_period_after) and the simulator's list (scenario_events) agree.
TEST(Rescheduler, PeriodicTriggersStopAtTheEndOfArrivalsInBothEngines) {
  RescheduleFixture f;
  f.sc.duration_s = 7;
  f.sc.drain_s = 5;
  Rescheduler r(f.sc, f.sched, *f.est);
  EXPECT_DOUBLE_EQ(r.next_period_after(5.5), 6);
  EXPECT_EQ(r.next_period_after(6), std::numeric_limits<double>::infinity());  // 8 s is in the drain
  EXPECT_EQ(r.next_period_after(9), std::numeric_limits<double>::infinity());
  std::vector<double> periods;
  for (const auto& [t, tr] : Rescheduler::scenario_events(f.sc, {}, f.sc.duration_s))
    if (tr.is<trigger::Period>()) periods.push_back(t);
  EXPECT_EQ(periods, (std::vector<double>{2, 4, 6}));
  // 0.1 s periods: exactly k * 0.1 (a running sum drifts: its eighth is 0.7999999999999999, not 0.8).
  f.sc.scheduler.period_s = 0.1;
  f.sc.duration_s = 0.85;
  periods.clear();
  for (const auto& [t, tr] : Rescheduler::scenario_events(f.sc, {}, f.sc.duration_s))
    if (tr.is<trigger::Period>()) periods.push_back(t);
  ASSERT_EQ(periods.size(), 8u);
  EXPECT_EQ(periods.back(), 8 * 0.1);
  f.sc.duration_s = 60;  // strictly after, also where k * p rounds just below t
  for (double t : {0.3, 0.7, 2.9000000000000004, 5.9}) EXPECT_GT(Rescheduler::next_period_after(f.sc, t), t);
}

TEST(Rescheduler, TheScenarioEventsComeInTimeOrder) {
  RescheduleFixture f;
  f.sc.devices[1].join_at_s = 1.5;
  f.sc.devices[0].leave_at_s = 3;
  std::vector<BandwidthSchedule> bw;
  for (const auto& d : f.sc.devices) bw.emplace_back(d, f.sc.events);
  bw[2] = BandwidthSchedule({{0, 10}, {2.5, 1}});
  const auto ev = Rescheduler::scenario_events(f.sc, bw, 5);
  std::vector<std::string> got;
  for (const auto& [t, tr] : ev) got.push_back(std::to_string(t).substr(0, 3) + " " + tr.describe(f.sc));
  EXPECT_EQ(got, (std::vector<std::string>{"0.0 start", "1.5 join:b", "2.0 period", "2.5 bandwidth:idle", "3.0 leave:a", "4.0 period"}));
}

// ---- Coordinator loop (sched/coordinator_loop.hpp) -------------------------------------------------

namespace {
// The fixture's world with a second server s1 that fails at 2.2 s and recovers at 6.5 s, device b
// joining at 1.5 s, device a leaving at 3 s and the idle device's rate falling from 10 to 1 Mbit/s at
// 2.5 s; periods every 2 s; arrivals end at 5 s, the drain at 10 s.
struct CoordinatorWorld : RescheduleFixture {
  std::vector<BandwidthSchedule> bw;
  CoordinatorWorld() {
    ServerSpec s1 = sc.servers[0];
    s1.id = "s1";
    sc.servers.push_back(s1);
    sc.duration_s = 5;
    sc.drain_s = 5;
    sc.devices[1].join_at_s = 1.5;
    sc.devices[0].leave_at_s = 3;
    for (auto [t, fails] : {std::pair{2.2, true}, std::pair{6.5, false}}) {
      EventSpec e;
      e.at_s = t;
      if (fails)
        e.what = event::ServerFail{"s1"};
      else
        e.what = event::ServerRecover{"s1"};
      sc.events.push_back(e);
    }
    for (const auto& d : sc.devices) bw.emplace_back(d, sc.events);
    bw[2] = BandwidthSchedule({{0, 10}, {2.5, 1}});
  }
  // Drives `loop` as an engine would: at each next event, advance, then decide on what is pending.
  // Returns "t trigger" per decision and "t s1 down|up" per server change.
  std::vector<std::string> drive(CoordinatorLoop& loop) {
    std::vector<std::string> out;
    for (double t; std::isfinite(t = loop.next_event_s());) {
      for (const ServerChange& c : loop.advance_to(t))
        out.push_back(format_double(t) + " " + sc.servers[c.server.at()].id + (c.up ? " up" : " down"));
      if (!loop.has_pending()) continue;
      sched.next.push_back(scheme(Strategy::local(), Strategy::local()));
      out.push_back(format_double(t) + " " + loop.decide(loop.rescheduler().snapshot(t, {}, {})).record.trigger);
    }
    return out;
  }
};
}  // namespace

TEST(CoordinatorLoop, TheSimulatorIsOfferedEveryScenarioEventAtItsTimeAndCarriesOutServerChangesUntilTheDrainEnds) {
  CoordinatorWorld w;
  // The simulator observes nothing itself; server changes until the drain's end (10 s).
  CoordinatorLoop loop(w.sc, w.sched, *w.est, w.bw, w.sc.duration_s, SelfObserved{}, 10);
  // By hand: start at 0; b joins at 1.5; the period at 2; s1 fails at 2.2 (the change, then the
  // trigger); the idle device's rate moves 90 % at 2.5 (> 20 %); a leaves at 3; the period at 4 (the
  // next, 6, is after the end of arrivals); s1 recovers at 6.5, in the drain: carried out, no decision.
  EXPECT_EQ(w.drive(loop), (std::vector<std::string>{"0 start", "1.5 join:b", "2 period", "2.2 s1 down", "2.2 fail:s1", "2.5 bandwidth:idle",
                                                     "3 leave:a", "4 period", "6.5 s1 up"}));
}

TEST(CoordinatorLoop, TheRealCoordinatorTimesOnlyWhatItDoesNotObserveAndFiresALatePeriodOnce) {
  CoordinatorWorld w;
  w.sc.duration_s = 9;  // periods at 2, 4, 6 and 8
  // Server s0's own process: it observes the start, joins, leaves, fixed devices' rates and its own
  // failure; s1's failure and recovery stay timed (both before 9 s now); no server changes (0).
  const SelfObserved real{true, true, true, ServerIndex(0)};
  std::vector<std::string> timed;
  for (const auto& [t, tr] : timed_triggers(w.sc, w.bw, w.sc.duration_s, real)) timed.push_back(format_double(t) + " " + tr.describe(w.sc));
  EXPECT_EQ(timed, (std::vector<std::string>{"2.2 fail:s1", "6.5 recover:s1"}));
  // Observing the servers' recoveries (the real coordinator does: a recovered server registers
  // again) leaves only the failure timed.
  SelfObserved recoveries = real;
  recoveries.server_recoveries = true;
  timed.clear();
  for (const auto& [t, tr] : timed_triggers(w.sc, w.bw, w.sc.duration_s, recoveries)) timed.push_back(format_double(t) + " " + tr.describe(w.sc));
  EXPECT_EQ(timed, (std::vector<std::string>{"2.2 fail:s1"}));
  CoordinatorLoop loop(w.sc, w.sched, *w.est, w.bw, w.sc.duration_s, real, 0);
  EXPECT_EQ(loop.next_event_s(), 2);
  EXPECT_TRUE(loop.advance_to(1.9).empty());
  EXPECT_FALSE(loop.has_pending());
  // Woken late, at 4.1: the fail at 2.2 and one period for the two that passed (2 and 4); the next is 6.
  EXPECT_TRUE(loop.advance_to(4.1).empty());
  w.sched.next.push_back(w.scheme(Strategy::local(), Strategy::local()));
  EXPECT_EQ(loop.decide(loop.rescheduler().snapshot(4.1, {}, {})).record.trigger, "fail:s1+period");
  EXPECT_EQ(loop.next_event_s(), 6);
  // Started again at 7 after a failure: what came before was its predecessor's; the period at 8 remains.
  CoordinatorLoop restarted(w.sc, w.sched, *w.est, w.bw, w.sc.duration_s, real, 0);
  restarted.skip_to(7);
  EXPECT_EQ(restarted.next_event_s(), 8);
  restarted.advance_to(8);
  EXPECT_TRUE(restarted.has_pending());
  EXPECT_TRUE(std::isinf([&] {
    restarted.advance_to(9);
    return restarted.next_event_s();
  }()));
}

// ---- Decision codec -------------------------------------------------------------------------------

TEST(DecisionCodec, RoundTripsAndReadsAJournalWithATornLastLine) {
  DecisionRecord d{1.25, "start+join:a", "a=local helpers=[]", 12.5, 80.25, 1, 0.003, ""};
  const DecisionRecord back = decision_from_json(decision_to_json(d));
  EXPECT_EQ(back.trigger, d.trigger);
  EXPECT_EQ(back.scheme, d.scheme);
  EXPECT_DOUBLE_EQ(back.t_s, 1.25);
  EXPECT_DOUBLE_EQ(back.predicted_latency_ms, 80.25);
  EXPECT_EQ(back.switched, 1);
  const std::string dir = coinfer::test::temp_dir("dec");
  {
    std::ofstream o(dir + "/d.jsonl");
    o << decision_to_json(d) << "\n" << decision_to_json(d) << "\n{\"t_s\": 3, \"trig";
  }
  EXPECT_EQ(read_decisions_jsonl(dir + "/d.jsonl").size(), 2u);
  {
    std::ofstream o(dir + "/bad.jsonl");
    o << "{}\n" << decision_to_json(d) << "\n";
  }
  try {
    read_decisions_jsonl(dir + "/bad.jsonl");
    ADD_FAILURE() << "a malformed line before the last must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:1"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// Who may help whom (helper_pairs, both engines): idle devices (arrival none) help the input-creating
// devices of their own server. Devices: 0 idle on s0, 1 creates on s0, 2 idle on s1, 3 creates on s1,
// 4 creates on s0 -> (0,1), (0,4) and (2,3); no idle device helps another idle one or another server's.
TEST(HelperPairs, IdleDevicesHelpTheirOwnServersInputCreatingDevices) {
  Scenario s;
  const char* servers[] = {"s0", "s0", "s1", "s1", "s0"};
  const bool idle[] = {true, false, true, false, false};
  for (int i = 0; i < 5; ++i) {
    DeviceSpec d;
    d.id = "d" + std::to_string(i);
    d.server = servers[i];
    d.workload.arrival = idle[i] ? WorkloadSpec::Arrival::none : WorkloadSpec::Arrival::closed_loop;
    s.devices.push_back(d);
  }
  EXPECT_EQ(helper_pairs(s), (std::vector<std::pair<int, int>>{{0, 1}, {0, 4}, {2, 3}}));
}

// The one snapshot (Rescheduler::snapshot, both engines): the decided strategy, then observations;
// an unobserved or disconnected device keeps the scenario's figures, an unmeasured bandwidth (0) too.
TEST(Rescheduler, TheSnapshotIsTheDecidedStrategyAndWhatWasObserved) {
  RescheduleFixture f;
  Rescheduler r(f.sc, f.sched, *f.est);
  r.offer(Trigger{trigger::Start{}});
  f.sched.next.push_back(f.scheme(Strategy::offload(), Strategy::local()));
  r.decide(scenario_state(f.sc, 0));
  DeviceObservation a;
  a.link_bandwidth_mbps = 3;
  a.queue_length = 2;
  a.completed = 7;
  DeviceObservation b;
  b.connected = false;
  b.queue_length = 9;  // not read: disconnected
  DeviceObservation idle;
  idle.link_bandwidth_mbps = 0;  // not measured
  idle.generates = false;
  const SystemState st = r.snapshot(1.5, {a, b, idle}, {ServerObservation{4, 1}});
  EXPECT_DOUBLE_EQ(st.time_s, 1.5);
  EXPECT_EQ(st.devices[0].strategy, Strategy::offload());  // decided, whatever the device runs yet
  EXPECT_DOUBLE_EQ(st.devices[0].link_bandwidth_mbps, 3);
  EXPECT_EQ(st.devices[0].queue_length, 2);
  EXPECT_EQ(st.devices[0].completed, 7);
  EXPECT_FALSE(st.devices[1].connected);
  EXPECT_EQ(st.devices[1].queue_length, 0);
  EXPECT_DOUBLE_EQ(st.devices[1].link_bandwidth_mbps, 10);  // the scenario's
  EXPECT_DOUBLE_EQ(st.devices[2].link_bandwidth_mbps, 10);
  EXPECT_FALSE(st.devices[2].generates);
  EXPECT_EQ(st.servers[0].queue_length, 4);
  EXPECT_EQ(st.servers[0].busy_workers, 1);
  // Nothing observed: the scenario's state with the decided strategies.
  const SystemState bare = r.snapshot(0, {}, {});
  EXPECT_EQ(bare.devices[0].strategy, Strategy::offload());
  EXPECT_TRUE(bare.devices[1].connected);
}

// ---- SparOA's dynamic batching (core/dynamic_batching.hpp) ----------------------------------------

namespace {
// A GPU-like server: a batch of b takes 9 ms x (1 + 0.5 (b - 1)), so the per-request latency
// L(b) = 4.5 + 4.5 / b ms falls with b; peak memory 100 MB x b.
DynamicBatchingInputs gpu_like(int initial, int max_size) {
  DynamicBatchingInputs in;
  in.initial = initial;
  in.max_size = max_size;
  in.batch_seconds = [](int b) { return 0.009 * (1 + 0.5 * (b - 1)); };
  in.peak_memory_bytes = [](int b) { return std::optional<double>(100e6 * b); };
  return in;
}
}  // namespace

TEST(DynamicBatching, GradientStepsGrowTheBatchWhilePerRequestLatencyFalls) {
  // From B0 = 1 (eta 4): dL/dB at 1 (one-sided) = L(2) - L(1) = 6.75 - 9 = -2.25 ms, so B = 1 + 9,
  // kept at max_size 8. At 8 (one-sided) L(8) - L(7) = 4.5 (1/8 - 1/7) = -0.080 ms: B = 8.32, kept at
  // 8; L unchanged: converged after 2 iterations.
  const auto r = sparoa_batch_size(gpu_like(1, 8), DynamicBatchingParams{});
  EXPECT_EQ(r.batch, 8);
  EXPECT_EQ(r.trace, (std::vector<double>{8, 8}));
}

TEST(DynamicBatching, OverTheMemoryLimitTheBatchIsHalvedAndNeverSteppedBackOver) {
  // M_max 350 MB (sizes up to 3 fit), from B0 = 8:
  //  1: step to 8.32 -> 8; 800 MB > 350: upper 7, B = 4
  //  2: dL/dB at 4 = (L(5) - L(3)) / 2 = (5.4 - 6) / 2 = -0.3: B = 5.2; 600 MB (size 6): upper 5, B = 2.6
  //  3: dL/dB at 2.6 = (L(3.6) - L(1.6)) / 2 = (5.75 - 7.3125) / 2 = -0.78125: B = 5.725 -> 5; 500 MB:
  //     upper 4, B = 2.5
  //  4: dL/dB at 2.5 = (5.7857 - 7.5) / 2 = -0.857: B -> 4; 400 MB: upper 3, B = 2
  //  5: dL/dB at 2 = (6 - 9) / 2 = -1.5: B -> 3; 300 MB fits
  //  6: dL/dB at 3 = (5.625 - 6.75) / 2: B -> 3 again; L unchanged: converged at 3.
  DynamicBatchingParams p;
  p.memory_bytes = 350e6;
  const auto r = sparoa_batch_size(gpu_like(8, 8), p);
  ASSERT_EQ(r.trace.size(), 6u);
  const std::vector<double> expected{4, 2.6, 2.5, 2, 3, 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(r.trace[i], expected[i], 1e-12) << i;
  EXPECT_EQ(r.batch, 3);
}

TEST(DynamicBatching, TheRealTimeBoundHalvesLikeTheMemoryLimit) {
  // A batch of b takes 10 ms up to 4 and 2.5 b ms beyond (L flat at 2.5 ms from 4 on). T = 15 ms from
  // B0 = 8: the gradient at 8 is 0, the batch takes 20 ms > 15: halved to 4 (10 ms), L(4) = L(8):
  // converged after one iteration at 4.
  DynamicBatchingInputs in;
  in.initial = 8;
  in.max_size = 8;
  in.batch_seconds = [](int b) { return b <= 4 ? 0.010 : 0.0025 * b; };
  DynamicBatchingParams p;
  p.real_time_s = 0.015;
  const auto r = sparoa_batch_size(in, p);
  EXPECT_EQ(r.trace, std::vector<double>{4});
  EXPECT_EQ(r.batch, 4);
}

TEST(DynamicBatching, SparseInputsDoubleTheBatchUpToWhatFitsInMemory) {
  // eta 0 (no gradient steps), M_max 650 MB (6 fit): input sparsity 0.7 > 0.5 doubles B each
  // iteration, capped at 6: 1 -> 2 -> 4 -> 6 -> 6 (converged). Sparsity 0.3 leaves B at 1.
  DynamicBatchingInputs in = gpu_like(1, 8);
  in.input_sparsity = 0.7;
  DynamicBatchingParams p;
  p.learning_rate = 0;
  p.memory_bytes = 650e6;
  p.sparsity_threshold = 0.5;
  auto r = sparoa_batch_size(in, p);
  EXPECT_EQ(r.trace, (std::vector<double>{2, 4, 6, 6}));
  EXPECT_EQ(r.batch, 6);
  in.input_sparsity = 0.3;
  r = sparoa_batch_size(in, p);
  EXPECT_EQ(r.trace, std::vector<double>{1});
  EXPECT_EQ(r.batch, 1);
  in.input_sparsity.reset();  // not measured: the branch is skipped
  EXPECT_EQ(sparoa_batch_size(in, p).batch, 1);
}

// ---- Background load (core/background_load.hpp) ---------------------------------------------------

TEST(BackgroundLoad, TheShareIsTheLatestEventNamingTheProcessorOrNone) {
  DeviceSpec d;
  d.id = "a";
  auto ev = [](double t, const std::string& dev, double share, const std::string& proc) {
    EventSpec e;
    e.at_s = t;
    e.what = event::Load{dev, share, proc};
    return e;
  };
  // 0.5 on every processor at 1 s, 0.2 on the gpu at 2 s, 0 on every one at 3 s; b's event is not a's.
  const LoadSchedule s(d, {ev(2, "a", 0.2, "gpu"), ev(1, "a", 0.5, ""), ev(1.5, "b", 0.9, ""), ev(3, "a", 0, "")});
  EXPECT_DOUBLE_EQ(s.share_at(0.5, "cpu"), 0);
  EXPECT_DOUBLE_EQ(s.share_at(1.0, "cpu"), 0.5);
  EXPECT_DOUBLE_EQ(s.share_at(2.5, "cpu"), 0.5);
  EXPECT_DOUBLE_EQ(s.share_at(2.5, "gpu"), 0.2);
  EXPECT_DOUBLE_EQ(s.share_at(3.0, "gpu"), 0);
  EXPECT_DOUBLE_EQ(load_slowdown(0.75), 4);  // a quarter of the processor left: four times as long
}

TEST(Rescheduler, ServerFailuresAreTriggersAndTheSnapshotSaysWhichServersAreUp) {
  // core/server_failures.hpp: the scenario's fail/recover events are offered at their times (before
  // end_s) as fail:ID / recover:ID, and every snapshot knows from the same schedule which servers are up.
  Scenario s;
  s.duration_s = 10;
  ServerSpec a, b;
  a.id = "a", b.id = "b";
  s.servers = {a, b};
  auto ev = [](double t, bool fails) {
    EventSpec e;
    e.at_s = t;
    if (fails)
      e.what = event::ServerFail{"b"};
    else
      e.what = event::ServerRecover{"b"};
    return e;
  };
  s.events = {ev(2, true), ev(4, false), ev(12, true)};
  const auto events = Rescheduler::scenario_events(s, {}, s.duration_s);
  std::vector<std::string> seen;
  for (const auto& [t, trig] : events) seen.push_back(format_double(t) + " " + trig.describe(s));
  EXPECT_EQ(seen, (std::vector<std::string>{"0 start", "2 fail:b", "4 recover:b"}));  // 12 s is past end_s
  // A server trigger names its server (index 1, "b"), and no device.
  ASSERT_NE(events[1].second.as<trigger::ServerFail>(), nullptr);
  EXPECT_EQ(events[1].second.as<trigger::ServerFail>()->server.value, 1);
  EXPECT_FALSE(events[1].second.device().valid());
  ScriptedScheduler sched;
  LutSet luts;
  AnalyticEstimator est(luts, {});
  Rescheduler r(s, sched, est);
  for (const auto& [t, up] : std::vector<std::pair<double, bool>>{{1.9, true}, {2, false}, {3.9, false}, {4, true}, {12.5, false}}) {
    const SystemState st = r.snapshot(t, {}, {});
    EXPECT_TRUE(st.servers[0].up) << t;
    EXPECT_EQ(st.servers[1].up, up) << t;
  }
  const ServerAvailability avail(s);
  EXPECT_DOUBLE_EQ(avail.failed_at(1, 3), 2);
  EXPECT_DOUBLE_EQ(avail.failed_at(1, 13), 12);
  EXPECT_DOUBLE_EQ(avail.failed_at(0, 3), -1);
  EXPECT_EQ(server_failed_reason("b", 2.0000004), "server b failed at 2 s");  // to the microsecond
}

TEST(Rescheduler, TriggerTextSummarisesAKindOnlyPastItsLimit) {
  // Up to the limit every trigger is named, in order, joined by '+'.
  EXPECT_EQ(trigger_text({"start"}), "start");
  EXPECT_EQ(trigger_text({"join:a", "bandwidth:b", "join:c"}, 2), "join:a+bandwidth:b+join:c");
  // Past it (three joins, limit 2): one summary where the first join was, the ids' common prefix
  // ("d0_1" of d0_10, d0_11, d0_12) then '*'; other kinds keep their place and names.
  EXPECT_EQ(trigger_text({"period", "join:d0_10", "leave:x", "join:d0_11", "join:d0_12"}, 2), "period+join:3 devices of d0_1*+leave:x");
  // Servers are counted as servers; ids with nothing in common give a bare '*'.
  EXPECT_EQ(trigger_text({"fail:edge0", "fail:edge1", "fail:cloud"}, 2), "fail:3 servers of *");
  // The default limit is 8: nine joins are summarised, eight are not.
  std::vector<std::string> nine;
  for (int i = 0; i < 9; ++i) nine.push_back("join:dev" + std::to_string(i));
  EXPECT_EQ(trigger_text(nine), "join:9 devices of dev*");
  nine.pop_back();
  EXPECT_EQ(trigger_text(nine).size(), std::string("join:dev0").size() * 8 + 7);
}
