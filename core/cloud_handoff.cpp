#include "core/cloud_handoff.hpp"

namespace coinfer {

int cloud_split_of(const Strategy& strategy, int device_split, int num_stages) {
  if (!strategy.has_cloud_part() || strategy.split != device_split) return 0;
  if (strategy.cloud_split <= device_split || strategy.cloud_split >= num_stages) return 0;
  return strategy.cloud_split;
}

ServerPart server_part(int device_split, int cloud_split, bool at_cloud, int num_stages) {
  if (cloud_split <= 0) return {device_split, num_stages};
  return at_cloud ? ServerPart{cloud_split, num_stages} : ServerPart{device_split, cloud_split};
}

BatchGroupKey edge_batch_group(const ModelKey& model, int device_split, int cloud_split) {
  return {model, device_split, cloud_split > 0 ? cloud_split : 0};
}

BatchGroupKey cloud_batch_group(const ModelKey& model, int cloud_split) { return {model, cloud_split, 0}; }

}  // namespace coinfer
