#pragma once
// The state of one inference between two stages: what a device hands to a server at a split.
// Holds every live tensor (the raw input or a stage output still needed downstream) and the static
// graph while a stage still needs it. serialize()/deserialize() give the bytes that cross the split.
// Torch lives only in models/ (and hw/ later): include this header from models code only.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <vector>
#include <string>

namespace coinfer::models {

struct SplitState {
  int next_stage = 0;                    // stages [0, next_stage) are done
  std::map<int, torch::Tensor> tensors;  // producer stage index (-1: raw input) -> its output
  torch::Tensor edge_index;              // [2, E] int64 static graph; undefined once no stage needs it
  // Node-capacity variants: the input's real node count (its rows are the first ones; the rest up to
  // the capacity is padding). 0: not padded.
  std::int64_t real_nodes = 0;
  // A disjoint union of graphs (a batch stacked into one forward pass, hw/batch_runner.hpp): the node
  // count of each graph, in row order; graph-level pooling pools each graph on its own. Empty: one
  // graph. Held in memory only (not serialised: a union is made and split on one machine).
  std::vector<std::int64_t> graph_nodes;
};

// Compact little-endian framing: magic "CIST", version 2, next_stage, real_nodes (int64), tensor count,
// then per tensor its producer id, dtype (1 float32 | 2 int64 | 3 quint8 per-tensor quantised), rank,
// dims, for quint8 its scale (float32) and zero point (int32), and the raw contiguous data (quint8: the
// integer representation). Version 1 (no real_nodes, no quint8) is still read. Throws std::invalid_argument
// on malformed input (bad magic or version, truncated data, absurd sizes).
std::string serialize(const SplitState& s);
SplitState deserialize(const std::string& bytes);

}  // namespace coinfer::models
