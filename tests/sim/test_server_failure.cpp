// Servers that fail and recover (core/server_failures.hpp), timed by hand on the
// fixture (sim_fixture.hpp): offload = up 17.388 ms (5.1 ms + 12,288 B / 1e6 B/s) + server 9 ms + down
// 5.26 ms = 31.648 ms a request, closed loop, one in flight; pp(6) = 60 ms on the device + up 13.292
// ms + 3 ms + 5.26 ms = 81.552 ms.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/input_error.hpp"
#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {
constexpr double kOffload = 0.031648;
int count_failed(const RunResults& r, const std::string& reason) {
  int n = 0;
  for (const auto& q : r.requests) n += q.status == RequestRecord::Status::failed && q.failure == reason;
  return n;
}
// `device_entry` alone on the fixture's server "srv" (one worker, no batching) for `duration_s`, the
// server failing at `fail_s` and recovering at `recover_s`; `extra` is more top-level YAML.
RunResults run_with_outage(const std::string& device_entry, double duration_s, double fail_s, double recover_s, const std::string& extra = "") {
  SimSetup s;
  write_standard_luts(s);
  return s.run(scenario(device_entry, "{window_ms: 0, max_size: 1}", duration_s, 0, 1,
                        extra + "events:\n  - {at_s: " + std::to_string(fail_s) +
                            ", server: srv, fail: true}\n  - {at_s: " + std::to_string(recover_s) + ", server: srv, recover: true}\n"));
}
}  // namespace

TEST(ServerFailure, WorkAtTheServerFailsAtTheFailureAndTheClosedLoopWaitsForTheRecovery) {
  // Requests 0-2 complete at 1, 2, 3 x 31.648 ms. Request 3 (created 94.944 ms) is uploaded at
  // 112.332 ms and runs on the server until 121.332 ms: the failure at 120 ms loses it (failed then).
  // Nothing is created while the server is down; at the recovery (200 ms) requests start again at 200
  // + k x 31.648 ms for k = 0..3 (< 300 ms), all completing.
  const RunResults r = run_with_outage(device("a", "offload"), 0.3, 0.12, 0.2);
  ASSERT_EQ(r.requests.size(), 8u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(r.requests[static_cast<size_t>(i)].done()) << i;
  const auto& lost = r.requests[3];
  EXPECT_EQ(lost.status, RequestRecord::Status::failed);
  EXPECT_EQ(lost.failure, "server srv failed at 0.12 s");
  EXPECT_NEAR(lost.t_created, 3 * kOffload, kTol);
  for (int k = 0; k < 4; ++k) {
    const auto& q = r.requests[static_cast<size_t>(4 + k)];
    EXPECT_NEAR(q.t_created, 0.2 + k * kOffload, kTol) << k;
    EXPECT_TRUE(q.done()) << k;
    EXPECT_NEAR(q.latency_s(), kOffload, kTol) << k;
  }
  EXPECT_EQ(r.summary.back().completed, 7);
  // The cut batch's span ends at the failure: busy = 3 x 9 ms before, 112.332..120 ms cut, 3 x 9 ms
  // after the recovery (the fourth, at 312.332 ms, starts past the 300 ms window) = 61.668 ms over 7
  // batches; down 80 ms of the window.
  EXPECT_NEAR(lost.t_batch_start, 3 * kOffload + 0.017388, kTol);
  EXPECT_NEAR(lost.t_batch_end, 0.12, kTol);
  ASSERT_EQ(r.server_results.size(), 1u);
  EXPECT_NEAR(r.server_results[0].busy_s, 0.061668, kTol);
  EXPECT_EQ(r.server_results[0].batches, 7);
  EXPECT_EQ(r.server_results[0].failures, 1);
  EXPECT_NEAR(r.server_results[0].down_s, 0.08, 1e-12);
  // The events are recorded with the server's id.
  int server_events = 0;
  for (const auto& e : r.events)
    if (e.kind == "fail" || e.kind == "recover") {
      EXPECT_EQ(e.server, "srv");
      EXPECT_EQ(e.device, "");
      ++server_events;
    }
  EXPECT_EQ(server_events, 2);
}

TEST(ServerFailure, AnUploadOnTheLinkWhenTheServerFailsFailsWhenItEnds) {
  // Request 3 (created 94.944 ms) is on the link until 112.332 ms when the server fails at 100 ms: it
  // fails at the end of its upload; no request is created before the recovery at 200 ms.
  const RunResults r = run_with_outage(device("a", "offload"), 0.3, 0.1, 0.2);
  ASSERT_EQ(r.requests.size(), 8u);
  EXPECT_EQ(r.requests[3].failure, "server srv failed at 0.1 s");
  EXPECT_TRUE(std::isnan(r.requests[3].t_uplink_end));  // never received
  EXPECT_NEAR(r.requests[4].t_created, 0.2, kTol);
  EXPECT_EQ(count_failed(r, "server srv failed at 0.1 s"), 1);
}

TEST(ServerFailure, ARequestThatReachesItsUploadWhileTheServerIsDownFailsThere) {
  // pp(6): request 0 computes [0, 60 ms); the server fails at 50 ms; at 60 ms its upload would start:
  // it fails there ("is down"); the loop waits; at the recovery (150 ms) request 1 starts and takes
  // 81.552 ms.
  const RunResults r = run_with_outage(device("a", "pp(6)"), 0.2, 0.05, 0.15);
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_EQ(r.requests[0].failure, "server srv is down (failed at 0.05 s)");
  EXPECT_NEAR(r.requests[0].t_device_end, 0.06, kTol);
  EXPECT_NEAR(r.requests[1].t_created, 0.15, kTol);
  EXPECT_NEAR(r.requests[1].latency_s(), 0.081552, kTol);
}

TEST(ServerFailure, OpenLoopArrivalsDuringTheOutageFailAtOnceAndNoneIsLostSilently) {
  // Poisson offload at 20/s for 2 s, the server down over [0.5, 1.5): every request created in the
  // outage fails at its upload with the reason (the uplink is free then: nothing else is queued), the
  // rest complete; every request ends ok or with a reason.
  const RunResults r = run_with_outage(device("a", "offload", "{arrival: poisson, rate_per_s: 20}"), 2, 0.5, 1.5);
  int in_outage = 0, failed_down = 0;
  for (const auto& q : r.requests) {
    EXPECT_TRUE(q.done() || !q.failure.empty()) << q.id;
    if (q.t_created >= 0.5 && q.t_created < 1.5) {
      ++in_outage;
      if (q.failure == "server srv is down (failed at 0.5 s)") {
        ++failed_down;
        EXPECT_TRUE(std::isnan(q.t_uplink_end));  // nothing was sent
      }
    }
  }
  EXPECT_GT(in_outage, 5);  // 20/s over 1 s: about 20
  EXPECT_EQ(failed_down, in_outage);
}

TEST(ServerFailure, TheSchedulerIsTriggeredAndKeepsTheDeviceLocalWhileTheServerIsDown) {
  // hierarchical (latency): offload (31.6 ms) beats local (90 ms); at the failure local is the only
  // scheme that serves; at the recovery offload again. Both decisions name their trigger.
  const RunResults r = run_with_outage(device("a", "local"), 1, 0.3, 0.6, "scheduler: {name: hierarchical, objective: latency}\n");
  ASSERT_EQ(r.decisions.size(), 3u);
  EXPECT_NE(r.decisions[0].scheme.find("a=offload"), std::string::npos) << r.decisions[0].scheme;
  EXPECT_EQ(r.decisions[1].trigger, "fail:srv");
  EXPECT_NEAR(r.decisions[1].t_s, 0.3, kTol);
  EXPECT_NE(r.decisions[1].scheme.find("a=local"), std::string::npos) << r.decisions[1].scheme;
  EXPECT_EQ(r.decisions[2].trigger, "recover:srv");
  EXPECT_NE(r.decisions[2].scheme.find("a=offload"), std::string::npos) << r.decisions[2].scheme;
  // Local requests ran during the outage (the first created after the control message arrived).
  int local_done = 0;
  for (const auto& q : r.requests) local_done += q.done() && q.strategy == "local" && q.t_created > 0.3 && q.t_created < 0.6;
  EXPECT_GE(local_done, 2);  // 300 ms / 90 ms
}

TEST(ServerFailure, FailingAServerThatIsDownIsRefusedWithItsLine) {
  SimSetup s;
  write_standard_luts(s);
  try {
    s.run(scenario(device("a", "offload"), "{window_ms: 0, max_size: 1}", 1, 0, 1,
                   "events:\n  - {at_s: 0.1, server: srv, fail: true}\n  - {at_s: 0.2, server: srv, fail: true}\n"));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("already down"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, 13) << e.what();  // the second fail (name, seed, ... devices, the device, events: lines 1-11)
  }
}
