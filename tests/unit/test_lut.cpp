#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/input_error.hpp"
#include "core/lut_synth.hpp"
#include "io/device_profile_loader.hpp"
#include "io/lut_codec.hpp"
#include "io/lut_csv.hpp"
#include "io/lut_h5.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"

using namespace coinfer;
namespace fs = std::filesystem;

namespace {
const ModelCatalog& catalog() {
  static ModelCatalog c = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
  return c;
}
std::string temp_dir() {
  char tmpl[] = "/tmp/coinfer-unit-XXXXXX";
  return mkdtemp(tmpl);
}
}  // namespace

TEST(LutSynth, StageTimeFollowsRooflineFormula) {
  StageSpec s;
  s.flops = 2e9;          // 2 GFLOP
  s.traffic_bytes = 1e8;  // 100 MB
  DeviceProfile p;
  p.peak_gflops = 100;      // compute bound: 2e9 / (0.5 * 1e11) = 0.04 s
  p.mem_gbps = 10;          // memory: 1e8 / (0.5 * 1e10) = 0.02 s
  p.stage_overhead_ms = 1;  // + 0.001 s
  p.batch_half = 1;         // batch 3: scale (3+1)/(1+1) = 2
  EXPECT_NEAR(synth_stage_seconds(s, p, 0.5, 1), 0.001 + 0.04, 1e-12);
  EXPECT_NEAR(synth_stage_seconds(s, p, 0.5, 3), 0.001 + 0.08, 1e-12);
  p.mem_gbps = 1;  // now memory bound: 1e8 / (0.5 * 1e9) = 0.2 s
  EXPECT_NEAR(synth_stage_seconds(s, p, 0.5, 1), 0.201, 1e-12);
}

TEST(LutSynth, CalibratedProfilesHitThePublishedDeviceOnlyLatency) {
  auto profiles = load_device_profiles(std::string(COINFER_SOURCE_DIR) + "/traces/devices.yaml");
  ModelSpec m = catalog().instantiate("dgcnn", "modelnet40");
  for (auto [type, ms] : {std::pair<std::string, double>{"jetson-tx2", 52.1}, {"rpi4b", 241.5}}) {
    const DeviceProfile& p = profiles.at(type);
    double eta = calibrate_efficiency(m, p, ms);
    LutTable t = synthesise_lut(m, p, eta, "test", SynthOptions{});
    EXPECT_NEAR(t.mean_seconds(0, 9, 1) * 1e3, ms, 1e-9) << type;
    EXPECT_EQ(t.provenance().kind, "synthesised");
    EXPECT_NE(t.provenance().attributes.at("note").find("not measurements"), std::string::npos);
    // Ranges add up: [0,4) + [4,9) = [0,9).
    EXPECT_NEAR(t.mean_seconds(0, 4, 2) + t.mean_seconds(4, 9, 2), t.mean_seconds(0, 9, 2), 1e-12);
  }
}

TEST(LutSynth, ShippedLutsSaySynthesisedAndCoverBatch1To8) {
  LutSet set = load_luts({std::string(COINFER_SOURCE_DIR) + "/traces/lut"});
  for (const char* type : {"jetson-tx2", "jetson-nano", "rpi4b", "rpi3b", "gtx1060", "i7-7700"})
    for (const auto& model : catalog().model_names())
      for (const auto& ds : catalog().datasets_for(model)) {
        const LutTable& t = set.table({type, model, ds});
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
  flag[4 + 4 + 4 + (4 + 5) + (4 + 3) + (4 + 2) + 8] = 2;  // the first latency presence byte: neither 0 nor 1
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
  refused([](LutTable& t) { t.set_latency(0, 1, 1, {0, 0, 0, 0, 1}); }, "latency_mean_s at [0,1) batch 1");      // spins at time 0
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
