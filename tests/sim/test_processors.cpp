// Devices with several processors in the simulator: a test board with a CPU (stages 10 ms
// each) and a GPU (stages 2 ms each) of dgcnn (9 stages), its hardware in a test profile file; the
// server and links of sim_fixture.hpp. Every expected time is worked out by hand below.
#include <gtest/gtest.h>

#include "tests/sim/sim_fixture.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {

// The board's LUT on `processor`: every stage stage_s at batch 1 (a batch of b: (1 + 0.5 (b - 1)) x).
void write_processor_lut(SimSetup& s, const std::string& processor, double stage_s) {
  const int n = 9, max_batch = 2;
  LutTable t({"testboard", "dgcnn", "modelnet40", processor}, n, max_batch);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j <= n; ++j)
      for (int b = 1; b <= max_batch; ++b) {
        const double m = (j - i) * stage_s * (1 + 0.5 * (b - 1));
        t.set_latency(i, j, b, {m, m, m, 0, 1});
      }
  t.provenance().kind = "synthesised";
  t.provenance().attributes["note"] = "test LUT";
  write_lut_file(s.dir() + "/testboard-" + processor + ".h5", {t});
}

// `interconnect`: a YAML mapping; `memory_gb`: the board's memory.
void write_board(SimSetup& s, const std::string& interconnect = "{kind: shared, source: test}", double memory_gb = 8) {
  write_standard_luts(s);
  write_processor_lut(s, "cpu", 0.010);
  write_processor_lut(s, "gpu", 0.002);
  s.write_file("hardware.yaml",
               "profiles:\n"
               "  testboard:\n"
               "    role: device\n"
               "    description: a test board\n"
               "    default_processor: gpu\n"
               "    memory: {capacity_gb: " +
                   std::to_string(memory_gb) +
                   ", gpu: shared, source: test}\n"
                   "    interconnect: " +
                   interconnect +
                   "\n"
                   "    processors:\n"
                   "      gpu: {kind: gpu, description: test, peak_gflops: 1, mem_gbps: 1, efficiency: 0.5}\n"
                   "      cpu: {kind: cpu, description: test, peak_gflops: 1, mem_gbps: 1, efficiency: 0.5}\n");
}

std::string board(const std::string& id, const std::string& strategy, const std::string& workload = "{arrival: closed_loop, in_flight: 1}",
                  const std::string& extra = "") {
  return "  - {id: " + id + ", type: testboard, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 8, latency_ms: 5}, strategy: '" + strategy +
         "', workload: " + workload + extra + "}\n";
}

std::string with_hardware(const std::string& devices) { return scenario(devices) + "hardware: LUTDIR/hardware.yaml\n"; }

// One device "d" on the fixture's board (write_board's defaults) following `strategy`, closed loop, one
// in flight.
RunResults run_on_board(const std::string& strategy) {
  SimSetup s;
  write_board(s);
  return s.run(with_hardware(board("d", strategy)));
}

// More than `at_least` requests, each of which took `latency_s`.
void expect_every_latency(const RunResults& r, size_t at_least, double latency_s) {
  ASSERT_GT(r.requests.size(), at_least);
  for (const auto& q : r.requests) EXPECT_NEAR(q.latency_s(), latency_s, kTol);
}

}  // namespace

TEST(Processors, WithoutAPlacementTheDefaultProcessorRunsEverything) {
  const RunResults r = run_on_board("local");
  // The profile's default processor is the GPU: 9 x 2 ms = 18 ms per request, back to back.
  expect_every_latency(r, 10, 0.018);
  ASSERT_EQ(r.devices[0].processors.size(), 2u);
  EXPECT_EQ(r.devices[0].processors[0].name, "gpu");
  EXPECT_EQ(r.devices[0].processors[1].name, "cpu");
  EXPECT_DOUBLE_EQ(r.devices[0].processors[1].busy_s, 0);  // the CPU never ran
  EXPECT_NEAR(r.devices[0].processors[0].busy_s, 1.0, 0.02);
}

TEST(Processors, StagesOnTwoProcessorsAddUpAndPipeline) {
  // [0,2) on the CPU: 20 ms; [2,9) on the GPU: 14 ms; shared memory, no copy -> 34 ms per request.
  // In flight 1: requests back to back every 34 ms.
  const RunResults one = run_on_board("local[cpu:0-2,gpu:2-9]");
  ASSERT_GT(one.requests.size(), 10u);
  for (size_t i = 0; i < one.requests.size(); ++i) {
    EXPECT_NEAR(one.requests[i].latency_s(), 0.034, kTol);
    EXPECT_NEAR(one.requests[i].t_created, 0.034 * static_cast<double>(i), kTol);
  }
}

TEST(Processors, TwoInputsInFlightPipelineAcrossTheProcessors) {
  SimSetup s;
  write_board(s);
  // The default in flight for local on two processors is 2: input i+1 starts on the CPU when input i
  // moves to the GPU. The CPU (20 ms) is the bottleneck: one input every 20 ms, each still 34 ms
  // (the GPU is free again 6 ms before the next input reaches it).
  RunResults two = s.run(with_hardware(board("d", "local[cpu:0-2,gpu:2-9]", "{arrival: closed_loop}")));
  ASSERT_GT(two.requests.size(), 40u);
  for (size_t i = 0; i < two.requests.size(); ++i) {
    EXPECT_NEAR(two.requests[i].t_created, 0.020 * static_cast<double>(i), kTol);
    EXPECT_NEAR(two.requests[i].latency_s(), 0.034, kTol);
  }
  // 1 s of arrivals: created at 0, 0.02, ..., 0.98 -> 50 requests; the CPU is busy all of [0, 1] s;
  // input i is on the GPU over [0.02 (i + 1), 0.02 (i + 1) + 0.014]: the last one from 1.0 s, outside
  // the window, so the window holds 49 x 14 ms = 0.686 s of GPU time.
  EXPECT_EQ(two.requests.size(), 50u);
  EXPECT_NEAR(two.devices[0].processors[1].busy_s, 1.0, 1e-6);
  EXPECT_NEAR(two.devices[0].processors[0].busy_s, 0.686, 1e-6);
}

TEST(Processors, ACopyInterconnectChargesTheTensorThatMoves) {
  SimSetup s;
  // 1e7 B/s after 100 us. dgcnn's tensors crossing split 2 are those live after stage 1 (the point
  // cloud's features and the KNN graph: tests/unit/test_model_spec.cpp): bytes_at_split(2).
  write_board(s, "{kind: copy, gbps: 0.01, latency_us: 100, source: test}");
  ModelCatalog models = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
  const double moved = models.spec("dgcnn", "modelnet40").bytes_at_split(2);
  RunResults r = s.run(with_hardware(board("d", "local[cpu:0-2,gpu:2-9]")));
  // Both processors are in main memory: only the move between them is charged.
  const double expected = 0.020 + 0.014 + 100e-6 + moved / 1e7;
  expect_every_latency(r, 5, expected);
}

TEST(Processors, ASplitStageTakesTheSlowerShare) {
  // Each stage: 75 % on the GPU (0.75 x 2 = 1.5 ms), 25 % on the CPU (0.25 x 10 = 2.5 ms): 2.5 ms,
  // 9 stages = 22.5 ms (shared memory: the exchange is free). 80 % on the GPU: max(1.6, 2.0) = 2 ms
  // per stage, 18 ms: no faster than the GPU alone.
  const RunResults r = run_on_board("local[gpu*0.75+cpu]");
  expect_every_latency(r, 5, 0.0225);
  // Both processors are busy for the whole segment.
  EXPECT_NEAR(r.devices[0].processors[0].busy_s, r.devices[0].processors[1].busy_s, 1e-9);
}

TEST(Processors, ASplitStageIsNoFasterThanItsSlowerShare) { expect_every_latency(run_on_board("local[gpu*0.8+cpu]"), 5, 0.018); }

TEST(Processors, PipelineSplitWithAPlacementThenTheServer) {
  // pp(6): [0,2) CPU 20 ms + [2,6) GPU 8 ms = 28 ms, then as Strategies.PipelineSplit...: up(8192 B)
  // = 5.1 ms + 8.192 ms, server [6,9) 3 ms, down 5.1 + 0.16 ms.
  const RunResults r = run_on_board("pp(6)[cpu:0-2,gpu:2-6]");
  const double expected = 0.028 + (0.0051 + kPooledBytes / 1e6) + 0.003 + (0.0051 + kResultBytes / 1e6);
  ASSERT_GT(r.requests.size(), 5u);
  for (const auto& q : r.requests) {
    EXPECT_NEAR(q.latency_s(), expected, kTol);
    EXPECT_NEAR(q.t_device_end - q.t_device_start, 0.028, kTol);
  }
}

TEST(Processors, AProcessorTheBoardLacksIsRefusedAtTheStrategyKey) {
  SimSetup s;
  write_board(s);
  try {
    s.run(with_hardware(board("d", "local[npu]")));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("devices[0].strategy"), std::string::npos) << what;
    EXPECT_NE(what.find("has no processor 'npu' (it has: gpu, cpu"), std::string::npos) << what;
  }
}

TEST(Processors, TooLittleMemoryFailsLocalWithTheNumbers) {
  SimSetup s;
  // 1 MB of memory: dgcnn's working sets are several MB (models/README.md), so local on the GPU runs
  // out of memory at its first segment; offload keeps nothing on the board but the input it sends.
  write_board(s, "{kind: shared, source: test}", 0.001);
  RunResults local = s.run(with_hardware(board("d", "local")));
  // Each input runs its 18 ms on the GPU (its allocation fails inside) and fails: 1 s / 18 ms inputs.
  ASSERT_EQ(local.requests.size(), 56u);
  for (const auto& q : local.requests) {
    EXPECT_EQ(q.status, RequestRecord::Status::failed);
    EXPECT_EQ(q.failure.rfind("out of memory on d:gpu (needs ", 0), 0u) << q.failure;
    EXPECT_NE(q.failure.find("MB, has 1.00 MB)"), std::string::npos) << q.failure;
    EXPECT_NEAR(q.t_device_end - q.t_device_start, 0.018, kTol);
  }
  EXPECT_GT(local.devices[0].memory[0].peak_bytes, 1e6);  // the need that did not fit
}

TEST(Processors, TooLittleMemoryStillLetsOffloadRun) {
  SimSetup s;
  write_board(s, "{kind: shared, source: test}", 0.001);
  RunResults off = s.run(with_hardware(board("d", "offload")));
  ASSERT_GT(off.requests.size(), 5u);
  for (const auto& q : off.requests) EXPECT_TRUE(q.done());
  EXPECT_NEAR(off.devices[0].memory[0].capacity_bytes, 1e6, 1e-3);
}

namespace {
// The shipped 1 GB board (scenarios/processors/pi_1gb_feature_decomposition.yaml) with its LUTs.
RunResults shipped_pi(const std::vector<std::string>& sets) {
  const std::string root = COINFER_SOURCE_DIR;
  Scenario s = load_scenario(root + "/scenarios/processors/pi_1gb_feature_decomposition.yaml", sets);
  ModelCatalog models = ModelCatalog::load(root + "/models");
  LutSet luts = load_luts(s.luts);
  return sim::run_simulation(s, models, luts);
}
}  // namespace

TEST(Processors, OnA1GBBoardTheWideGcnRunsOutOfMemoryWhole) {
  // gcn_wide on Pubmed: conv1's gathered messages alone are 2 (E + N) x 1024 x 4 B = 888 MB
  // (models/README.md); with the transformed rows and the accumulator (2 N x 1024 x 4 B = 162 MB), its
  // input (39 MB), weights, graph and cached normalisation, 1094.6 MB: over the 1 GB, every request fails
  // (the real runtime's allocator peaks at 1049 MB above its input: bench/RESULTS.md "Memory formula").
  RunResults r = shipped_pi({"duration_s=10", "warmup_s=0"});
  ASSERT_FALSE(r.requests.empty());
  for (const auto& q : r.requests) EXPECT_EQ(q.failure.rfind("out of memory on pi:cpu (needs 1094.6 MB", 0), 0u) << q.failure;
}

TEST(Processors, SearchSchedulersChooseWhatFitsInMemory) {
  // Greedy may choose feature decomposition (fd2/fd4/fd8: exact, so within max_output_error 0) and
  // offloading; local whole would run out of memory. What it chooses must fit: no request created
  // after its decision (t = 0, reaching the board after the control message) fails.
  RunResults r = shipped_pi({"duration_s=10", "warmup_s=0", "scheduler.name=greedy"});
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_EQ(r.decisions.back().scheme.find("pi=local "), std::string::npos) << r.decisions.back().scheme;
  int ok = 0;
  for (const auto& q : r.requests) {
    if (q.t_created > 0) EXPECT_TRUE(q.done()) << q.strategy << ": " << q.failure;
    ok += q.done();
  }
  EXPECT_GT(ok, 5);
}

TEST(Processors, WithoutFeatureDecompositionOnlyOffloadingFits) {
  // No variants offered (max_output_error -1): local, pp(1) and data_parallel all run conv1 on the
  // board, which does not fit; offloading (39 MB of input at 20 Mbit/s: ~16 s a request) is slow but
  // the only scheme that completes anything. A memory-blind estimator prefers the faster ones.
  SimSetup setup;
  const std::string root = COINFER_SOURCE_DIR;
  RunResults r = setup.run("name: t\nduration_s: 40\nluts: [" + root +
                           "/traces/lut/]\nservers: [{id: edge0, type: i7-7700}]\n"
                           "scheduler: {name: greedy}\ndevices:\n"
                           "  - {id: pi, type: rpi4b, memory_gb: 1, model: gcn_wide, dataset: pubmed, link: {bandwidth_mbps: 20, latency_ms: 2}}\n");
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_NE(r.decisions.back().scheme.find("pi=offload"), std::string::npos) << r.decisions.back().scheme;
}

namespace {
// The pipelined run of TwoInputsInFlightPipelineAcrossTheProcessors: over the 1 s window the CPU
// computes 1.0 s and the GPU 0.686 s; the union of the two is 1.0 s.
RunResults pipelined_with_power(SimSetup& s, const std::string& power) {
  return s.run(with_hardware(board("d", "local[cpu:0-2,gpu:2-9]", "{arrival: closed_loop}", power)));
}
}  // namespace

TEST(Processors, EachProcessorAddsItsOwnEnergy) {
  SimSetup s;
  write_board(s);
  RunResults r = pipelined_with_power(s, ", power: {idle_w: 1, processors: {cpu: {idle_w: 0.2, busy_w: 2}, gpu: {idle_w: 0.5, busy_w: 4}}}");
  // Board 1 W x 1 s = 1 J; GPU 0.5 W x 1 s + (4 - 0.5) W x 0.686 s = 2.901 J; CPU 0.2 x 1 + 1.8 x 1.0 = 2.0 J.
  // Total 5.901 J (the device-level formula would have charged one busy power over the 1.0 s union).
  ASSERT_EQ(r.devices[0].processors.size(), 2u);
  EXPECT_EQ(r.devices[0].processors[0].name, "gpu");
  EXPECT_NEAR(r.devices[0].processors[0].energy_j, 2.901, 1e-6);
  EXPECT_NEAR(r.devices[0].processors[1].energy_j, 2.0, 1e-6);
  // Split: idle 1 + 0.5 + 0.2 = 1.7 J all along; computing adds 3.5 x 0.686 + 1.8 x 1.0 = 4.201 J.
  EXPECT_NEAR(r.devices[0].energy_compute_j, 4.201, 1e-6);
  EXPECT_NEAR(r.devices[0].energy_idle_j, 1.7, 1e-6);
}

TEST(Processors, ProcessorPowerComesFromTheProfileWhereTheScenarioGivesNone) {
  SimSetup s;
  write_board(s);
  // The test profile with each processor's power stated (traces/README.md "Device profiles").
  std::string hw = s.read_file("hardware.yaml");
  const auto add = [&hw](const std::string& proc, const std::string& power) {
    const std::string key = "efficiency: 0.5}", at = "      " + proc + ": {";
    const size_t line = hw.find(at), end = hw.find(key, line);
    hw.replace(end, key.size(), "efficiency: 0.5, power: " + power + "}");
  };
  add("gpu", "{idle_w: 0.5, busy_w: 4, source: test}");
  add("cpu", "{idle_w: 0.2, busy_w: 2, source: test}");
  s.write_file("hardware.yaml", hw);
  RunResults r = pipelined_with_power(s, "");
  // As above without the board's own 1 W: 2.901 + 2.0 J, of which 0.7 J idle.
  EXPECT_NEAR(r.devices[0].energy_compute_j, 4.201, 1e-6);
  EXPECT_NEAR(r.devices[0].energy_idle_j, 0.7, 1e-6);
  EXPECT_NEAR(r.devices[0].processors[0].energy_j, 2.901, 1e-6);
}

TEST(Processors, ProcessorPowerIsRefusedWhereItCannotApply) {
  SimSetup s;
  write_board(s);
  const auto refused = [&s](const std::string& power, const std::string& key, const std::string& needle) {
    try {
      pipelined_with_power(s, power);
      ADD_FAILURE() << "accepted: " << power;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(key), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  refused(", power: {processors: {npu: {busy_w: 3}, gpu: {busy_w: 4}, cpu: {busy_w: 2}}}", "devices[0].power.processors.npu",
          "has no processor 'npu' (it has: gpu");
  // The CPU's energy silently 0 would make placing stages on it look free.
  refused(", power: {processors: {gpu: {busy_w: 4}}}", "devices[0].power.processors", "no power for processor 'cpu'");
  refused(", power: {busy_w: 5, processors: {gpu: {busy_w: 4}, cpu: {busy_w: 2}}}", "devices[0].power.busy_w", "not both");
  refused(", power: {processors: {gpu: {idle_w: 5, busy_w: 4}, cpu: {busy_w: 2}}}", "devices[0].power.processors.gpu", "busy_w");
}

TEST(Processors, DataParallelRunsTheInputsItKeepsAsPlaced) {
  SimSetup s;
  write_board(s);
  // data_parallel with its device inputs placed: each input it keeps runs [0,2) on the CPU
  // (20 ms) and [2,9) on the GPU (14 ms), 34 ms on the board as local placed so does; the others go
  // whole to the server.
  RunResults r = s.run(with_hardware(board("d", "data_parallel[cpu:0-2,gpu:2-9]")));
  int kept = 0;
  for (const auto& q : r.requests) {
    if (q.split != 9) continue;  // the server's
    ++kept;
    EXPECT_NEAR(q.t_device_end - q.t_device_start, 0.034, kTol) << q.id;
  }
  EXPECT_GT(kept, 5);
  EXPECT_GT(r.devices[0].processors[1].busy_s, 0.1);  // the CPU worked
}
