// No request is lost silently: what cannot finish within drain_s after arrivals end is recorded as
// failed, with the reason.
#include <gtest/gtest.h>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

TEST(Faults, UnfinishedRequestsAreRecordedAsFailed) {
  SimSetup s;
  s.write_lut("testdev", 0.010);
  s.write_lut("testsrv", 10.0);  // 90 s on the server: cannot finish
  RunResults r = s.run(scenario(device("d", "offload"), "{window_ms: 0, max_size: 1}", 1) + "drain_s: 0.5\n");
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].status, RequestRecord::Status::failed);
  EXPECT_NE(r.requests[0].failure.find("drain_s"), std::string::npos);
  EXPECT_NEAR(r.end_s, 1.5, kTol);
  EXPECT_EQ(r.summary.back().failed, 1);
  EXPECT_EQ(r.summary.back().completed, 0);
}

TEST(Faults, EveryRequestCompletesWhenTheSystemKeepsUp) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("a", "pp(6)", "{arrival: poisson, rate_per_s: 5}") + device("b", "data_parallel", "{arrival: closed_loop}"),
                                "{window_ms: 10, max_size: 4}", 20));
  ASSERT_GT(r.requests.size(), 100u);
  for (const auto& q : r.requests) EXPECT_TRUE(q.done() && q.status == RequestRecord::Status::ok) << q.id;
}
