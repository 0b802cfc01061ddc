// The real device's side of its device loop (hw/device_requests.hpp) without threads or sockets: the
// journal gets a "created" line for every request and a "done" line when it finishes, and the work the
// loop starts is handed to the compute and upload threads once each, with what the device computed.
// (The loop's own rules are tests/unit/test_device_loop.cpp.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/strategy.hpp"
#include "hw/device_requests.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;
using namespace coinfer::hw;

namespace {
struct Journal {
  std::string dir, path;
  Journal() {
    char tmpl[] = "/tmp/coinfer-devreq-XXXXXX";
    dir = mkdtemp(tmpl);
    path = dir + "/journal.jsonl";
  }
  ~Journal() { std::filesystem::remove_all(dir); }
};
DataParallelCosts costs() { return DataParallelCosts{0.9, 0.009, 12288, 160, 0.030}; }
DeviceSpec device(Strategy s) {
  DeviceSpec d;
  d.id = "d2";
  d.strategy = s;
  return d;
}
const BandwidthSchedule kLink(device(Strategy::local()), {});  // 8 Mbit/s unless the spec says otherwise
}  // namespace

TEST(DeviceRequests, HandsEachStartedStageToItsThreadOnceWithTheComputedState) {
  Journal j;
  const DeviceSpec d = device(Strategy::pp(3));
  JournalWriter w(j.path);
  DeviceRequests rq(d, 2, 0, 1, 9, 100, costs(), kLink, w);
  rq.loop().on_join(0);
  rq.loop().wake(0);
  auto job = rq.take_compute();
  ASSERT_TRUE(job);
  ASSERT_TRUE(std::holds_alternative<RequestStages>(*job));
  EXPECT_EQ(std::get<RequestStages>(*job).request, 0);
  EXPECT_EQ(std::get<RequestStages>(*job).split, 3);
  EXPECT_FALSE(rq.take_compute());  // taken once
  EXPECT_FALSE(rq.take_upload());
  rq.keep_state(0, "state-at-3");
  rq.loop().on_computed(0, 0.1);
  rq.loop().wake(0.1);
  auto up = rq.take_upload();
  ASSERT_TRUE(up);
  EXPECT_EQ(up->id, 0);
  EXPECT_EQ(up->split, 3);
  EXPECT_EQ(up->state_bytes, "state-at-3");
  // A forwarded batch waits for the processor (request 1 computes now), then goes before our own.
  ASSERT_TRUE(rq.take_compute());  // request 1
  rq.add_helper_batch(41, 5, {{7, "first"}, {8, "second"}});
  rq.loop().wake(0.15);
  EXPECT_FALSE(rq.take_compute());
  rq.keep_state(1, "s1");
  rq.loop().on_computed(1, 0.2);
  rq.loop().wake(0.2);
  auto help = rq.take_compute();
  ASSERT_TRUE(help);
  ASSERT_TRUE(std::holds_alternative<HelperBatch>(*help));
  const HelperBatch& b = std::get<HelperBatch>(*help);
  EXPECT_EQ(b.batch, 41);
  EXPECT_EQ(b.split, 5);
  ASSERT_EQ(b.parts.size(), 2u);  // the batch as sent: one job
  EXPECT_EQ(b.parts[0].task, 7);
  EXPECT_EQ(b.parts[1].state_bytes, "second");
}

TEST(DeviceRequests, JournalsEveryRequestWhenCreatedAndWhenItFinishes) {
  Journal j;
  {
    const DeviceSpec d = device(Strategy::offload());
    JournalWriter w(j.path);
    DeviceRequests rq(d, 2, 0, 1, 9, 100, costs(), kLink, w);
    rq.loop().on_join(1.0);
    rq.loop().wake(1.0);  // request 0 on the uplink
    ASSERT_TRUE(rq.take_upload());
    rq.loop().on_uploaded(0, 1.2);
    ASSERT_NE(rq.find(0), nullptr);
    rq.loop().fail(0, 1.5, "connection to the server lost");
    EXPECT_EQ(rq.find(0), nullptr);  // finished: only the journal has it
    rq.loop().wake(1.6);             // request 1 on the uplink; the run ends
    rq.loop().abandon([](const DeviceRequest&) { return std::string("unfinished at the end of the drain"); });
  }
  const auto recs = read_journal(j.path);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].device, 2);
  EXPECT_EQ(recs[0].server, 0);
  EXPECT_EQ(recs[0].strategy, "offload");
  EXPECT_DOUBLE_EQ(recs[0].t_created, 1.0);
  EXPECT_EQ(recs[0].status, RequestRecord::Status::failed);
  EXPECT_EQ(recs[0].failure, "connection to the server lost");
  EXPECT_DOUBLE_EQ(recs[1].t_created, 1.6);
  EXPECT_EQ(recs[1].failure, "unfinished at the end of the drain");
}

// A device placing its stages on two processors (local[cpu:0-2,gpu:2-9], closed loop, 2 in flight:
// core/scenario.cpp default_in_flight): each processor's thread gets its own segment jobs, and both
// compute at once once the pipeline fills. Worked out from the loop's rules (core/device_loop.hpp):
//   t=0    request 0 created, its segment [0,2) starts on cpu; request 1 created, queued behind it.
//   t=0.1  request 0's [0,2) ends: its [2,9) starts on gpu, request 1's [0,2) on cpu - two jobs at once.
//   t=0.2  request 0's [2,9) ends: it finishes (local), released once; request 2 is admitted behind 1.
TEST(DeviceRequests, HandsEachProcessorItsOwnSegmentsAndReleasesAFinishedRequestOnce) {
  Journal j;
  DeviceSpec d = device(parse_strategy("local[cpu:0-2,gpu:2-9]"));
  d.hardware = std::make_shared<const DeviceHardware>(coinfer::test::two_processor_board("cpu", "gpu", 0));
  JournalWriter w(j.path);
  DeviceRequests rq(d, 2, 0, 1, 9, 100, costs(), kLink, w);
  std::vector<std::int64_t> released;
  rq.on_release([&](std::int64_t id) { released.push_back(id); });
  EXPECT_EQ(rq.processors(), 2);
  rq.loop().on_join(0);
  rq.loop().wake(0);
  auto first = rq.take_compute(0);
  ASSERT_TRUE(first);
  const RequestStages a = std::get<RequestStages>(*first);
  EXPECT_EQ(a.request, 0);
  EXPECT_EQ(a.begin, 0);
  EXPECT_EQ(a.end, 2);
  EXPECT_EQ(a.proc, 0);
  EXPECT_EQ(a.split, 9);
  EXPECT_FALSE(rq.take_compute(1));  // nothing on the GPU yet
  EXPECT_FALSE(rq.take_compute(7));  // no such processor: nothing, no crash
  rq.loop().on_computed(0, 0.1);
  rq.loop().wake(0.1);
  auto on_gpu = rq.take_compute(1), on_cpu = rq.take_compute(0);
  ASSERT_TRUE(on_gpu);
  ASSERT_TRUE(on_cpu);
  const RequestStages b = std::get<RequestStages>(*on_gpu), c = std::get<RequestStages>(*on_cpu);
  EXPECT_EQ(b.request, 0);
  EXPECT_EQ(b.begin, 2);
  EXPECT_EQ(b.end, 9);
  EXPECT_EQ(b.proc, 1);
  EXPECT_EQ(c.request, 1);
  EXPECT_EQ(c.begin, 0);
  EXPECT_EQ(c.end, 2);
  EXPECT_TRUE(released.empty());
  rq.loop().on_computed(0, 0.2);
  rq.loop().wake(0.2);
  EXPECT_EQ(released, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(rq.find(0), nullptr);
}
