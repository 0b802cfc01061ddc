#include "hw/batch_runner.hpp"

#include <torch/torch.h>

#include "models/gnn_model.hpp"
#include "core/model_key.hpp"

namespace coinfer::hw {

BatchRunner::BatchRunner() = default;
BatchRunner::~BatchRunner() = default;

std::vector<std::string> BatchRunner::run(const ModelSpec& spec, const std::vector<const std::string*>& inputs) {
  torch::NoGradGuard no_grad;
  auto& model = models_[ModelKey{spec.name, spec.dataset.name}.to_string()];
  if (!model) model = std::make_unique<models::GnnModel>(spec, 1);
  const int n = spec.num_stages();
  std::vector<std::string> outputs(inputs.size());
  std::vector<models::SplitState> states;
  for (const std::string* p : inputs) states.push_back(models::deserialize(*p));
  bool stackable = inputs.size() > 1;
  for (auto& s : states) {
    if (s.edge_index.defined()) stackable = false;
    for (auto& [id, t] : s.tensors)
      if (t.dim() == 0 || t.size(0) != 1) stackable = false;
  }
  if (stackable) {
    models::SplitState all;
    all.next_stage = states[0].next_stage;
    for (auto& [id, t] : states[0].tensors) {
      std::vector<torch::Tensor> parts;
      for (auto& s : states) parts.push_back(s.tensors.at(id));
      all.tensors[id] = torch::cat(parts, 0);
    }
    model->run(all, n);
    torch::Tensor out = model->output(all);
    for (size_t i = 0; i < inputs.size(); ++i) {
      models::SplitState o;
      o.next_stage = n;
      o.tensors[n - 1] = out.narrow(0, static_cast<int64_t>(i), 1).contiguous();
      outputs[i] = models::serialize(o);
    }
  } else {
    for (size_t i = 0; i < inputs.size(); ++i) {
      model->run(states[i], n);
      models::SplitState o;
      o.next_stage = n;
      o.tensors[n - 1] = model->output(states[i]).contiguous();
      outputs[i] = models::serialize(o);
    }
  }
  return outputs;
}

}  // namespace coinfer::hw
