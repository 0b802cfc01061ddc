// Service times drawn from LUT distributions (scenario key service_time; core/execution_time.hpp
// LutSampledTime). The expected figures are queueing theory and the LUT's own quantiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <sys/wait.h>
#include <unistd.h>

#include "core/execution_time.hpp"
#include "core/metrics.hpp"
#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {

std::vector<double> latencies_s(const RunResults& r) {
  std::vector<double> v;
  for (const auto& q : r.requests)
    if (q.status == RequestRecord::Status::ok && q.t_created >= r.warmup_s) v.push_back(q.t_result - q.t_created);
  return v;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

// A local device: all 9 stages on the device, so a request's latency is its wait plus one execution
// of [0,9) at batch 1 (nothing crosses a link).
std::string local_device(const std::string& workload) { return device("d", "local", workload); }

}  // namespace

TEST(ServiceTime, PollaczekKhinchineMeanWaitWithATwoPointServiceDistribution) {
  // Service S: 5 ms or 35 ms with probability 1/2 each (levels {0, .5, .5, 1}: a jump at 0.5).
  // E[S] = 20 ms, E[S^2] = (25 + 1225) / 2 = 625 ms^2. Poisson arrivals at 25/s: rho = 0.5.
  // M/G/1 (Pollaczek-Khinchine): W = lambda E[S^2] / (2 (1 - rho)) = 25 x 6.25e-4 / 1 = 15.625 ms,
  // so the mean latency is W + E[S] = 35.625 ms. With means only (M/D/1) it would be
  // 25 x 4e-4 / 1 + 20 = 30 ms: the test tells the two apart (tolerance 3 %, about 1 ms).
  SimSetup s;
  s.write_distributed_lut("testdev", {0, 0.5, 0.5, 1}, {0.005, 0.005, 0.035, 0.035});
  s.write_lut("testsrv", 0.001);
  RunResults r = s.run(scenario(local_device("{arrival: poisson, rate_per_s: 25}"), "{window_ms: 0, max_size: 1}", 4000, 100));
  const auto lat = latencies_s(r);
  ASSERT_GT(lat.size(), 80000u);
  EXPECT_NEAR(mean_of(lat), 0.035625, 0.035625 * 0.03);
  // Every execution is one of the two points.
  for (const auto& q : r.requests) {
    if (q.status != RequestRecord::Status::ok) continue;
    const double exec = q.t_device_end - q.t_device_start;
    EXPECT_TRUE(std::abs(exec - 0.005) < kTol || std::abs(exec - 0.035) < kTol) << exec;
  }
  EXPECT_EQ(r.service_time, "sampled");
  ASSERT_EQ(r.sampled_luts.size(), 1u);
  EXPECT_EQ(r.sampled_luts[0], "testdev/dgcnn/modelnet40");
}

TEST(ServiceTime, MeanModeIsMD1) {
  // The same system with service_time: mean: every execution takes E[S] = 20 ms, and the M/D/1 mean
  // latency is 30 ms (see above).
  SimSetup s;
  s.write_distributed_lut("testdev", {0, 0.5, 0.5, 1}, {0.005, 0.005, 0.035, 0.035});
  s.write_lut("testsrv", 0.001);
  RunResults r = s.run(scenario(local_device("{arrival: poisson, rate_per_s: 25}"), "{window_ms: 0, max_size: 1}", 4000, 100), {"service_time=mean"});
  for (const auto& q : r.requests)
    if (q.status == RequestRecord::Status::ok) {
      EXPECT_NEAR(q.t_device_end - q.t_device_start, 0.020, kTol);
    }
  EXPECT_NEAR(mean_of(latencies_s(r)), 0.030, 0.030 * 0.03);
  EXPECT_EQ(r.service_time, "mean");
  EXPECT_TRUE(r.sampled_luts.empty());
}

TEST(ServiceTime, P95OfOneDeviceIsTheLutP95) {
  // Closed loop, one in flight: latency = one execution. The LUT's quantile function (standard
  // levels): linear from 10 ms at 0 to 20 ms at 0.9, 30 ms at 0.95, 40 ms at 0.99, 80 ms at 1.
  // Its p95 is 30 ms and its p50 10 + 10 x 0.5/0.9 = 15.556 ms; 40,000 draws estimate both within 1 %.
  const auto& levels = standard_quantile_levels();
  std::vector<double> q;
  for (double l : levels) {
    if (l <= 0.9)
      q.push_back(0.010 + 0.010 * l / 0.9);
    else if (l <= 0.95)
      q.push_back(0.020 + 0.010 * (l - 0.9) / 0.05);
    else if (l <= 0.99)
      q.push_back(0.030 + 0.010 * (l - 0.95) / 0.04);
    else
      q.push_back(0.040 + 0.040 * (l - 0.99) / 0.01);
  }
  SimSetup s;
  s.write_distributed_lut("testdev", levels, q);
  s.write_lut("testsrv", 0.001);
  RunResults r = s.run(scenario(local_device("{arrival: closed_loop, in_flight: 1}"), "{window_ms: 0, max_size: 1}", 700, 0));
  auto lat = latencies_s(r);
  ASSERT_GT(lat.size(), 30000u);
  EXPECT_NEAR(percentile(lat, 95), 0.030, 0.030 * 0.01);
  EXPECT_NEAR(percentile(lat, 50), 0.0155556, 0.0155556 * 0.01);
  // The sampled mean is the distribution's mean (the LUT's mean column), not the median.
  const double expected_mean = distribution_mean(levels, q.data());
  EXPECT_NEAR(mean_of(lat), expected_mean, expected_mean * 0.01);
}

TEST(ServiceTime, ServerBatchesDrawFromTheServerLut) {
  // An offloading device; the server's [0,9) at batch 1 takes 2 ms or 6 ms (1/2 each). Batch
  // executions are (t_batch_end - t_batch_start): both values occur, about half each.
  SimSetup s;
  s.write_lut("testdev", 0.010);
  s.write_distributed_lut("testsrv", {0, 0.5, 0.5, 1}, {0.002, 0.002, 0.006, 0.006});
  RunResults r = s.run(scenario(device("d", "offload"), "{window_ms: 0, max_size: 1}", 60, 0));
  int short_runs = 0, long_runs = 0;
  for (const auto& q : r.requests) {
    if (q.status != RequestRecord::Status::ok) continue;
    const double b = q.t_batch_end - q.t_batch_start;
    if (std::abs(b - 0.002) < kTol)
      ++short_runs;
    else if (std::abs(b - 0.006) < kTol)
      ++long_runs;
    else
      ADD_FAILURE() << "batch time " << b;
  }
  const int n = short_runs + long_runs;
  ASSERT_GT(n, 1000);
  // Binomial(n, 1/2): 5 standard deviations is 2.5 / sqrt(n) of n.
  EXPECT_NEAR(short_runs, n / 2.0, 5 * std::sqrt(n / 4.0));
}

TEST(ServiceTime, DrawsDependOnTheSeedOnly) {
  // SimGrid allows one engine per process: each run happens in a child that sends its latencies back.
  auto run = [](const std::string& seed) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      bool sent = false;
      {
        SimSetup s;  // its folder removed here: _exit below runs no destructor
        s.write_distributed_lut("testdev", {0, 0.5, 0.5, 1}, {0.005, 0.005, 0.035, 0.035});
        s.write_lut("testsrv", 0.001);
        const auto lat =
            latencies_s(s.run(scenario(local_device("{arrival: closed_loop, in_flight: 1}"), "{window_ms: 0, max_size: 1}", 5, 0), {"seed=" + seed}));
        const std::string bytes(reinterpret_cast<const char*>(lat.data()), lat.size() * sizeof(double));
        sent = ::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
      }
      ::_exit(sent ? 0 : 1);
    }
    ::close(fds[1]);
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return got;
  };
  // Closed loop: no arrival randomness, the seed acts through the service times alone.
  const std::string a = run("7");
  EXPECT_GT(a.size(), 100 * sizeof(double));
  EXPECT_EQ(a, run("7"));
  EXPECT_NE(a, run("8"));
}

TEST(ServiceTime, TablesWithoutDistributionsRunOnTheirMeans) {
  // The standard test LUTs have no distributions: sampled mode changes nothing (every local
  // execution is exactly 9 x 10 ms), and the results say no distribution was used.
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(local_device("{arrival: closed_loop, in_flight: 1}"), "{window_ms: 0, max_size: 1}", 2, 0));
  for (const auto& q : r.requests)
    if (q.status == RequestRecord::Status::ok) {
      EXPECT_NEAR(q.t_device_end - q.t_device_start, 0.090, kTol);
    }
  EXPECT_EQ(r.service_time, "sampled");
  EXPECT_TRUE(r.sampled_luts.empty());
}

TEST(ServiceTime, UnknownModeIsRefusedNamingTheKey) {
  SimSetup s;
  write_standard_luts(s);
  try {
    s.run(scenario(local_device("{arrival: closed_loop, in_flight: 1}")), {"service_time=median"});
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("service_time"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sampled, mean"), std::string::npos) << e.what();
  }
}

// Bytes on the wire (core/wire_bytes.hpp): requests send what the LUT measured the middleware sends.
TEST(WireBytes, UploadsSendTheMeasuredWireBytesAndPayTheCodecTime) {
  // Device LUT: every split sends 6,000 or 18,000 bytes (half each), compressing takes 2 ms on the
  // device; the server LUT: results are 300 bytes, decompressing an upload takes 3 ms on the server.
  // A pp(6) request: device stages 60 ms + 2 ms compress, then 5.1 ms + bytes / 1e6 B/s on the link,
  // then 3 ms decompress before it is queued: t_queued - t_device_start = 70.1 ms + bytes / 1e6 s.
  SimSetup s;
  s.write_lut_with_wire("testdev", 0.010, {0, 0.5, 0.5, 1}, {6000, 6000, 18000, 18000}, 0.002, 0);
  s.write_lut_with_wire("testsrv", 0.001, {0, 1}, {300, 300}, 0, 0.003);
  RunResults r = s.run(scenario(device("d", "pp(6)"), "{window_ms: 0, max_size: 1}", 20, 0));
  int small = 0, large = 0;
  for (const auto& q : r.requests) {
    if (q.status != RequestRecord::Status::ok) continue;
    EXPECT_NEAR(q.t_device_end - q.t_device_start, 0.062, kTol);
    EXPECT_TRUE(q.bytes_up == 6000 || q.bytes_up == 18000) << q.bytes_up;
    (q.bytes_up == 6000 ? small : large) += 1;
    EXPECT_NEAR(q.t_queued - q.t_device_start, 0.0701 + q.bytes_up / 1e6, kTol);
    EXPECT_DOUBLE_EQ(q.bytes_down, 300);
  }
  EXPECT_GT(small, 20);
  EXPECT_GT(large, 20);
  ASSERT_EQ(r.wire_bytes_luts.size(), 2u);
  EXPECT_TRUE(r.tensor_bytes_luts.empty());
}

TEST(WireBytes, WithoutMeasuredWireBytesTheSpecTensorBytesAreSent) {
  SimSetup s;
  write_standard_luts(s);
  RunResults r = s.run(scenario(device("d", "offload"), "{window_ms: 0, max_size: 1}", 1, 0));
  ASSERT_FALSE(r.requests.empty());
  for (const auto& q : r.requests) {
    EXPECT_DOUBLE_EQ(q.bytes_up, kRawBytes);
    EXPECT_DOUBLE_EQ(q.bytes_down, kResultBytes);
  }
  EXPECT_TRUE(r.wire_bytes_luts.empty());
  EXPECT_EQ(r.tensor_bytes_luts.size(), 2u);
}
