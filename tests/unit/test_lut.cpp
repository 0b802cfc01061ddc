#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "core/execution_time.hpp"
#include "core/input_error.hpp"
#include "core/lut_synth.hpp"
#include "core/wire_bytes.hpp"
#include "io/device_profile_loader.hpp"
#include "io/lut_codec.hpp"
#include "io/lut_csv.hpp"
#include "io/h5_file.hpp"
#include "io/lut_h5.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;
namespace fs = std::filesystem;

namespace {
using test::catalog;
std::string temp_dir() { return test::temp_dir("unit"); }
}  // namespace

TEST(LutSynth, StageTimeFollowsRooflineFormula) {
  StageSpec s;
  s.flops = 2e9;          // 2 GFLOP
  s.traffic_bytes = 1e8;  // 100 MB
  ProcessorProfile p;
  p.peak_gflops = 100;      // compute bound: 2e9 / (0.5 * 1e11) = 0.04 s
  p.mem_gbps = 10;          // memory: 1e8 / (0.5 * 1e10) = 0.02 s
  p.stage_overhead_ms = 1;  // + 0.001 s
  p.batch_half = 1;         // batch 3: scale (3+1)/(1+1) = 2
  EXPECT_NEAR(synth_stage_seconds(s, p, 0.5, 1), 0.001 + 0.04, 1e-12);
  EXPECT_NEAR(synth_stage_seconds(s, p, 0.5, 3), 0.001 + 0.08, 1e-12);
  p.mem_gbps = 1;  // now memory bound: 1e8 / (0.5 * 1e9) = 0.2 s
  EXPECT_NEAR(synth_stage_seconds(s, p, 0.5, 1), 0.201, 1e-12);
}

// The shipped profiles describe boards by their processors and memory (traces/README.md).
TEST(DeviceProfiles, BoardsHaveTheirProcessorsMemoryAndInterconnect) {
  const auto profiles = load_device_profiles(std::string(COINFER_SOURCE_DIR) + "/traces/devices.yaml");
  const DeviceProfile& tx2 = profiles.at("jetson-tx2");
  ASSERT_EQ(tx2.processors.size(), 2u);
  EXPECT_EQ(tx2.processor()->name, "gpu");  // the default: what lut/jetson-tx2.h5 describes
  EXPECT_EQ(tx2.processor("cpu")->kind, "cpu");
  EXPECT_EQ(tx2.processor("cpu")->cores, 6);
  EXPECT_EQ(tx2.processor("npu"), nullptr);
  EXPECT_DOUBLE_EQ(tx2.memory.capacity_bytes, 8e9);
  EXPECT_TRUE(tx2.memory.gpu_shared);
  EXPECT_DOUBLE_EQ(tx2.copy_seconds(1e6), 0);  // zero copy between its CPU and GPU
  // The Orin boards copy (SparOA's engine, Sec. 5.1) at half their memory's bandwidth after 10 us:
  // AGX 1.024 MB / 102.4 GB/s = 10 us, + 10 us; Nano 1.02 MB / 51 GB/s = 20 us, + 10 us.
  EXPECT_NEAR(profiles.at("jetson-agx-orin").copy_seconds(1.024e6), 2e-5, 1e-15);
  EXPECT_NEAR(profiles.at("jetson-orin-nano").copy_seconds(1.02e6), 3e-5, 1e-15);
  EXPECT_EQ(profiles.at("core-ultra-165h").processor()->kind, "npu");
  EXPECT_DOUBLE_EQ(profiles.at("rpi3b").memory.capacity_bytes, 1e9);
  // An old-style profile (the servers) is one processor named "default".
  const DeviceProfile& gtx = profiles.at("gtx1060");
  ASSERT_EQ(gtx.processors.size(), 1u);
  EXPECT_EQ(gtx.processor()->name, "default");
  EXPECT_EQ(gtx.processor()->kind, "gpu");
  // Every shipped profile's figures say where they come from.
  for (const auto& [type, p] : profiles)
    for (const auto& proc : p.processors) EXPECT_FALSE(proc.description.empty()) << type << "." << proc.name;
}

TEST(DeviceProfiles, ACopyBetweenProcessorsCostsItsLatencyPlusItsBytesAtTheLinkRate) {
  DeviceProfile p;
  p.interconnect.zero_copy = false;
  p.interconnect.gbps = 8;         // 8e9 B/s
  p.interconnect.latency_us = 10;  // 1e-5 s
  // 4 MB: 1e-5 + 4e6 / 8e9 = 1e-5 + 5e-4 = 5.1e-4 s.
  EXPECT_DOUBLE_EQ(p.copy_seconds(4e6), 5.1e-4);
  EXPECT_DOUBLE_EQ(p.copy_seconds(0), 0);
}

TEST(DeviceProfiles, BadProcessorsAreRefusedWithTheirKey) {
  const std::string dir = ::testing::TempDir();
  auto refused = [&](const std::string& text, const std::string& fragment) { test::expect_profiles_refused(dir + "/profiles.yaml", text, fragment); };
  const std::string head = "profiles:\n  b:\n    role: device\n    description: x\n";
  const std::string proc = "        peak_gflops: 1\n        mem_gbps: 1\n        efficiency: 0.5\n        description: y\n";
  refused(head + "    processors:\n      p:\n        kind: tpu\n" + proc, "processors.p.kind");
  refused(head + "    processors:\n      p:\n" + proc, "required (cpu, gpu or npu)");
  refused(head + "    default_processor: q\n    processors:\n      p:\n        kind: cpu\n" + proc, "no processor 'q'");
  refused(head + "    memory: {capacity_gb: 0, source: s}\n    processors:\n      p:\n        kind: cpu\n" + proc, "capacity_gb");
  refused(head + "    interconnect: {kind: copy, source: s}\n    processors:\n      p:\n        kind: cpu\n" + proc, "gbps");
  refused(head +
              "    processors:\n      p:\n        kind: cpu\n        peak_gflops: 1\n        mem_gbps: 1\n        description: y\n"
              "        efficiency_from: nosuch.cpu\n",
          "unknown profile or processor 'nosuch.cpu'");
  // A processor named "default" is still under processors (it was looked up as an old-style profile:
  // an internal error, exit 1, found by the scenario fuzzer through a hardware file).
  refused(head +
              "    processors:\n      default:\n        kind: cpu\n        peak_gflops: 1\n        mem_gbps: 1\n        description: y\n"
              "        efficiency_from: nosuch\n",
          "profiles.yaml:11:26: key 'profiles.b.processors.default.efficiency_from'");  // its value's line and column
  // A processor named twice (yaml-cpp keeps both; the lookup by name found the other one).
  refused(head + "    processors:\n      p:\n        kind: cpu\n" + proc + "      p:\n        kind: gpu\n" + proc, "repeated key (first at line 6)");
}

// A hardware file's parse is kept for the same path and bytes (every scenario load reads it): a file
// rewritten in place, even to the same length (cores 2 -> 3), is read anew, and errors are not kept.
TEST(DeviceProfiles, AFileRewrittenInPlaceIsReadAnew) {
  const std::string dir = testing::TempDir() + "/coinfer-hardware-rewrite";
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/hw.yaml";
  const auto write = [&](const std::string& cores) {
    std::ofstream(file, std::ios::trunc) << "profiles:\n  b:\n    role: device\n    description: x\n    processors:\n      p:\n"
                                            "        kind: cpu\n        cores: "
                                         << cores
                                         << "\n        peak_gflops: 1\n        mem_gbps: 1\n"
                                            "        efficiency: 0.5\n        description: y\n";
  };
  const auto cores = [&] { return load_hardware_file(file).profiles.at("b").processor()->cores; };
  write("2");
  EXPECT_EQ(cores(), 2);
  EXPECT_EQ(cores(), 2);  // kept
  write("3");
  EXPECT_EQ(cores(), 3);
  write("x");
  EXPECT_THROW(cores(), InputError);
  write("2");
  EXPECT_EQ(cores(), 2);
  EXPECT_TRUE(load_hardware_file(file).radios.empty());
  std::filesystem::remove_all(dir);
}

TEST(LutSynth, CalibratedProfilesHitThePublishedDeviceOnlyLatency) {
  auto profiles = load_device_profiles(std::string(COINFER_SOURCE_DIR) + "/traces/devices.yaml");
  ModelSpec m = catalog().instantiate("dgcnn", "modelnet40");
  for (auto [type, ms] : {std::pair<std::string, double>{"jetson-tx2", 52.1}, {"rpi4b", 241.5}}) {
    const DeviceProfile& p = profiles.at(type);
    double eta = calibrate_efficiency(m, *p.processor(), ms);
    LutTable t = synthesise_lut(m, p, *p.processor(), eta, "test", SynthOptions{});
    EXPECT_NEAR(t.mean_seconds(0, 9, 1) * 1e3, ms, 1e-9) << type;
    EXPECT_EQ(t.provenance().kind, "synthesised");
    EXPECT_NE(t.provenance().attributes.at("note").find("not measurements"), std::string::npos);
    // Ranges add up: [0,4) + [4,9) = [0,9).
    EXPECT_NEAR(t.mean_seconds(0, 4, 2) + t.mean_seconds(4, 9, 2), t.mean_seconds(0, 9, 2), 1e-12);
  }
}

TEST(LutSynth, ShippedLutsSaySynthesisedAndCoverBatch1To8) {
  // The graph and point-cloud models in traces/lut; the image models in traces/lut_images, for SparOA's
  // two boards only (scripts/make_luts.sh).
  LutSet set = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut"});
  LutSet images = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut_images"});
  for (const char* type : {"jetson-tx2", "jetson-nano", "rpi4b", "rpi3b", "gtx1060", "i7-7700", "jetson-orin-nano", "jetson-agx-orin"})
    for (const auto& model : catalog().model_names())
      for (const auto& ds : catalog().datasets_for(model)) {
        const bool image = catalog().instantiate(model, ds).dataset.kind == "image";
        if (image && std::string(type).rfind("jetson-", 0) != 0) continue;
        if (image && (std::string(type) == "jetson-tx2" || std::string(type) == "jetson-nano")) continue;
        const LutTable& t = image ? images.table({type, model, ds, "gpu"}) : set.table({type, model, ds});
        EXPECT_EQ(t.provenance().kind, "synthesised");
        EXPECT_GE(t.max_batch(), 8);
        EXPECT_TRUE(t.latency_gaps().empty());
      }
  EXPECT_NEAR(set.table({"rpi4b", "dgcnn", "modelnet40"}).mean_seconds(0, 9, 1), 0.2415, 1e-9);
  EXPECT_NEAR(set.table({"jetson-tx2", "dgcnn", "modelnet40"}).mean_seconds(0, 9, 1), 0.0521, 1e-9);
}

TEST(LutFile, RoundTripKeepsEveryValueAndGap) {
  const std::string dir = temp_dir();
  LutTable t({"board", "dgcnn", "modelnet40"}, 9, 3);
  t.set_latency(0, 9, 1, {0.25, 0.24, 0.3, 0.01, 50});
  t.set_latency(2, 5, 3, {0.125, 0.12, 0.15, 0.002, 20});
  t.set_peak_memory(0, 9, 123456);
  for (int k = 0; k <= 9; ++k) t.bytes_per_split()[k] = 1000 + k;
  t.provenance().kind = "measured";
  t.provenance().attributes["cpu"] = "test cpu";
  write_lut_file(dir + "/board.h5", {t});
  auto back = read_lut_file(dir + "/board.h5");
  ASSERT_EQ(back.size(), 1u);
  const LutTable& b = back[0];
  EXPECT_EQ(b.key(), t.key());
  EXPECT_DOUBLE_EQ(b.latency(0, 9, 1).mean_s, 0.25);
  EXPECT_DOUBLE_EQ(b.latency(0, 9, 1).p95_s, 0.3);
  EXPECT_EQ(b.latency(2, 5, 3).count, 20);
  EXPECT_FALSE(b.has_latency(2, 5, 2));
  EXPECT_EQ(*b.peak_memory(0, 9), 123456);
  EXPECT_FALSE(b.peak_memory(1, 2).has_value());
  EXPECT_EQ(b.bytes_per_split()[3], 1003);
  EXPECT_EQ(b.provenance().kind, "measured");
  EXPECT_EQ(b.provenance().attributes.at("cpu"), "test cpu");
  EXPECT_EQ(b.latency_gaps().size(), 9u * 10 / 2 * 3 - 2);
  fs::remove_all(dir);
}

TEST(LutFile, PeakMemoryPerBatchAndStageSparsityRoundTripThroughFileAndBytes) {
  const std::string dir = temp_dir();
  LutTable t({"board", "gcn", "mr", "cpu"}, 3, 4);
  t.set_latency(0, 3, 1, {0.1, 0.1, 0.1, 0, 1});
  t.set_peak_memory(0, 3, 1000);     // batch 1: the form without a batch
  t.set_peak_memory(0, 3, 3, 2900);  // batch 3
  t.set_peak_memory(1, 2, 4, 77);
  t.set_stage_output_sparsity(0, 0.5);
  t.set_stage_output_sparsity(2, 0);  // measured: no zeros (not the same as not measured)
  t.provenance().kind = "measured";
  EXPECT_TRUE(t.has_peak_memory_beyond_batch_one());
  write_lut_file(dir + "/b.h5", {t});
  EXPECT_EQ(lut_file_schema_version(dir + "/b.h5"), 4);  // additive datasets: the version the key needs, no more
  for (const LutTable& b : {read_lut_file(dir + "/b.h5").at(0), decode_lut_tables(encode_lut_tables({t})).at(0)}) {
    EXPECT_EQ(*b.peak_memory(0, 3), 1000);
    EXPECT_EQ(*b.peak_memory(0, 3, 1), 1000);
    EXPECT_EQ(*b.peak_memory(0, 3, 3), 2900);
    EXPECT_FALSE(b.peak_memory(0, 3, 2).has_value());
    EXPECT_EQ(*b.peak_memory(1, 2, 4), 77);
    EXPECT_FALSE(b.peak_memory(1, 2, 5).has_value());  // beyond the table's batch sizes: none, no throw
    EXPECT_EQ(*b.stage_output_sparsity(0), 0.5);
    EXPECT_FALSE(b.stage_output_sparsity(1).has_value());
    EXPECT_EQ(*b.stage_output_sparsity(2), 0);
    EXPECT_FALSE(b.stage_output_sparsity(3).has_value());
  }
  // with_max_batch keeps both.
  const LutTable wider = t.with_max_batch(6);
  EXPECT_EQ(*wider.peak_memory(0, 3, 3), 2900);
  EXPECT_EQ(*wider.stage_output_sparsity(0), 0.5);
  // A table with batch 1 only writes no per-batch dataset; a fraction outside [0, 1] is refused.
  LutTable one({"board", "gcn", "mr"}, 3, 1);
  one.set_peak_memory(0, 3, 5);
  EXPECT_FALSE(one.has_peak_memory_beyond_batch_one());
  EXPECT_THROW(one.set_stage_output_sparsity(0, 1.5), std::invalid_argument);
  EXPECT_THROW(one.set_stage_output_sparsity(3, 0.5), std::invalid_argument);  // stages 0..2
  EXPECT_THROW(one.set_stage_output_sparsity(0, std::nan("")), std::invalid_argument);
  fs::remove_all(dir);
}

TEST(LutFile, MissingEntryErrorNamesTheKey) {
  LutTable t({"board", "dgcnn", "modelnet40"}, 9, 2);
  try {
    t.latency(1, 4, 2);
    FAIL();
  } catch (const LutMissingError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("board/dgcnn/modelnet40"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1,4)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("batch size 2"), std::string::npos) << msg;
  }
  LutSet set;
  set.add(t, "x.h5");
  try {
    set.table({"rpi4b", "dgcnn", "modelnet40"});
    FAIL();
  } catch (const LutMissingError& e) {
    EXPECT_NE(std::string(e.what()).find("'rpi4b'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("board"), std::string::npos);  // the types that do exist
  }
}

TEST(LutFile, CorruptOrForeignFilesAreInputErrors) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/junk.h5") << "this is not hdf5";
  EXPECT_THROW(read_lut_file(dir + "/junk.h5"), InputError);
  EXPECT_THROW(read_lut_file(dir + "/absent.h5"), InputError);
  // A truncated real LUT file.
  LutTable t({"board", "gcn", "mr"}, 4, 1);
  t.set_latency(0, 4, 1, {0.1, 0.1, 0.1, 0, 1});
  t.provenance().kind = "measured";
  write_lut_file(dir + "/ok.h5", {t});
  auto size = fs::file_size(dir + "/ok.h5");
  fs::resize_file(dir + "/ok.h5", size / 2);
  EXPECT_THROW(read_lut_file(dir + "/ok.h5"), InputError);
  fs::remove_all(dir);
}

TEST(LutCsv, ImportConvertsMillisecondsAndTakesBytesFromTheSpec) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/m.csv") << "# my board\n"
                                   "device_type,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,count,peak_memory_bytes\n"
                                   "myboard,gcn,mr,0,4,1,12.5,12,14,0.5,100,2048\n"
                                   "myboard,gcn,mr,0,2,2,20,19,22,1,100,\n";
  auto tables = import_lut_csv(dir + "/m.csv", catalog(), "measured on my board");
  ASSERT_EQ(tables.size(), 1u);
  const LutTable& t = tables[0];
  EXPECT_DOUBLE_EQ(t.latency(0, 4, 1).mean_s, 0.0125);
  EXPECT_EQ(t.max_batch(), 2);
  EXPECT_EQ(*t.peak_memory(0, 4), 2048);
  EXPECT_EQ(t.provenance().kind, "imported");
  EXPECT_DOUBLE_EQ(t.bytes_per_split()[0], catalog().instantiate("gcn", "mr").bytes_at_split(0));
  std::ofstream(dir + "/bad.csv") << "device_type,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,cnt\n";
  try {
    import_lut_csv(dir + "/bad.csv", catalog(), "x");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
  }
  std::ofstream(dir + "/bad2.csv") << "device_type,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,count\n"
                                      "b,gcn,mr,0,4,1,abc,1,1,1,1\n";
  try {
    import_lut_csv(dir + "/bad2.csv", catalog(), "x");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.key(), "mean_ms");
  }
  EXPECT_THROW(import_lut_csv(dir + "/m.csv", catalog(), ""), InputError);
  fs::remove_all(dir);
}

TEST(LutCodec, EveryShippedLutSurvivesTheIsolatedReadersByteForm) {
  // read_lut_file hands tables from its child process to the parent as these bytes.
  for (const auto& e : fs::directory_iterator(std::string(COINFER_SOURCE_DIR) + "/traces/lut")) {
    if (e.path().extension() != ".h5") continue;
    const auto tables = read_lut_file_in_process(e.path().string());
    const std::string bytes = encode_lut_tables(tables);
    const auto back = decode_lut_tables(bytes);
    ASSERT_EQ(back.size(), tables.size());
    EXPECT_EQ(encode_lut_tables(back), bytes) << e.path();
    EXPECT_EQ(back[0].provenance().attributes, tables[0].provenance().attributes);
  }
}

// Tables of one device type's processors (traces/README.md "Processors").
TEST(LutProcessors, ADeviceFindsItsProcessorsTableOrTheTypesOnlyOne) {
  auto table = [](const std::string& processor, double s) {
    LutTable t({"tx2", "m", "d", processor}, 2, 1);
    t.set_latency(0, 2, 1, {s, s, s, 0, 1});
    return t;
  };
  LutSet both;
  both.add(table("gpu", 0.05), "gpu.h5");
  both.add(table("cpu", 0.12), "cpu.h5");
  EXPECT_DOUBLE_EQ(both.table({"tx2", "m", "d", "gpu"}).mean_seconds(0, 2, 1), 0.05);
  EXPECT_DOUBLE_EQ(both.table({"tx2", "m", "d", "cpu"}).mean_seconds(0, 2, 1), 0.12);
  EXPECT_EQ(both.origin({"tx2", "m", "d", "cpu"}), "cpu.h5");
  EXPECT_FALSE(both.contains({"tx2", "m", "d", "npu"}));
  try {  // two processors, none named: the device must say which
    both.table({"tx2", "m", "d"});
    ADD_FAILURE() << "an ambiguous key was answered";
  } catch (const LutMissingError& e) {
    EXPECT_NE(std::string(e.what()).find("several processors"), std::string::npos) << e.what();
  }
  LutSet gpu_only;
  gpu_only.add(table("gpu", 0.05), "gpu.h5");
  EXPECT_DOUBLE_EQ(gpu_only.table({"tx2", "m", "d"}).mean_seconds(0, 2, 1), 0.05);  // its one table, whatever it names
  EXPECT_FALSE(gpu_only.contains({"tx2", "m", "d", "cpu"}));
  LutSet unnamed;  // a table naming no processor: the type's only one, whichever a device names
  unnamed.add(table("", 0.2), "old.h5");
  EXPECT_DOUBLE_EQ(unnamed.table({"tx2", "m", "d", "cpu"}).mean_seconds(0, 2, 1), 0.2);
  EXPECT_EQ(unnamed.table({"tx2", "m", "d", "cpu"}).key().to_string(), "tx2/m/d");
  EXPECT_EQ(LutKey("tx2", "m", "d", "gpu").to_string(), "tx2:gpu/m/d");
}

TEST(LutProcessors, AFileNamesItsProcessorFromSchemaFourAndOlderFilesNone) {
  const std::string dir = ::testing::TempDir();
  LutTable t({"tx2", "gcn", "mr", "cpu"}, 2, 1);
  t.set_latency(0, 2, 1, {0.1, 0.1, 0.1, 0, 1});
  t.provenance().kind = "measured";
  write_lut_file(dir + "/cpu.h5", {t});
  EXPECT_EQ(lut_file_schema_version(dir + "/cpu.h5"), 4);
  EXPECT_EQ(read_lut_file(dir + "/cpu.h5").at(0).key(), t.key());
  LutTable plain({"tx2", "gcn", "mr"}, 2, 1);
  plain.set_latency(0, 2, 1, {0.1, 0.1, 0.1, 0, 1});
  plain.provenance().kind = "measured";
  write_lut_file(dir + "/plain.h5", {plain});
  EXPECT_EQ(lut_file_schema_version(dir + "/plain.h5"), 2);  // older builds still read it
  EXPECT_EQ(read_lut_file(dir + "/plain.h5").at(0).key().processor, "");
  LutTable gpu = t;
  gpu = LutTable({"tx2", "gat", "mr", "gpu"}, 2, 1);
  gpu.set_latency(0, 2, 1, {0.1, 0.1, 0.1, 0, 1});
  EXPECT_THROW(write_lut_file(dir + "/mixed.h5", {t, gpu}), InputError);  // one processor per file
  // The codec the isolated reader uses keeps the processor too.
  EXPECT_EQ(decode_lut_tables(encode_lut_tables({t})).at(0).key().processor, "cpu");
}

TEST(LutProcessors, ACsvMayNameOneProcessor) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/p.csv") << "device_type,processor,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,count\n"
                                   "tx2,cpu,gcn,mr,0,4,1,12.5,12,14,0.5,100\n";
  EXPECT_EQ(import_lut_csv(dir + "/p.csv", catalog(), "test").at(0).key().processor, "cpu");
  std::ofstream(dir + "/two.csv") << "device_type,processor,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,count\n"
                                     "tx2,cpu,gcn,mr,0,4,1,12.5,12,14,0.5,100\n"
                                     "tx2,gpu,gcn,mr,0,4,2,12.5,12,14,0.5,100\n";
  try {
    import_lut_csv(dir + "/two.csv", catalog(), "test");
    ADD_FAILURE() << "two processors in one CSV were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":3:"), std::string::npos) << e.what();  // the line of the second processor
  }
}

TEST(LutCodec, KeysRoundTripAndEveryTruncationIsRefused) {
  const std::vector<LutKey> keys = {{"board", "gcn", "mr", "npu"}, {"board", "gat", "cora"}};
  const std::string bytes = encode_lut_keys(keys);
  EXPECT_TRUE(is_encoded_lut_keys(bytes));
  EXPECT_FALSE(is_encoded_lut_keys(encode_lut_tables({})));  // the tables' form is told apart by its magic
  EXPECT_EQ(decode_lut_keys(bytes), keys);
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(decode_lut_keys(bytes.substr(0, n)), std::invalid_argument) << n;
  EXPECT_THROW(decode_lut_keys(bytes + "x"), std::invalid_argument);
  // A count of 2^32 - 1 keys in 8 bytes: refused before anything is reserved.
  EXPECT_THROW(decode_lut_keys(std::string("CLUK\xff\xff\xff\xff", 8)), std::invalid_argument);
}

// A run reads the tables of its own device types only (io/lut_repository.hpp): the shipped folder
// holds ten types; a scenario of rpi4b devices and a gtx1060 server needs two.
TEST(LutRepository, OnlyTheWantedTypesAreReadAndTheRestAreNamed) {
  const std::string folder = std::string(COINFER_SOURCE_DIR) + "/traces/lut";
  const LutSet all = load_luts({folder});
  const LutSet some = load_luts_for_types({folder}, {"rpi4b", "gtx1060"});
  std::set<std::string> read_types, unread_types;
  for (const auto& k : some.keys()) read_types.insert(k.device_type);
  for (const auto& [k, f] : some.unread()) unread_types.insert(k.device_type);
  EXPECT_EQ(read_types, (std::set<std::string>{"gtx1060", "rpi4b"}));
  EXPECT_TRUE(unread_types.count("rpi3b") && unread_types.count("jetson-tx2")) << unread_types.size();
  // Every key of the folder is either read or named unread, each from the file it came from.
  std::map<LutKey, std::string> named = some.unread();
  for (const auto& k : some.keys()) named.emplace(k, some.origin(k));
  ASSERT_EQ(named.size(), all.keys().size());
  for (const auto& k : all.keys()) EXPECT_EQ(named.at(k), all.origin(k)) << k.to_string();
  // The tables read are the same tables (the same bytes once encoded).
  const LutKey pi{"rpi4b", "dgcnn", "modelnet40"};
  EXPECT_EQ(encode_lut_tables({some.table(pi)}), encode_lut_tables({all.table(pi)}));
  // An unread table answers no key, and a missing key's message is the same as with every table read:
  // it names the types that have the model and dataset, read or not.
  const LutKey rpi3{"rpi3b", "dgcnn", "modelnet40"};
  EXPECT_FALSE(some.contains(rpi3));
  auto message = [](const LutSet& set, const LutKey& k) {
    try {
      set.table(k);
    } catch (const LutMissingError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const LutKey typo{"rpi9", "dgcnn", "modelnet40"};
  EXPECT_EQ(message(some, typo), message(all, typo));
  EXPECT_NE(message(some, typo).find("rpi3b"), std::string::npos) << message(some, typo);
}

TEST(LutRepository, AnUnreadFileIsStillCheckedForTwiceGivenKeysAndForBeingALut) {
  const std::string dir = temp_dir();
  const std::string shipped = std::string(COINFER_SOURCE_DIR) + "/traces/lut/rpi3b.h5";
  fs::copy_file(shipped, dir + "/a.h5");
  fs::copy_file(shipped, dir + "/b.h5");
  try {
    load_luts_for_types({dir}, {"gtx1060"});
    FAIL() << "a key in two unread files was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("provided twice"), std::string::npos) << e.what();
  }
  fs::remove(dir + "/b.h5");
  std::ofstream(dir + "/b.h5") << "not HDF5 at all";
  try {
    load_luts_for_types({dir}, {"gtx1060"});
    FAIL() << "a file that is no LUT was accepted because its type was not wanted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b.h5"), std::string::npos) << e.what();
  }
  // The one-child batch answers the files before the bad one and stops there; the bad file read alone
  // gives the error, the same as load_luts gives.
  fs::copy_file(shipped, dir + "/c.h5");
  const std::set<std::string> none;
  const auto batch = read_lut_files_batch({dir + "/a.h5", dir + "/b.h5", dir + "/c.h5"}, &none);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_TRUE(batch[0].tables.empty());
  EXPECT_FALSE(batch[0].unread.empty());
  std::string alone, all;
  try {
    read_lut_file_contents(dir + "/b.h5", &none);
  } catch (const InputError& e) {
    alone = e.what();
  }
  try {
    load_luts({dir});
  } catch (const InputError& e) {
    all = e.what();
  }
  EXPECT_FALSE(alone.empty());
  EXPECT_EQ(all, alone);
}

TEST(LutCodec, EveryTruncationAndAFlippedFlagAreRefused) {
  LutTable t({"board", "gcn", "mr"}, 3, 2);
  t.set_latency(0, 3, 1, {0.1, 0.1, 0.1, 0, 1});
  t.set_latency(1, 2, 2, {0.2, 0.2, 0.3, 0.01, 4});
  t.provenance().kind = "measured";
  t.provenance().attributes = {{"a", "1"}, {"b", "2"}};
  const std::string bytes = encode_lut_tables({t});
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(decode_lut_tables(bytes.substr(0, n)), std::invalid_argument) << n;
  EXPECT_THROW(decode_lut_tables(bytes + "x"), std::invalid_argument);  // trailing data
  std::string flag = bytes;
  // magic, version, count, the key's strings (type, model, dataset, processor ""), n and B, then the
  // first latency presence byte: made neither 0 nor 1.
  flag[4 + 4 + 4 + (4 + 5) + (4 + 3) + (4 + 2) + (4 + 0) + 8] = 2;
  EXPECT_THROW(decode_lut_tables(flag), std::invalid_argument);
  EXPECT_NO_THROW(decode_lut_tables(bytes));
}

TEST(LutValues, ImplausibleValuesAreRefusedNamingTheEntry) {
  auto table = [] {
    LutTable t({"board", "gcn", "mr"}, 3, 1);
    t.set_latency(0, 3, 1, {0.1, 0.1, 0.1, 0, 1});
    return t;
  };
  EXPECT_NO_THROW(table().check_values());
  auto refused = [&](const std::function<void(LutTable&)>& spoil, const std::string& names) {
    LutTable t = table();
    spoil(t);
    try {
      t.check_values();
      ADD_FAILURE() << names << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  };
  const double nan = std::nan(""), inf = HUGE_VAL;
  refused([](LutTable& t) { t.set_latency(0, 1, 1, {0, 0, 0, 0, 1}); }, "latency_mean_s at [0,1) batch 1");  // spins at time 0
  refused([](LutTable& t) { t.set_latency(0, 1, 1, {1e-320, 0, 0, 0, 1}); }, "latency_mean_s");
  refused([&](LutTable& t) { t.set_latency(0, 1, 1, {inf, 0, 0, 0, 1}); }, "latency_mean_s");
  refused([](LutTable& t) { t.set_latency(0, 1, 1, {1e300, 0, 0, 0, 1}); }, "latency_mean_s");
  refused([&](LutTable& t) { t.set_latency(0, 1, 1, {0.1, 0.1, nan, 0, 1}); }, "latency_p95_s");
  refused([](LutTable& t) { t.set_latency(0, 1, 1, {0.1, 0.1, 0.1, -1, 1}); }, "latency_std_s");
  refused([](LutTable& t) { t.set_latency(0, 1, 1, {0.1, 0.1, 0.1, 0, -3}); }, "latency_count");
  refused([&](LutTable& t) { t.bytes_per_split()[2] = nan; }, "bytes_per_split at split 2");
  refused([](LutTable& t) { t.bytes_per_split()[1] = -5; }, "bytes_per_split at split 1");
  refused([](LutTable& t) { t.bytes_per_split()[1] = 1e300; }, "bytes_per_split");
  refused([&](LutTable& t) { t.set_peak_memory(0, 2, inf); }, "peak_memory_bytes at [0,2)");
}

// Latency distributions (schema 2): quantile levels shared by a table, quantiles per entry.
namespace {
LutTable distributed_table() {
  LutTable t({"board", "gcn", "mr"}, 3, 2);
  t.set_latency(0, 3, 1, {0.02, 0.02, 0.035, 0.01, 100});
  t.set_latency(1, 2, 2, {0.2, 0.2, 0.3, 0.01, 4});
  t.set_quantile_levels({0, 0.5, 0.5, 1});
  t.set_quantiles(0, 3, 1, {0.005, 0.005, 0.035, 0.035});  // two points, 1/2 each
  t.provenance().kind = "measured";
  return t;
}
}  // namespace

TEST(LutDistribution, QuantileFunctionIsLinearBetweenLevelsAndJumpsAtRepeatedLevels) {
  const std::vector<double> levels{0, 0.5, 0.5, 1}, two_point{5, 5, 35, 35};
  EXPECT_EQ(quantile_at(levels, two_point.data(), 0.25), 5);
  EXPECT_EQ(quantile_at(levels, two_point.data(), 0.4999), 5);
  EXPECT_EQ(quantile_at(levels, two_point.data(), 0.5), 35);  // at the jump: the upper value
  EXPECT_EQ(quantile_at(levels, two_point.data(), 0.75), 35);
  // Moments in closed form: E[S] = (5 + 35) / 2 = 20, E[S^2] = (25 + 1225) / 2 = 625.
  EXPECT_DOUBLE_EQ(distribution_mean(levels, two_point.data()), 20);
  EXPECT_DOUBLE_EQ(distribution_second_moment(levels, two_point.data()), 625);
  // Uniform on [10, 20]: Q(u) = 10 + 10u; E[S] = 15, E[S^2] = integral (10 + 10u)^2 = 700/3.
  const std::vector<double> lin{0, 1}, uni{10, 20};
  EXPECT_DOUBLE_EQ(quantile_at(lin, uni.data(), 0.3), 13);
  EXPECT_DOUBLE_EQ(distribution_mean(lin, uni.data()), 15);
  EXPECT_NEAR(distribution_second_moment(lin, uni.data()), 700.0 / 3, 1e-12);
  // The standard levels hold the median and p95 exactly, as the profiler's p50/p95 columns.
  const auto& std_levels = standard_quantile_levels();
  EXPECT_EQ(std_levels.size(), 23u);
  EXPECT_EQ(std_levels.front(), 0);
  EXPECT_EQ(std_levels.back(), 1);
  EXPECT_NE(std::find(std_levels.begin(), std_levels.end(), 0.5), std_levels.end());
  EXPECT_NE(std::find(std_levels.begin(), std_levels.end(), 0.95), std_levels.end());
}

TEST(LutDistribution, SampledTimeDrawsFromTheEntryAndScalesBeyondTheLargestBatch) {
  const LutTable t = distributed_table();
  const ExecutionTimeModel& sampled = lut_sampled_time();
  EXPECT_DOUBLE_EQ(sampled.sample_seconds(t, 0, 3, 1, 0.2), 0.005);
  EXPECT_DOUBLE_EQ(sampled.sample_seconds(t, 0, 3, 1, 0.7), 0.035);
  EXPECT_DOUBLE_EQ(sampled.seconds(t, 0, 3, 1), 0.02);  // expected time: the mean column
  // Batch 4 beyond max_batch 2 has no distribution at batch 2 for [0,3) (no entry): an entry without
  // quantiles answers its mean, here [1,2) at batch 2, scaled x 4/2 at batch 4.
  EXPECT_DOUBLE_EQ(sampled.sample_seconds(t, 1, 2, 4, 0.9), 0.4);
  EXPECT_DOUBLE_EQ(sampled.sample_seconds(t, 1, 1, 1, 0.9), 0);  // empty range
  // The mean model ignores distributions.
  EXPECT_DOUBLE_EQ(lut_mean_time().sample_seconds(t, 0, 3, 1, 0.7), 0.02);
}

TEST(LutDistribution, FileAndByteFormRoundTripTheQuantiles) {
  const std::string dir = temp_dir();
  const LutTable t = distributed_table();
  write_lut_file(dir + "/board.h5", {t});
  for (const auto& back : {read_lut_file(dir + "/board.h5"), decode_lut_tables(encode_lut_tables({t}))}) {
    ASSERT_EQ(back.size(), 1u);
    EXPECT_TRUE(back[0].has_distributions());
    EXPECT_EQ(back[0].quantile_levels(), (std::vector<double>{0, 0.5, 0.5, 1}));
    const double* q = back[0].quantiles(0, 3, 1);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(std::vector<double>(q, q + 4), (std::vector<double>{0.005, 0.005, 0.035, 0.035}));
    EXPECT_EQ(back[0].quantiles(1, 2, 2), nullptr);  // an entry without a distribution stays without
  }
  // Every truncation of the byte form with distributions is refused.
  const std::string bytes = encode_lut_tables({t});
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(decode_lut_tables(bytes.substr(0, n)), std::invalid_argument) << n;
  fs::remove_all(dir);
}

TEST(LutDistribution, SchemaOneFilesAreStillReadWithoutDistributions) {
  // A file as coinfer wrote it before distributions (schema_version 1, no quantile datasets).
  const std::string dir = temp_dir();
  {
    h5::File f = h5::File::create(dir + "/old.h5");
    f.write_attr("/", "format", std::string("coinfer-lut"));
    f.write_attr("/", "schema_version", static_cast<std::int64_t>(1));
    f.write_attr("/", "device_type", std::string("board"));
    const std::string g = "/gcn/mr";
    const hsize_t N1 = 2, B = 1;
    std::vector<double> mean{NAN, 0.1, NAN, NAN}, mem{NAN, NAN, NAN, NAN};
    std::vector<std::int64_t> count{-1, 5, -1, -1};
    f.write(g + "/latency_mean_s", mean, {N1, N1, B}, "s");
    f.write(g + "/latency_p50_s", mean, {N1, N1, B}, "s");
    f.write(g + "/latency_p95_s", mean, {N1, N1, B}, "s");
    f.write(g + "/latency_std_s", std::vector<double>{NAN, 0, NAN, NAN}, {N1, N1, B}, "s");
    f.write(g + "/latency_count", count, {N1, N1, B}, "runs");
    f.write(g + "/bytes_per_split", std::vector<double>{100, 10}, {N1}, "bytes per sample");
    f.write(g + "/peak_memory_bytes", mem, {N1, N1}, "bytes");
    f.write_attr(g, "model", std::string("gcn"));
    f.write_attr(g, "dataset", std::string("mr"));
    f.write_attr(g, "num_stages", static_cast<std::int64_t>(1));
    f.write_attr(g, "max_batch", static_cast<std::int64_t>(1));
    f.write_attr(g, "provenance", std::string("measured"));
  }
  const auto tables = read_lut_file(dir + "/old.h5");
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_DOUBLE_EQ(tables[0].mean_seconds(0, 1, 1), 0.1);
  EXPECT_FALSE(tables[0].has_distributions());
  EXPECT_EQ(lut_file_schema_version(dir + "/old.h5"), 1);
  // Written again, it is a schema 2 file with the same numbers.
  write_lut_file(dir + "/new.h5", tables);
  EXPECT_EQ(lut_file_schema_version(dir + "/new.h5"), 2);  // 3 only with estimated entries (lut fill)
  EXPECT_EQ(encode_lut_tables(read_lut_file(dir + "/new.h5")), encode_lut_tables(tables));
  fs::remove_all(dir);
}

TEST(LutDistribution, MalformedLevelsAndQuantilesAreRefused) {
  LutTable t = distributed_table();
  EXPECT_THROW(t.set_quantile_levels({0}), std::invalid_argument);               // one level
  EXPECT_THROW(t.set_quantile_levels({0.1, 1}), std::invalid_argument);          // not from 0
  EXPECT_THROW(t.set_quantile_levels({0, 0.9}), std::invalid_argument);          // not to 1
  EXPECT_THROW(t.set_quantile_levels({0, 0.6, 0.4, 1}), std::invalid_argument);  // decreasing
  EXPECT_THROW(t.set_quantile_levels({0, NAN, 1}), std::invalid_argument);
  EXPECT_THROW(t.set_quantiles(0, 3, 1, {0.1, 0.2}), std::invalid_argument);            // wrong count
  EXPECT_THROW(t.set_quantiles(0, 1, 1, {0.1, 0.1, 0.2, 0.2}), std::invalid_argument);  // no mean for [0,1)
  LutTable dec = distributed_table();
  dec.set_quantiles(0, 3, 1, {0.035, 0.005, 0.005, 0.035});
  try {
    dec.check_values();
    ADD_FAILURE() << "decreasing quantiles accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("latency_quantiles_s at [0,3) batch 1"), std::string::npos) << e.what();
  }
  LutTable inf = distributed_table();
  inf.set_quantiles(0, 3, 1, {0.005, 0.005, 0.035, HUGE_VAL});
  EXPECT_THROW(inf.check_values(), std::invalid_argument);
}

TEST(LutWireBytes, RoundTripAndChecks) {
  const std::string dir = temp_dir();
  LutTable t = distributed_table();
  t.set_wire(0, {100, 100, 300, 300}, 0.001, 0.0005);
  t.set_wire(3, {40, 40, 40, 40}, 0, 0);
  EXPECT_TRUE(t.has_wire_bytes());
  EXPECT_EQ(t.wire_bytes_quantiles(1), nullptr);
  EXPECT_EQ(t.wire_compress_seconds(1), 0);
  write_lut_file(dir + "/w.h5", {t});
  for (const auto& back : {read_lut_file(dir + "/w.h5"), decode_lut_tables(encode_lut_tables({t}))}) {
    ASSERT_EQ(back.size(), 1u);
    const double* q = back[0].wire_bytes_quantiles(0);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(std::vector<double>(q, q + 4), (std::vector<double>{100, 100, 300, 300}));
    EXPECT_DOUBLE_EQ(back[0].wire_compress_seconds(0), 0.001);
    EXPECT_DOUBLE_EQ(back[0].wire_decompress_seconds(0), 0.0005);
    EXPECT_EQ(back[0].wire_bytes_quantiles(2), nullptr);
    EXPECT_NE(back[0].wire_bytes_quantiles(3), nullptr);
  }
  const std::string bytes = encode_lut_tables({t});
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(decode_lut_tables(bytes.substr(0, n)), std::invalid_argument) << n;
  // Spec fallback and draws (core/wire_bytes.hpp).
  ModelSpec spec = catalog().instantiate("gcn", "mr");
  EXPECT_DOUBLE_EQ(request_wire_bytes(&t, 0, spec.bytes_at_split(0), 0.2), 100);
  EXPECT_DOUBLE_EQ(request_wire_bytes(&t, 0, spec.bytes_at_split(0), 0.7), 300);
  EXPECT_DOUBLE_EQ(request_wire_bytes(&t, 1, spec.bytes_at_split(1), 0.7), spec.bytes_at_split(1));
  EXPECT_DOUBLE_EQ(request_wire_bytes(nullptr, 0, spec.bytes_at_split(0), 0.7), spec.bytes_at_split(0));
  // Refused: decreasing or non-finite bytes, negative codec time, no levels.
  LutTable dec = distributed_table();
  dec.set_wire(1, {300, 100, 100, 100}, 0, 0);
  EXPECT_THROW(dec.check_values(), std::invalid_argument);
  LutTable neg = distributed_table();
  neg.set_wire(1, {1, 1, 1, 1}, -1, 0);
  EXPECT_THROW(neg.check_values(), std::invalid_argument);
  LutTable nolevels({"b", "gcn", "mr"}, 3, 1);
  EXPECT_THROW(nolevels.set_wire(0, {1, 2}, 0, 0), std::invalid_argument);
  fs::remove_all(dir);
}
