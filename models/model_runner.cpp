#include "models/model_runner.hpp"

#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/torch.h>

#include <torch/cuda.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "io/dataset_h5.hpp"
#include "models/datasets.hpp"
#include "models/gnn_model.hpp"
#include "models/split_state.hpp"

namespace coinfer::models {

namespace {
GraphSample moved(const GraphSample& in, const torch::Device& device) {
  if (in.x.device() == device) return in;
  GraphSample out = in;
  out.x = in.x.to(device);
  if (in.edge_index.defined()) out.edge_index = in.edge_index.to(device);
  return out;
}
void move_state(SplitState& st, const torch::Device& device) {
  for (auto& [id, t] : st.tensors)
    if (t.defined() && t.device() != device) t = t.to(device);
  if (st.edge_index.defined() && st.edge_index.device() != device) st.edge_index = st.edge_index.to(device);
}
}  // namespace

struct DeviceModelRunner::Impl {
  ModelSpec spec;
  std::unique_ptr<GnnModel> model;  // slot 0's
  std::vector<GraphSample> inputs;  // on the CPU
  struct Slot {
    std::string name;           // the processor's, for messages
    std::string device_name;    // "" none
    GnnModel* model = nullptr;  // slot 0: `model`; else its own copy
    std::unique_ptr<GnnModel> own;
    std::vector<GraphSample> inputs;  // moved to its device (the CPU's share the tensors)
  };
  std::vector<Slot> slots;
  mutable std::mutex kept_m;
  std::map<std::int64_t, SplitState> kept;  // between segments (under kept_m)

  Slot& slot(int proc) {
    if (proc < 0 || static_cast<size_t>(proc) >= slots.size() || !slots[static_cast<size_t>(proc)].model)
      throw std::invalid_argument("processor " +
                                  (proc >= 0 && static_cast<size_t>(proc) < slots.size() && !slots[static_cast<size_t>(proc)].name.empty()
                                       ? "'" + slots[static_cast<size_t>(proc)].name + "'"
                                       : std::to_string(proc)) +
                                  " has no LibTorch device on this machine");
    return slots[static_cast<size_t>(proc)];
  }
};

std::string torch_device_problem(const std::string& name) {
  try {
    const torch::Device d(name);
    if (d.is_cpu()) return "";
    if (!d.is_cuda()) return name + " is neither the CPU nor a CUDA device (cpu, cuda, cuda:N)";
    if (!cuda_available()) return name + " needs a CUDA LibTorch with a visible GPU: torch::cuda::is_available() is false here";
    if (d.has_index() && d.index() >= static_cast<int>(torch::cuda::device_count()))
      return name + ": this machine has " + std::to_string(torch::cuda::device_count()) + " GPU(s)";
    return "";
  } catch (const std::exception&) {
    return "'" + name + "' is not a LibTorch device (cpu, cuda, cuda:N)";
  }
}

DeviceModelRunner::DeviceModelRunner(const ModelSpec& spec, std::uint64_t seed, const std::string& input_file,
                                     const std::vector<std::string>& processors, const std::vector<std::string>& processor_names)
    : impl_(std::make_unique<Impl>()) {
  torch::NoGradGuard no_grad;
  impl_->spec = spec;
  impl_->model = std::make_unique<GnnModel>(spec, 1);
  if (!input_file.empty()) {
    if (spec.dataset.kind == "image") {
      throw std::invalid_argument("image datasets take generated inputs only (no input file: " + input_file + ")");
    } else if (spec.dataset.kind == "point_cloud") {
      const PointCloudFile f = load_pointnet_h5(input_file);
      for (std::int64_t i = 0; i < std::min<std::int64_t>(8, f.clouds); ++i) impl_->inputs.push_back(sample_from_file(f, i, spec.dataset.nodes));
    } else {
      impl_->inputs.push_back(sample_from_file(load_graph_h5(input_file)));
    }
  } else {
    for (int i = 0; i < 4; ++i) impl_->inputs.push_back(generate_sample(spec.dataset, seed, i).sample);
  }
  if (impl_->inputs.empty()) throw std::invalid_argument("no input in " + input_file);
  const std::vector<std::string> devices = processors.empty() ? std::vector<std::string>{"cpu"} : processors;
  impl_->slots.resize(devices.size());
  for (size_t p = 0; p < devices.size(); ++p) {
    Impl::Slot& s = impl_->slots[p];
    s.name = p < processor_names.size() ? processor_names[p] : "";
    s.device_name = devices[p];
    if (s.device_name.empty()) continue;
    const std::string what = "processor " + (s.name.empty() ? std::to_string(p) : "'" + s.name + "'") + " on " + s.device_name;
    if (const std::string problem = torch_device_problem(s.device_name); !problem.empty()) throw std::invalid_argument(what + ": " + problem);
    const torch::Device device(s.device_name);
    if (p == 0 && device.is_cpu()) {
      s.model = impl_->model.get();
    } else {
      s.own = std::make_unique<GnnModel>(spec, 1);
      try {
        s.own->to(device);
      } catch (const std::exception& e) {
        throw std::invalid_argument(what + ": " + e.what());
      }
      s.model = s.own.get();
    }
    for (const GraphSample& in : impl_->inputs) s.inputs.push_back(moved(in, device));
  }
}

DeviceModelRunner::~DeviceModelRunner() = default;

std::string DeviceModelRunner::run_stages(std::int64_t request, int split) {
  torch::NoGradGuard no_grad;
  const GraphSample& input = impl_->inputs[static_cast<size_t>(request) % impl_->inputs.size()];
  SplitState st = impl_->model->start(input);
  impl_->model->run(st, split);
  return split < impl_->spec.num_stages() ? serialize(st) : std::string();
}

std::string DeviceModelRunner::run_segment(std::int64_t request, int proc, int begin, int end, int device_split) {
  torch::NoGradGuard no_grad;
  Impl::Slot& slot = impl_->slot(proc);
  const GnnModel& model = *slot.model;
  if (begin < 0 || end <= begin || end > device_split || device_split > model.num_stages())
    throw std::out_of_range("segment [" + std::to_string(begin) + "," + std::to_string(end) + ") of a device split " + std::to_string(device_split) +
                            " (model has " + std::to_string(model.num_stages()) + " stages)");
  SplitState st;
  if (begin == 0) {
    st = model.start(slot.inputs[static_cast<size_t>(request) % slot.inputs.size()]);
  } else {
    std::lock_guard<std::mutex> lock(impl_->kept_m);
    auto it = impl_->kept.find(request);
    if (it == impl_->kept.end() || it->second.next_stage != begin)
      throw std::logic_error("request " + std::to_string(request) + " has no state at stage " + std::to_string(begin));
    st = std::move(it->second);
    impl_->kept.erase(it);
  }
  try {
    move_state(st, model.device());  // the copy from the previous segment's processor
    model.run(st, end);
    std::string out;
    if (end < device_split) {
      if (model.device().is_cuda()) torch::cuda::synchronize(model.device().index());
      std::lock_guard<std::mutex> lock(impl_->kept_m);
      impl_->kept[request] = std::move(st);
      return out;
    }
    if (device_split < model.num_stages())
      out = serialize(st);  // copies to the CPU
    else if (!model.device().is_cpu())
      (void)model.output(st).to(torch::kCPU);  // the result back in main memory
    return out;
  } catch (...) {
    forget(request);
    throw;
  }
}

void DeviceModelRunner::forget(std::int64_t request) {
  std::lock_guard<std::mutex> lock(impl_->kept_m);
  impl_->kept.erase(request);
}

size_t DeviceModelRunner::states_kept() const {
  std::lock_guard<std::mutex> lock(impl_->kept_m);
  return impl_->kept.size();
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
