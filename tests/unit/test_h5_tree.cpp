// The fuzzer's in-memory HDF5 tree (tests/fuzz/h5_tree.hpp): a real file written in its byte form reads
// back through our readers exactly as the file does (so the seeds are what they claim), and the byte
// form means what the header says (so the fuzzer's inputs are).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/input_error.hpp"
#include "io/lut_codec.hpp"
#include "io/lut_h5.hpp"
#include "io/predictor_samples.hpp"
#include "tests/fuzz/h5_tree.hpp"
#include "tests/fuzz/seed_lut.hpp"

using namespace coinfer;
namespace fs = std::filesystem;

namespace {
fuzz::H5Tree tree_of(const std::string& file) {
  const std::string bytes = fuzz::H5Tree::encode(h5::File::open_read(file));
  return fuzz::H5Tree::decode(file, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}
fuzz::H5Tree tree_of_bytes(const std::string& bytes) {
  return fuzz::H5Tree::decode("t.h5", reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}
std::string str(const std::string& s) { return std::string{static_cast<char>(s.size()), 0} + s; }
std::string u32(std::uint32_t v) {
  return std::string{static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff), static_cast<char>((v >> 16) & 0xff),
                     static_cast<char>(v >> 24)};
}
std::string f64(double x) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &x, 8);
  return s;
}
}  // namespace

TEST(H5Tree, EveryShippedLutReadsTheSameFromItsTreeAsFromItsFile) {
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(std::string(COINFER_SOURCE_DIR) + "/traces")) {
    if (e.path().extension() != ".h5") continue;
    const std::string file = e.path().string();
    EXPECT_EQ(encode_lut_tables(read_lut_tables(tree_of(file))), encode_lut_tables(read_lut_file_in_process(file))) << file;
    ++files;
  }
  EXPECT_GE(files, 20);  // traces/lut, lut_measured, lut_processors
}

TEST(H5Tree, ALutWithEveryOptionalDatasetReadsTheSameFromItsTree) {
  // The h5_tree fuzz target's tiny LUT seed (tests/fuzz/seed_lut.hpp): distributions, wire bytes, an
  // estimate, sparsity and memory by batch.
  const LutTable t = fuzz::lut_with_every_dataset();
  const std::string file = (fs::temp_directory_path() / ("coinfer-h5tree-lut-" + std::to_string(::getpid()) + ".h5")).string();
  write_lut_file(file, {t});
  const std::vector<LutTable> back = read_lut_tables(tree_of(file));
  fs::remove(file);
  EXPECT_EQ(encode_lut_tables(back), encode_lut_tables({t}));
  ASSERT_EQ(back.size(), 1u);
  ASSERT_NE(back[0].estimate(1, 2, 2), nullptr);
  EXPECT_EQ(back[0].estimate(1, 2, 2)->method, "sum of stages: gcn=lr");
}

TEST(H5Tree, APredictorSampleSetReadsTheSameFromItsTree) {
  const std::string file = (fs::temp_directory_path() / ("coinfer-h5tree-" + std::to_string(::getpid()) + ".h5")).string();
  PredictorSampleSet s;
  s.provenance = "test";
  for (int i = 0; i < 3; ++i) {
    PredictorSample x;
    x.system = i;
    x.scheme = "d0=pp(" + std::to_string(i) + ")";
    x.throughput_rps = 2 + i;
    x.mean_latency_ms = 7;
    x.p95_latency_ms = 11 + i;
    x.node_type = {3, 0, 4};
    x.node_latency_ms = {1.5, 2.5 + i, 0};
    x.node_settings = {2, 4, 10, 0, 0, 0, 0, 0, 0};
    x.edges = {{1, 0}, {0, 2}};
    s.samples.push_back(x);
  }
  write_predictor_samples(file, s);
  const PredictorSampleSet a = read_predictor_samples(file), b = read_predictor_samples_from(tree_of(file));
  fs::remove(file);
  EXPECT_EQ(b.provenance, "test");
  ASSERT_EQ(b.samples.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(b.samples[i].scheme, a.samples[i].scheme);
    EXPECT_EQ(b.samples[i].p95_latency_ms, a.samples[i].p95_latency_ms);
    EXPECT_EQ(b.samples[i].node_latency_ms, a.samples[i].node_latency_ms);
    EXPECT_EQ(b.samples[i].node_settings, a.samples[i].node_settings);
    EXPECT_EQ(b.samples[i].edges, a.samples[i].edges);
  }
}

TEST(H5Tree, TheByteFormMeansWhatItsHeaderSays) {
  // A real dataset /g/x: class 2 (real), rank 2, dims 2 x 3, two values given: 1.5 and -2.7, repeated
  // over the six elements; an integer read rounds toward zero (1, -2).
  std::string b = std::string(1, '\x01') + str("/g/x") + '\x02' + '\x02' + u32(2) + u32(3) + u32(2) + f64(1.5) + f64(-2.7);
  // A text attribute on it, and one on the root: class 0.
  b += std::string(1, '\x00') + str("/g/x") + str("unit") + '\x00' + str("ms");
  b += std::string(1, '\x03') + str("/") + str("format") + '\x00' + str("coinfer-lut");  // op 3 = 0 mod 3: an attribute too
  // A dataset under the dataset /g/x: dropped. A group /a: made.
  b += std::string(1, '\x01') + str("/g/x/y") + '\x01' + '\x00' + u32(0);
  b += std::string(1, '\x02') + str("/a");
  // A record cut short: dropped.
  b += std::string(1, '\x01') + str("/z") + '\x02' + '\x01' + u32(4);
  const fuzz::H5Tree t = tree_of_bytes(b);
  std::vector<hsize_t> dims;
  EXPECT_EQ(t.read_double("/g/x", &dims), (std::vector<double>{1.5, -2.7, 1.5, -2.7, 1.5, -2.7}));
  EXPECT_EQ(dims, (std::vector<hsize_t>{2, 3}));
  EXPECT_EQ(t.read_int64("/g/x"), (std::vector<std::int64_t>{1, -2, 1, -2, 1, -2}));
  EXPECT_EQ(t.info("/g/x").type_class, H5T_FLOAT);
  EXPECT_EQ(t.read_attr_string("/g/x", "unit"), "ms");
  EXPECT_EQ(t.read_attr_string("/", "format"), "coinfer-lut");
  EXPECT_EQ(t.children("/"), (std::vector<std::string>{"a", "g"}));  // sorted by name, as File gives them
  EXPECT_EQ(t.children("/g"), (std::vector<std::string>{"x"}));
  EXPECT_FALSE(t.exists("/g/x/y"));
  EXPECT_FALSE(t.exists("/z"));
  EXPECT_TRUE(t.exists("/a"));
  // File's errors: an attribute of another class, a group read as a dataset, a missing dataset.
  EXPECT_THROW(t.read_attr_int("/g/x", "unit"), InputError);
  EXPECT_THROW(t.read_double("/g"), InputError);
  EXPECT_THROW(t.read_strings("/g/x"), InputError);
  EXPECT_THROW(t.info("/missing"), InputError);
  EXPECT_THROW(t.children("/g/x"), InputError);
  // More than 2^20 elements is refused when read, not held.
  const fuzz::H5Tree big = tree_of_bytes(std::string(1, '\x01') + str("/big") + '\x01' + '\x02' + u32(1 << 11) + u32(1 << 10) + u32(0));
  EXPECT_THROW(big.read_int64("/big"), InputError);
  EXPECT_EQ(big.info("/big").dims, (std::vector<hsize_t>{2048, 1024}));
}
