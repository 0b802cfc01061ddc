// The cloud tier's hand-off rules (core/cloud_handoff.hpp), with values worked out by hand from the
// rule "pp(k,m): device [0,k), edge [k,m), cloud [m,n)" on a 9-stage model (DGCNN, edge_cloud.yaml).
#include <gtest/gtest.h>

#include "core/cloud_handoff.hpp"

using namespace coinfer;

TEST(CloudHandoff, TheCloudSplitIsTheStrategysOnlyForItsOwnDeviceSplit) {
  const Strategy pp12 = parse_strategy("pp(1,2)");
  EXPECT_EQ(cloud_split_of(pp12, 1, 9), 2);
  // The device ran another split (e.g. a placement changed it): no cloud part, the edge runs [k,n).
  EXPECT_EQ(cloud_split_of(pp12, 0, 9), 0);
  EXPECT_EQ(cloud_split_of(parse_strategy("pp(2)"), 2, 9), 0);  // two tiers
  EXPECT_EQ(cloud_split_of(parse_strategy("offload"), 0, 9), 0);
  EXPECT_EQ(cloud_split_of(parse_strategy("pp(3,8)"), 3, 9), 8);  // the last stage at the cloud
  EXPECT_EQ(cloud_split_of(parse_strategy("pp(3,8)"), 3, 8), 0);  // ... of a model that has no stage 8
}

TEST(CloudHandoff, EachServerRunsItsOwnPart) {
  // pp(1,2) on 9 stages: the edge [1,2), the cloud [2,9).
  EXPECT_EQ(server_part(1, 2, false, 9).begin, 1);
  EXPECT_EQ(server_part(1, 2, false, 9).end, 2);
  EXPECT_EQ(server_part(1, 2, true, 9).begin, 2);
  EXPECT_EQ(server_part(1, 2, true, 9).end, 9);
  // No cloud part: [k,n) at the edge.
  EXPECT_EQ(server_part(4, 0, false, 9).begin, 4);
  EXPECT_EQ(server_part(4, 0, false, 9).end, 9);
}

TEST(CloudHandoff, AServerWithoutACloudRunsTheWholeServerPart) {
  EXPECT_EQ(cloud_split_at_server(2, true), 2);
  EXPECT_EQ(cloud_split_at_server(2, false), 0);
  EXPECT_EQ(cloud_split_at_server(0, true), 0);
}

TEST(CloudHandoff, BatchGroupsSeparateEdgeRangesAndJoinAtTheCloud) {
  const ModelKey dgcnn{"dgcnn", "modelnet40"};
  // At the edge only requests whose part is the same range batch together: [1,2) is not [1,9).
  EXPECT_NE(edge_batch_group(dgcnn, 1, 2), edge_batch_group(dgcnn, 1, 0));
  EXPECT_EQ(edge_batch_group(dgcnn, 1, 0), (BatchGroupKey{dgcnn, 1, 0}));
  EXPECT_EQ(edge_batch_group(dgcnn, 1, 2), (BatchGroupKey{dgcnn, 1, 2}));
  // At the cloud [2,9) of pp(1,2) batches with pp(2) requests bound to the cloud: group (model, 2).
  EXPECT_EQ(cloud_batch_group(dgcnn, 2), (BatchGroupKey{dgcnn, 2, 0}));
  EXPECT_EQ(cloud_batch_group(dgcnn, 2), edge_batch_group(dgcnn, 2, 0));
}

TEST(CloudHandoff, OnlyAnEdgePartGoesOnAndNeverToAHelper) {
  EXPECT_TRUE(passes_to_cloud(2, false));
  EXPECT_FALSE(passes_to_cloud(2, true));  // the cloud's result goes to the device
  EXPECT_FALSE(passes_to_cloud(0, false));
  EXPECT_FALSE(may_forward_to_helper(2));
  EXPECT_TRUE(may_forward_to_helper(0));
}
