#pragma once
// Loaders for real dataset files (models/README.md documents the layouts):
//   point clouds in the PointNet HDF5 layout: `data` (clouds, points, 3) float32, `label` (clouds) or
//   (clouds, 1) integer;
//   graphs: `x` (nodes, features) float32, `edge_index` (2, edges) integer, optional `y` (nodes) integer.
// Wrong layouts or dtypes are InputErrors naming the file and the field. Plain arrays, row-major.
#include <cstdint>
#include <string>
#include <vector>

namespace coinfer {

struct PointCloudFile {
  std::int64_t clouds = 0, points = 0;
  std::vector<float> data;           // clouds x points x 3
  std::vector<std::int64_t> labels;  // clouds
};

struct GraphFile {
  std::int64_t nodes = 0, features = 0, edges = 0;
  std::vector<float> x;                  // nodes x features
  std::vector<std::int64_t> edge_index;  // 2 x edges (sources, then targets)
  std::vector<std::int64_t> y;           // nodes, or empty
};

PointCloudFile load_pointnet_h5(const std::string& path);
GraphFile load_graph_h5(const std::string& path);
// Writers (used by tests and by `coinfer dataset` style tooling); atomic.
void write_pointnet_h5(const std::string& path, const PointCloudFile& f);
void write_graph_h5(const std::string& path, const GraphFile& f);

}  // namespace coinfer
