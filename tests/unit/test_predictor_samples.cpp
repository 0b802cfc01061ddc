// Predictor sample sets (io/predictor_samples.hpp): exact round trip, byte-identical rewrites, and a
// clear InputError naming the file and dataset for each kind of inconsistency a file can hold.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/input_error.hpp"
#include "io/h5_file.hpp"
#include "io/predictor_samples.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {

PredictorSampleSet two_samples() {
  PredictorSampleSet set;
  set.provenance = "test";
  for (int i = 0; i < 2; ++i) {
    PredictorSample s;
    s.system = 7;
    s.system_key = "gtx1060 x1; rpi4b:gcn/mr@10Mbps";
    s.device_types = "rpi4b";
    s.models = "gcn/mr";
    s.scheme = i ? "d0=local helpers=[]" : "d0=offload helpers=[]";
    s.source = "scenarios/s.yaml";
    s.throughput_rps = 10 + i, s.mean_latency_ms = 50, s.p95_latency_ms = 60;
    s.analytic_throughput_rps = 11, s.analytic_mean_latency_ms = 45;
    s.measured = i == 1;
    s.node_type = {3, 0, 1, 2, 4};
    s.node_latency_ms = {0, 1.5 * i, 2, 3, 0};
    s.node_settings = {2, 4, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    s.edges = {{1, 2}, {2, 3}, {3, 0}, {4, 4}};
    set.samples.push_back(s);
  }
  return set;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(PredictorSamples, RoundTripIsExactAndRewritesAreByteIdentical) {
  const std::string dir = test::temp_dir("samples");
  const PredictorSampleSet set = two_samples();
  write_predictor_samples(dir + "/a.h5", set);
  const PredictorSampleSet back = read_predictor_samples(dir + "/a.h5");
  ASSERT_EQ(back.samples.size(), 2u);
  EXPECT_EQ(back.provenance, "test");
  for (size_t i = 0; i < 2; ++i) {
    const auto &a = set.samples[i], &b = back.samples[i];
    EXPECT_EQ(a.system, b.system);
    EXPECT_EQ(a.scheme, b.scheme);
    EXPECT_EQ(a.system_key, b.system_key);
    EXPECT_EQ(a.measured, b.measured);
    EXPECT_EQ(a.throughput_rps, b.throughput_rps);
    EXPECT_EQ(a.analytic_throughput_rps, b.analytic_throughput_rps);
    EXPECT_EQ(a.node_type, b.node_type);
    EXPECT_EQ(a.node_latency_ms, b.node_latency_ms);
    EXPECT_EQ(a.node_settings, b.node_settings);
    EXPECT_EQ(a.edges, b.edges);
  }
  write_predictor_samples(dir + "/b.h5", back);
  EXPECT_EQ(bytes_of(dir + "/a.h5"), bytes_of(dir + "/b.h5"));
  std::filesystem::remove_all(dir);
}

// A saturated system: one result delivered in the window (of a request created before it) and no request
// created in the window completed: throughput 0.125 req/s, latencies NaN. `coinfer predictor samples` wrote
// such a sample in a 2,000-sample set (ACE-GNN Fig. 18's) and the reader refused the whole file.
TEST(PredictorSamples, ASaturatedSampleWithDeliveriesAndNoLatencyIsRead) {
  const std::string dir = test::temp_dir("samples");
  PredictorSampleSet set = two_samples();
  set.samples[1].throughput_rps = 0.125;
  set.samples[1].mean_latency_ms = NAN;
  set.samples[1].p95_latency_ms = NAN;
  write_predictor_samples(dir + "/saturated.h5", set);
  const PredictorSampleSet back = read_predictor_samples(dir + "/saturated.h5");
  ASSERT_EQ(back.samples.size(), 2u);
  EXPECT_EQ(back.samples[1].throughput_rps, 0.125);
  EXPECT_TRUE(std::isnan(back.samples[1].mean_latency_ms));
  EXPECT_TRUE(std::isnan(back.samples[1].p95_latency_ms));
  std::filesystem::remove_all(dir);
}

TEST(PredictorSamples, EveryInconsistencyIsAnInputErrorNamingFileAndDataset) {
  const std::string dir = test::temp_dir("samples");
  struct Case {
    std::string name, expect;
    std::function<void(PredictorSampleSet&)> edit;
  };
  const std::vector<Case> cases = {
      {"edge_out_of_range", "/edges",
       [](PredictorSampleSet& s) {
         s.samples[1].edges.push_back({0, 5});
       }},
      {"bad_type", "/nodes/type", [](PredictorSampleSet& s) { s.samples[0].node_type[2] = 9; }},
      {"negative_label", "/samples", [](PredictorSampleSet& s) { s.samples[0].throughput_rps = -1; }},
      {"nan_latency", "/nodes/latency_ms", [](PredictorSampleSet& s) { s.samples[1].node_latency_ms[1] = NAN; }},
      {"negative_mean_latency", "/samples", [](PredictorSampleSet& s) { s.samples[1].mean_latency_ms = -1; }},
      {"infinite_p95", "/samples", [](PredictorSampleSet& s) { s.samples[0].p95_latency_ms = INFINITY; }},
      {"huge_setting", "/nodes/settings", [](PredictorSampleSet& s) { s.samples[0].node_settings[0] = 1e9; }},
  };
  for (const auto& c : cases) {
    PredictorSampleSet set = two_samples();
    c.edit(set);
    const std::string path = dir + "/" + c.name + ".h5";
    write_predictor_samples(path, set);  // the writer stores what it is given; the reader judges
    try {
      read_predictor_samples(path);
      ADD_FAILURE() << c.name << " was accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(c.expect), std::string::npos) << c.name << ": " << what;
    }
  }
  // Structural damage: offsets that do not add up, a missing column, another file format.
  {
    h5::File f = h5::File::create(dir + "/not_samples.h5");
    f.write_attr("/", "format", std::string("coinfer-lut"));
  }
  EXPECT_THROW(read_predictor_samples(dir + "/not_samples.h5"), InputError);
  {
    const PredictorSampleSet set = two_samples();
    write_predictor_samples(dir + "/ok.h5", set);
    h5::File f = h5::File::create(dir + "/short_offsets.h5");
    f.write_attr("/", "format", std::string("coinfer-predictor-samples"));
    f.write_attr("/", "schema_version", std::int64_t{1});
    f.make_group("/samples");
    f.write("/samples/system", std::vector<std::int64_t>{1, 1}, {2});
  }
  EXPECT_THROW(read_predictor_samples(dir + "/short_offsets.h5"), InputError);
  EXPECT_THROW(read_predictor_samples(dir + "/missing.h5"), InputError);
  EXPECT_THROW(write_predictor_samples(dir + "/empty.h5", PredictorSampleSet{}), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir + "/empty.h5"));  // nothing written
  std::filesystem::remove_all(dir);
}
