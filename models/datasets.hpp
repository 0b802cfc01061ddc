#pragma once
// Inputs for the LibTorch models: synthetic samples with the statistics of models/datasets.yaml
// (generators documented in models/README.md; nothing is downloaded), and real dataset files
// (io/dataset_h5.hpp layouts) turned into tensors.
#include <cstdint>

#include "core/model_spec.hpp"
#include "io/dataset_h5.hpp"
#include "models/gnn_model.hpp"

namespace coinfer::models {

struct LabelledSample {
  GraphSample sample;
  std::int64_t label = 0;  // graph tasks: the sample's class; node tasks: unused (see node_labels)
  torch::Tensor node_labels;
};

// Sample `index` of a synthetic dataset, deterministic in (seed, index):
//   point_cloud: `nodes` points on one of 40 procedural shape classes (8 surfaces x 5 aspect variants),
//   noise sigma 0.01, centred and scaled into the unit ball; x [1, nodes, features].
//   graph: exactly `edges` directed edges; the MR-like dataset (nodes <= 64) links each word to the two
//   before and after it, other graphs grow by preferential attachment (power-law degrees), every link
//   stored in both directions; x [nodes, features] standard normal.
LabelledSample generate_sample(const DatasetSpec& d, std::uint64_t seed, std::int64_t index);

// Real files: cloud `i` of a PointNet file (its first `points` points; all if 0) and a graph file.
// Throws std::invalid_argument naming the field when the file does not fit the model's dataset.
GraphSample sample_from_file(const PointCloudFile& f, std::int64_t cloud, std::int64_t points = 0);
GraphSample sample_from_file(const GraphFile& f);

}  // namespace coinfer::models
