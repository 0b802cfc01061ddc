#include "hw/batch_runner.hpp"

#include <torch/torch.h>

#include "models/gnn_model.hpp"
#include "core/model_key.hpp"

namespace coinfer::hw {

namespace {

std::string final_state(const torch::Tensor& out, int n) {
  models::SplitState o;
  o.next_stage = n;
  o.tensors[n - 1] = out.contiguous();
  return models::serialize(o);
}

// The states' tensors, producer by producer, concatenated along dimension 0 into `all` (at their common
// next stage); false when the states do not hold the same producers.
bool concatenated(const std::vector<models::SplitState>& states, models::SplitState& all) {
  all.next_stage = states[0].next_stage;
  for (const auto& [id, t] : states[0].tensors) {
    std::vector<torch::Tensor> parts;
    for (const auto& s : states) {
      if (s.tensors.size() != states[0].tensors.size() || !s.tensors.count(id)) return false;
      parts.push_back(s.tensors.at(id));
    }
    all.tensors[id] = torch::cat(parts, 0);
  }
  return true;
}

// Point-cloud states (every tensor [1, ...], no graph): one batch along dimension 0.
// Splits the batch state `all` (run to `end` < n) back into one state per request: every tensor has
// either a row per node of the union (`rows` per request) or a row per request (past pooling; point
// clouds: always); the static graph is each request's own. False when a tensor has neither.
bool split_back(const models::SplitState& all, const std::vector<models::SplitState>& states, const std::vector<std::int64_t>& rows, int end,
                std::vector<std::string>& outputs) {
  std::int64_t total = 0;
  for (std::int64_t r : rows) total += r;
  const auto b = static_cast<std::int64_t>(states.size());
  std::vector<models::SplitState> parts(states.size());
  for (const auto& [id, t] : all.tensors)
    if (t.dim() == 0 || (t.size(0) != total && t.size(0) != b)) return false;
  std::int64_t at = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    models::SplitState& p = parts[i];
    p.next_stage = end;
    p.real_nodes = states[i].real_nodes;
    if (all.edge_index.defined()) p.edge_index = states[i].edge_index;
    for (const auto& [id, t] : all.tensors)
      p.tensors[id] = (t.size(0) == total ? t.narrow(0, at, rows[i]) : t.narrow(0, static_cast<std::int64_t>(i), 1)).contiguous();
    at += rows[i];
  }
  for (size_t i = 0; i < states.size(); ++i) outputs[i] = models::serialize(parts[i]);
  return true;
}

bool stack_point_clouds(const models::GnnModel& model, std::vector<models::SplitState>& states, std::vector<std::string>& outputs, int end) {
  for (auto& s : states) {
    if (s.edge_index.defined() || s.next_stage != states[0].next_stage) return false;
    for (auto& [id, t] : s.tensors)
      if (t.dim() == 0 || t.size(0) != 1 || t.is_quantized()) return false;
  }
  const int n = model.spec().num_stages();
  models::SplitState all;
  if (!concatenated(states, all)) return false;
  model.run(all, end);
  if (end < n) return split_back(all, states, std::vector<std::int64_t>(states.size(), 1), end, outputs);
  const torch::Tensor out = model.output(all);
  for (size_t i = 0; i < states.size(); ++i) outputs[i] = final_state(out.narrow(0, static_cast<int64_t>(i), 1), n);
  return true;
}

// Graph states: one disjoint union (edges renumbered), each graph pooling on its own
// (SplitState::graph_nodes) — the forward pass the profiler measures for a batch (hw/lut_profiler.cpp).
// Every tensor of a state must have that state's row count (its nodes, or 1 past pooling); padded
// (node-capacity) and int8 states run one after another instead.
bool stack_graphs(const models::GnnModel& model, std::vector<models::SplitState>& states, std::vector<std::string>& outputs, int end) {
  std::vector<std::int64_t> rows;
  const bool graph = states[0].edge_index.defined();
  for (auto& s : states) {
    if (s.real_nodes > 0 || s.graph_nodes.size() > 1 || s.next_stage != states[0].next_stage || s.edge_index.defined() != graph || s.tensors.empty())
      return false;
    std::int64_t r = -1;
    for (auto& [id, t] : s.tensors) {
      if (t.dim() != 2 || t.is_quantized() || (r >= 0 && t.size(0) != r)) return false;
      r = t.size(0);
    }
    rows.push_back(r);
  }
  const int n = model.spec().num_stages();
  models::SplitState all;
  if (!concatenated(states, all)) return false;
  if (graph) {
    std::vector<torch::Tensor> eis;
    std::int64_t offset = 0;
    for (size_t i = 0; i < states.size(); ++i) {
      eis.push_back(states[i].edge_index + offset);
      offset += rows[i];
    }
    all.edge_index = torch::cat(eis, 1);
  }
  all.graph_nodes = rows;
  model.run(all, end);
  if (end < n) return split_back(all, states, rows, end, outputs);
  const torch::Tensor out = model.output(all);
  std::int64_t total = 0;
  for (std::int64_t r : rows) total += r;
  std::int64_t at = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    // Node outputs: the graph's own rows; graph outputs (after pooling): its one row.
    const std::int64_t k = out.size(0) == total ? rows[i] : 1;
    if (out.size(0) != total && out.size(0) != static_cast<std::int64_t>(states.size()))
      throw std::runtime_error("stacked batch: output rows match neither the nodes nor the graphs");
    outputs[i] = final_state(out.narrow(0, at, k), n);
    at += k;
  }
  return true;
}

}  // namespace

BatchRunner::BatchRunner() = default;
BatchRunner::~BatchRunner() = default;

std::vector<std::string> BatchRunner::run(const ModelSpec& spec, const std::vector<const std::string*>& inputs, int end) {
  torch::NoGradGuard no_grad;
  auto& model = models_[ModelKey{spec.name, spec.dataset.name}];
  if (!model) model = std::make_unique<models::GnnModel>(spec, 1);
  const int n = spec.num_stages();
  if (end < 0) end = n;
  std::vector<std::string> outputs(inputs.size());
  std::vector<models::SplitState> states;
  for (const std::string* p : inputs) states.push_back(models::deserialize(*p));
  if (inputs.size() > 1 && stack_point_clouds(*model, states, outputs, end)) return outputs;
  if (inputs.size() > 1 && stack_graphs(*model, states, outputs, end)) return outputs;
  for (size_t i = 0; i < inputs.size(); ++i) {  // one after another
    model->run(states[i], end);
    outputs[i] = end < n ? models::serialize(states[i]) : final_state(model->output(states[i]), n);
  }
  return outputs;
}

}  // namespace coinfer::hw
