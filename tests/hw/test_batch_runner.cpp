// A stacked batch (hw/batch_runner.hpp) gives each input the output it gets alone: graphs in one
// disjoint union pool each on their own, point clouds stack along dimension 0. The reference is the
// model run on each input by itself (GnnModel::forward), not the runner's own code.
#include <gtest/gtest.h>

#include <algorithm>
#include <torch/torch.h>

#include "hw/batch_runner.hpp"
#include "io/model_spec_loader.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"

using namespace coinfer;

namespace {
void expect_stacked_equals_alone(const std::string& model, const std::string& dataset, int split, int b) {
  torch::NoGradGuard no_grad;
  const ModelSpec spec = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models").instantiate(model, dataset);
  const models::GnnModel m(spec, 1);  // the runner's models have the same deterministic weights (seed 1)
  std::vector<std::string> states;
  std::vector<torch::Tensor> alone;
  for (int i = 0; i < b; ++i) {
    const models::GraphSample g = models::generate_sample(spec.dataset, 7, i).sample;
    models::SplitState st = m.start(g);
    m.run(st, split);
    states.push_back(models::serialize(st));
    alone.push_back(m.forward(g));
  }
  std::vector<const std::string*> ptrs;
  for (const auto& s : states) ptrs.push_back(&s);
  hw::BatchRunner runner;
  const std::vector<std::string> out = runner.run(spec, ptrs);
  ASSERT_EQ(out.size(), static_cast<size_t>(b));
  for (int i = 0; i < b; ++i) {
    const models::SplitState o = models::deserialize(out[static_cast<size_t>(i)]);
    const torch::Tensor got = o.tensors.at(spec.num_stages() - 1);
    ASSERT_EQ(got.sizes(), alone[static_cast<size_t>(i)].sizes()) << model << " input " << i;
    EXPECT_TRUE(torch::allclose(got, alone[static_cast<size_t>(i)], 1e-4, 1e-5)) << model << " input " << i;
  }
}
}  // namespace

TEST(BatchRunner, StackedGraphsPoolEachGraphOnItsOwn) {
  expect_stacked_equals_alone("gcn", "mr", 0, 3);  // the whole model on the server
  expect_stacked_equals_alone("gcn", "mr", 1, 4);  // after the first layer
  expect_stacked_equals_alone("sage", "mr", 0, 2);
  expect_stacked_equals_alone("gat", "mr", 0, 3);
}

TEST(BatchRunner, StackedPointCloudsMatchTheirOwnRuns) { expect_stacked_equals_alone("dgcnn", "modelnet40", 3, 2); }

// A cloud tier (core/cloud_handoff.hpp): the edge runs a stacked batch of [k,m) and returns each
// request's own state at m; the cloud then runs [m,n) on them (stacked again, with others' states).
// Each input must end with the output it gets from the whole model alone (GnnModel::forward), and each
// state at m must say so (next_stage m) and hold only that request's rows.
namespace {
void expect_edge_then_cloud_equals_alone(const std::string& model, const std::string& dataset, int k, int m, int b) {
  torch::NoGradGuard no_grad;
  const ModelSpec spec = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models").instantiate(model, dataset);
  const models::GnnModel ref(spec, 1);
  std::vector<std::string> states;
  std::vector<torch::Tensor> alone;
  for (int i = 0; i < b; ++i) {
    const models::GraphSample g = models::generate_sample(spec.dataset, 11, i).sample;
    models::SplitState st = ref.start(g);
    ref.run(st, k);
    states.push_back(models::serialize(st));
    alone.push_back(ref.forward(g));
  }
  std::vector<const std::string*> ptrs;
  for (const auto& s : states) ptrs.push_back(&s);
  hw::BatchRunner edge, cloud;
  const std::vector<std::string> at_m = edge.run(spec, ptrs, m);
  ASSERT_EQ(at_m.size(), static_cast<size_t>(b));
  std::vector<const std::string*> mid;
  for (const auto& s : at_m) {
    EXPECT_EQ(models::deserialize(s).next_stage, m) << model;
    mid.push_back(&s);
  }
  // The cloud's batch in reverse order: a request's state must not depend on its place in the edge batch.
  std::reverse(mid.begin(), mid.end());
  const std::vector<std::string> out = cloud.run(spec, mid);
  for (int i = 0; i < b; ++i) {
    const torch::Tensor got = models::deserialize(out[static_cast<size_t>(b - 1 - i)]).tensors.at(spec.num_stages() - 1);
    ASSERT_EQ(got.sizes(), alone[static_cast<size_t>(i)].sizes()) << model << " input " << i;
    EXPECT_TRUE(torch::allclose(got, alone[static_cast<size_t>(i)], 1e-4, 1e-5)) << model << " input " << i;
  }
}
}  // namespace

TEST(BatchRunner, AnEdgePartEndsAtTheCloudSplitAndTheCloudFinishesIt) {
  expect_edge_then_cloud_equals_alone("dgcnn", "modelnet40", 1, 2, 3);  // edge_cloud.yaml's pp(1,2)
  expect_edge_then_cloud_equals_alone("dgcnn", "modelnet40", 0, 5, 2);
  expect_edge_then_cloud_equals_alone("gcn", "mr", 0, 1, 3);  // graphs: a row per node at m
  expect_edge_then_cloud_equals_alone("gat", "mr", 1, 2, 2);
  expect_edge_then_cloud_equals_alone("gcn", "mr", 1, 1 + 1, 1);  // one request alone
}
