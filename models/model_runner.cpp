#include "models/model_runner.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/torch.h>

#include <cstdio>

#include <vector>

#include "io/dataset_h5.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"
#include "models/split_state.hpp"

namespace coinfer::models {

struct DeviceModelRunner::Impl {
  ModelSpec spec;
  std::unique_ptr<GnnModel> model;
  std::vector<GraphSample> inputs;
};

DeviceModelRunner::DeviceModelRunner(const ModelSpec& spec, std::uint64_t seed, const std::string& input_file)
    : impl_(std::make_unique<Impl>()) {
  torch::NoGradGuard no_grad;
  impl_->spec = spec;
  impl_->model = std::make_unique<GnnModel>(spec, 1);
  if (!input_file.empty()) {
    if (spec.dataset.kind == "point_cloud") {
      const PointCloudFile f = load_pointnet_h5(input_file);
      for (std::int64_t i = 0; i < std::min<std::int64_t>(8, f.clouds); ++i) impl_->inputs.push_back(sample_from_file(f, i, spec.dataset.nodes));
    } else {
      impl_->inputs.push_back(sample_from_file(load_graph_h5(input_file)));
    }
  } else {
    for (int i = 0; i < 4; ++i) impl_->inputs.push_back(generate_sample(spec.dataset, seed, i).sample);
  }
  if (impl_->inputs.empty()) throw std::invalid_argument("no input in " + input_file);
}

DeviceModelRunner::~DeviceModelRunner() = default;

std::string DeviceModelRunner::run_stages(std::int64_t request, int split) {
  torch::NoGradGuard no_grad;
  const GraphSample& input = impl_->inputs[static_cast<size_t>(request) % impl_->inputs.size()];
  SplitState st = impl_->model->start(input);
  impl_->model->run(st, split);
  return split < impl_->spec.num_stages() ? serialize(st) : std::string();
}

std::string DeviceModelRunner::input_state(std::int64_t request) {
  torch::NoGradGuard no_grad;
  return serialize(impl_->model->start(impl_->inputs[static_cast<size_t>(request) % impl_->inputs.size()]));
}

void check_realisable(const ModelSpec& spec) { GnnModel check(spec, 1); }

bool cuda_available() {
  if (!torch::cuda::is_available()) return false;
  // A CUDA LibTorch whose cuDNN is the stand-in of scripts/cudnn_absent.sh (NVIDIA's cuDNN not
  // installed: version 0) computes without cuDNN, on LibTorch's own CUDA kernels, rather than fail at
  // the first operator that would use it.
  static const bool checked = [] {
    const auto& hooks = at::detail::getCUDAHooks();
    if (hooks.compiledWithCuDNN() && hooks.versionCuDNN() == 0) {
      at::globalContext().setUserEnabledCuDNN(false);
      std::fprintf(stderr, "warning: cuDNN is absent on this machine (scripts/cudnn_absent.sh's stand-in): computing without it\n");
    }
    return true;
  }();
  (void)checked;
  return true;
}

}  // namespace coinfer::models
