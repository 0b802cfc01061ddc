#include "core/model_spec.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace coinfer {

void ModelSpec::check_split(int k) const {
  if (k < 0 || k > num_stages())
    throw std::out_of_range("split " + std::to_string(k) + " is outside 0.." + std::to_string(num_stages()) + " for model " + name);
}

double ModelSpec::bytes_at_split(int k) const {
  check_split(k);
  const int n = num_stages();
  if (n == 0) return input_bytes;
  if (k == n) return stages.back().out_bytes;
  double bytes = 0;
  bool graph_needed = false;
  for (int s = k; s < n; ++s) graph_needed = graph_needed || stages[s].needs_graph;
  // Every tensor produced before k (or the raw input) and read by a stage at or after k crosses.
  for (int producer = -1; producer < k; ++producer) {
    bool live = false;
    for (int s = k; s < n && !live; ++s) live = std::find(stages[s].inputs.begin(), stages[s].inputs.end(), producer) != stages[s].inputs.end();
    if (live) bytes += producer < 0 ? input_bytes : stages[producer].out_bytes;
  }
  if (graph_needed) bytes += graph_bytes;
  return bytes;
}

double ModelSpec::flops_in_range(int begin, int end) const {
  check_split(begin);
  check_split(end);
  double f = 0;
  for (int s = begin; s < end; ++s) f += stages[s].flops;
  return f;
}

double ModelSpec::peak_memory_bytes(int begin, int end) const {
  check_split(begin);
  check_split(end);
  double weights = 0, working = 0;
  for (int s = begin; s < end; ++s) {
    weights += stages[s].weight_bytes;
    double in = 0;
    for (int p : stages[s].inputs) in += p < 0 ? input_bytes : stages[p].out_bytes;
    if (stages[s].needs_graph) in += graph_bytes;
    working = std::max(working, in + stages[s].memory_bytes);
  }
  return weights + working;
}

int ModelSpec::pp_comm() const {
  int best = -1;
  double best_bytes = std::numeric_limits<double>::infinity();
  for (int k = 1; k < num_stages(); ++k) {
    double b = bytes_at_split(k);
    if (b < best_bytes) {
      best_bytes = b;
      best = k;
    }
  }
  return best;
}

int ModelSpec::pp_comp(const std::function<double(int, int)>& device_seconds, const std::function<double(int, int)>& server_seconds) const {
  int best = -1;
  double best_t = std::numeric_limits<double>::infinity();
  for (int k = 0; k <= num_stages(); ++k) {
    double t = device_seconds(0, k) + server_seconds(k, num_stages());
    if (t < best_t) {
      best_t = t;
      best = k;
    }
  }
  return best;
}

ModelSpec one_stage_model(const std::string& name, const DatasetSpec& dataset, const std::string& op, int out_width) {
  ModelSpec m;
  m.name = name;
  m.dataset = dataset;
  StageSpec s;
  s.name = op;
  s.op = op;
  s.out_width = out_width;
  m.stages = {s};
  derive_costs(m);
  return m;
}

}  // namespace coinfer
