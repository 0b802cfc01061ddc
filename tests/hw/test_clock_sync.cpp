// hw/clock_sync: NTP's four-timestamp estimate, the best-of-samples rule, and moving a journal onto
// the server's clock. Values worked by hand in the comments.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "hw/clock_sync.hpp"
#include "hw/record_journal.hpp"

using namespace coinfer;
using namespace coinfer::hw;

TEST(ClockSync, FourTimestamps) {
  // The device clock is 3 s behind the server's (offset +3). The probe takes 10 ms out, the server
  // holds it 1 ms, the answer takes 10 ms back: t1 = 100 (device), t2 = 103.010, t3 = 103.011 (server),
  // t4 = 100.021 (device). offset = ((103.010 - 100) + (103.011 - 100.021)) / 2 = (3.010 + 2.990) / 2 = 3;
  // rtt = (100.021 - 100) - (103.011 - 103.010) = 0.020.
  const ClockSample s = clock_sample(100, 103.010, 103.011, 100.021);
  EXPECT_NEAR(s.offset_s, 3.0, 1e-9);
  EXPECT_NEAR(s.rtt_s, 0.020, 1e-9);
  // Asymmetric: 18 ms out, 2 ms back. offset = ((103.018 - 100) + (103.019 - 100.021)) / 2 = 3.008: wrong
  // by 8 ms, within rtt / 2 = 10 ms, as promised.
  const ClockSample a = clock_sample(100, 103.018, 103.019, 100.021);
  EXPECT_NEAR(a.offset_s, 3.008, 1e-9);
  EXPECT_LE(std::fabs(a.offset_s - 3.0), a.rtt_s / 2 + 1e-12);
}

TEST(ClockSync, TheSmallestRoundTripWins) {
  ClockEstimate e;
  EXPECT_FALSE(e.known());
  EXPECT_TRUE(e.add(clock_sample(0, 3.010, 3.011, 0.021)));   // rtt 20 ms, offset 3
  EXPECT_TRUE(e.add(clock_sample(1, 4.002, 4.003, 1.005)));   // rtt 4 ms, offset ((3.002) + (2.998)) / 2 = 3
  EXPECT_FALSE(e.add(clock_sample(2, 5.050, 5.051, 2.100)));  // rtt 99 ms: a loaded link, ignored
  EXPECT_FALSE(e.add(clock_sample(3, 2.0, 2.5, 3.0)));        // negative round trip (server stamps wrong): rejected
  EXPECT_EQ(e.samples(), 3);
  EXPECT_NEAR(e.offset_s(), 3.0, 1e-9);
  EXPECT_NEAR(e.uncertainty_s(), 0.002, 1e-9);
}

TEST(ClockSync, RecordsMoveOntoTheServersClockAndTimeZero) {
  // A device 3 s behind the server (offset +3) whose time zero was taken on its own clock 0.5 s before
  // the server's (device epoch 999.5 on its clock = 1002.5 on the server's; server epoch 1000).
  RequestRecord r;
  r.t_created = 10;       // device clock, since its time zero: server time 999.5 + 10 + 3 - 1000 = 12.5
  r.t_device_end = 10.2;  // -> 12.7
  r.t_uplink_end = 12.3;  // server clock, made relative to the device's zero: 1000 + ... = server 1011.8 -> 11.8
  r.t_result = 10.9;      // -> 13.4
  std::vector<RequestRecord> v = {r};
  JournalClock c;
  c.device_epoch_unix_s = 999.5;
  c.server_epoch_unix_s = 1000;
  c.offset_s = 3;
  correct_to_server_clock(v, c);
  EXPECT_NEAR(v[0].t_created, 12.5, 1e-9);
  EXPECT_NEAR(v[0].t_device_end, 12.7, 1e-9);
  EXPECT_NEAR(v[0].t_uplink_end, 11.8, 1e-9);
  EXPECT_NEAR(v[0].t_result, 13.4, 1e-9);
  EXPECT_NEAR(v[0].t_result - v[0].t_created, 0.9, 1e-9);  // latency unchanged: measured on one clock
  EXPECT_TRUE(std::isnan(v[0].t_batch_start));             // absent stays absent
}

TEST(ClockSync, TheJournalSaysHow) {
  const std::string path = testing::TempDir() + "/clock_journal.jsonl";
  {
    JournalWriter w(path);
    w.note("device", "pi0");
    w.epochs(999.5, 1000);
    w.clock(3.1, 0.01, 2);
    w.clock(3.0, 0.002, 5);  // the later, better estimate counts
    RequestRecord r;
    r.id = 0;
    r.t_created = 10;
    r.t_result = 10.9;
    w.created(r);
    w.done(r);
  }
  JournalClock c;
  const auto recs = read_journal_server_clock(path, &c);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_NEAR(c.offset_s, 3.0, 1e-12);
  EXPECT_NEAR(c.uncertainty_s, 0.002, 1e-12);
  EXPECT_EQ(c.samples, 5);
  EXPECT_NEAR(recs[0].t_created, 12.5, 1e-9);
  EXPECT_EQ(journal_device(path), "pi0");
  std::remove(path.c_str());
}
