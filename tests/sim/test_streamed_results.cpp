// Requests handed over as they finish (sim::SimulationOptions::stream_requests, sim/request_ledger.hpp):
// the same records and summaries as a run that holds them all, whatever the chunk. Each test runs the
// held run in a child process (one SimGrid engine per process) and the streamed one here.
#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "io/h5_file.hpp"
#include "io/record_columns.hpp"
#include "io/results_h5.hpp"
#include "sim_fixture.hpp"
#include "tests/unit/test_support.hpp"

namespace coinfer::test {
namespace {

// Eight closed loops offloading to one batching server for 4 s (~1,300 requests); `extra` is more
// top-level YAML and `workload` each device's workload.
std::string busy_scenario(const std::string& workload, const std::string& extra = "") {
  std::string devices;
  for (int i = 0; i < 8; ++i) devices += device("d" + std::to_string(i), i % 2 ? "offload" : "pp(3)", workload);
  return scenario(devices, "{window_ms: 2, max_size: 4}", 4, 0.5, 1, extra);
}

// Runs `yaml` held in a child (its results.h5 written to a folder of its own), then streamed here in chunks of
// 128 requests; compares the requests, the devices' and the servers' results, and checks
// that requests were handed over while the engine ran.
void expect_streamed_as_held(const std::string& yaml) {
  SimSetup s;
  write_standard_luts(s);
  SimSetup held_dir;  // not the LUT folder, whose every .h5 file is read as LUTs
  const std::string held_path = held_dir.dir() + "/held.h5";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int rc = 1;
    try {
      write_results_h5(held_path, s.run(yaml));
      rc = 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "held run: %s\n", e.what());
    }
    _exit(rc);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the held run failed";

  std::vector<RequestRecord> streamed;
  long long handed_early = 0;  // handed over before the run's end (4 s): while the engine ran
  sim::SimulationOptions options;
  options.request_chunk = 128;
  options.stream_requests = [&](std::vector<RequestRecord>& block) {
    if (simgrid::s4u::Engine::get_clock() < 4.0) handed_early += static_cast<long long>(block.size());
    for (auto& q : block) {
      EXPECT_EQ(q.id, static_cast<std::int64_t>(streamed.size())) << "in id order";
      streamed.push_back(std::move(q));
    }
  };
  const RunResults r = s.run(yaml, {}, options);
  EXPECT_TRUE(r.requests.empty()) << "streamed: the run holds none";
  EXPECT_EQ(r.request_count, static_cast<long long>(streamed.size()));
  EXPECT_GT(handed_early, 256) << "requests were handed over while the engine ran";

  const h5::File f = h5::File::open_read(held_path);
  expect_same_rows(read_request_records(held_path), streamed, request_fields(), "requests");
  expect_same_rows(read_columns(f, held_path, "/devices", device_result_fields()), r.devices, device_result_fields(), "devices");
  expect_same_rows(read_columns(f, held_path, "/servers", server_result_fields()), r.server_results, server_result_fields(), "servers");
}

}  // namespace

TEST(StreamedResults, ClosedLoopsAtABatchingServer) { expect_streamed_as_held(busy_scenario("{arrival: closed_loop, in_flight: 2}")); }

// A server outage (requests lost at the server, failed by their devices while the server held them)
// and deadlines dropping requests on the device and at the server: chunks with such requests stay
// until the run's end, and nothing read or written after a request finished is lost.
TEST(StreamedResults, AnOutageAndDropsPastADeadline) {
  expect_streamed_as_held(busy_scenario("{arrival: poisson, rate_per_s: 60, deadline_ms: 40, drop_late: true}",
                                        "events:\n  - {at_s: 1.5, server: srv, fail: true}\n  - {at_s: 2.5, server: srv, recover: true}\n"));
}

}  // namespace coinfer::test
