// Real dataset file loaders on small files the test makes (nothing is downloaded).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/input_error.hpp"
#include "io/dataset_h5.hpp"
#include "io/h5_file.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;

namespace {
std::string temp_dir() { return coinfer::test::temp_dir("ds"); }
InputError error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return InputError("none");
}
}  // namespace

TEST(DatasetFiles, PointNetLayoutRoundTrips) {
  const std::string dir = temp_dir();
  PointCloudFile p;
  p.clouds = 2;
  p.points = 4;
  for (int i = 0; i < 2 * 4 * 3; ++i) p.data.push_back(0.5f * i);
  p.labels = {7, 39};
  write_pointnet_h5(dir + "/m.h5", p);
  PointCloudFile back = load_pointnet_h5(dir + "/m.h5");
  EXPECT_EQ(back.clouds, 2);
  EXPECT_EQ(back.points, 4);
  EXPECT_EQ(back.data, p.data);
  EXPECT_EQ(back.labels, p.labels);
  std::filesystem::remove_all(dir);
}

TEST(DatasetFiles, GraphLayoutRoundTripsAndChecksIndices) {
  const std::string dir = temp_dir();
  GraphFile g;
  g.nodes = 3;
  g.features = 2;
  g.edges = 2;
  g.x = {1, 2, 3, 4, 5, 6};
  g.edge_index = {0, 1, 1, 2};
  g.y = {0, 1, 0};
  write_graph_h5(dir + "/g.h5", g);
  GraphFile back = load_graph_h5(dir + "/g.h5");
  EXPECT_EQ(back.x, g.x);
  EXPECT_EQ(back.edge_index, g.edge_index);
  EXPECT_EQ(back.y, g.y);
  g.edge_index = {0, 1, 1, 9};
  write_graph_h5(dir + "/bad.h5", g);
  InputError e = error_of([&] { load_graph_h5(dir + "/bad.h5"); });
  EXPECT_EQ(e.key(), "edge_index");
  EXPECT_NE(std::string(e.what()).find("node 9"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(DatasetFiles, WrongLayoutOrDtypeNamesTheField) {
  const std::string dir = temp_dir();
  {
    h5::File f = h5::File::create(dir + "/f64.h5");
    f.write("/data", std::vector<double>(2 * 4 * 3, 0.0), {2, 4, 3});  // float64, not float32
    f.write("/label", std::vector<std::int64_t>{1, 2}, {2});
  }
  InputError e = error_of([&] { load_pointnet_h5(dir + "/f64.h5"); });
  EXPECT_EQ(e.key(), "data");
  EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("f64.h5"), std::string::npos);
  {
    h5::File f = h5::File::create(dir + "/shape.h5");
    f.write_float("/data", std::vector<float>(2 * 4 * 2, 0.f), {2, 4, 2});
    f.write("/label", std::vector<std::int64_t>{1, 2}, {2});
  }
  EXPECT_EQ(error_of([&] { load_pointnet_h5(dir + "/shape.h5"); }).key(), "data");
  {
    h5::File f = h5::File::create(dir + "/nolabel.h5");
    f.write_float("/data", std::vector<float>(2 * 4 * 3, 0.f), {2, 4, 3});
  }
  EXPECT_EQ(error_of([&] { load_pointnet_h5(dir + "/nolabel.h5"); }).key(), "/label");
  {
    h5::File f = h5::File::create(dir + "/g.h5");
    f.write_float("/x", std::vector<float>(6, 0.f), {3, 2});
    f.write("/edge_index", std::vector<std::int64_t>{0, 1, 2}, {3});  // rank 1
  }
  EXPECT_EQ(error_of([&] { load_graph_h5(dir + "/g.h5"); }).key(), "edge_index");
  std::filesystem::remove_all(dir);
}
