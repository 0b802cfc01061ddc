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
// `b` samples of `model` on `dataset` (drawn with `seed`): each one's state after the stages before
// `split`, and the output the whole model gives it alone (the reference).
struct Inputs {
  ModelSpec spec;
  std::vector<std::string> states;
  std::vector<const std::string*> ptrs;  // into states, as the runner takes them
  std::vector<torch::Tensor> alone;
};
Inputs inputs_at(const std::string& model, const std::string& dataset, std::uint64_t seed, int split, int b) {
  Inputs in{ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models").instantiate(model, dataset), {}, {}, {}};
  const models::GnnModel m(in.spec, 1);  // the runner's models have the same deterministic weights (seed 1)
  for (int i = 0; i < b; ++i) {
    const models::GraphSample g = models::generate_sample(in.spec.dataset, seed, i).sample;
    models::SplitState st = m.start(g);
    m.run(st, split);
    in.states.push_back(models::serialize(st));
    in.alone.push_back(m.forward(g));
  }
  for (const auto& s : in.states) in.ptrs.push_back(&s);
  return in;
}

void expect_stacked_equals_alone(const std::string& model, const std::string& dataset, int split, int b) {
  torch::NoGradGuard no_grad;
  const Inputs in = inputs_at(model, dataset, 7, split, b);
  const ModelSpec& spec = in.spec;
  const std::vector<torch::Tensor>& alone = in.alone;
  hw::BatchRunner runner;
  const std::vector<std::string> out = runner.run(spec, in.ptrs);
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
  const Inputs in = inputs_at(model, dataset, 11, k, b);
  const ModelSpec& spec = in.spec;
  const std::vector<torch::Tensor>& alone = in.alone;
  hw::BatchRunner edge, cloud;
  const std::vector<std::string> at_m = edge.run(spec, in.ptrs, m);
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
