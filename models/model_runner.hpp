#pragma once
// What the real runtime asks of a LibTorch model, behind a Torch-free interface: hw/device_runtime.cpp
// and hw/edge_server.cpp include no Torch header (the dependency-rule test checks it), so they compile
// in seconds and keep the runtime's threads apart from the tensor code. Split states cross this
// interface serialised (models/split_state.hpp's format), as they cross the wire.
#include <cstdint>
#include <memory>
#include <string>

#include "core/model_spec.hpp"

namespace coinfer::models {

// A device's own model and its inputs. Each call runs with gradients off, on the calling thread:
// run_stages from one thread at a time (the model's per-graph caches), input_state from any thread
// (it only builds the input state), so a device can serialise one input while it computes another.
class DeviceModelRunner {
 public:
  // The model's inputs: `input_file` (io/dataset_h5.hpp layouts; point clouds: its first 8 clouds; a
  // graph file: its graph), or, when empty, 4 samples from the dataset generator for `seed`. Throws
  // std::exception (with the file's problem) when the file cannot be used.
  DeviceModelRunner(const ModelSpec& spec, std::uint64_t seed, const std::string& input_file);
  ~DeviceModelRunner();
  DeviceModelRunner(const DeviceModelRunner&) = delete;
  DeviceModelRunner& operator=(const DeviceModelRunner&) = delete;

  // Input `request` (inputs are cycled) through stages [0, split): the serialised state at `split`;
  // "" when split is the model's end (the result stays on the device). Throws on a model failure.
  std::string run_stages(std::int64_t request, int split);
  // Input `request`'s raw state (split 0), serialised: what an offloaded request sends.
  std::string input_state(std::int64_t request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws std::exception saying why when `spec` cannot be realised as a LibTorch model (the server
// checks every model it serves before it listens).
void check_realisable(const ModelSpec& spec);

// Whether this LibTorch can compute on a GPU here (torch::cuda::is_available(): a CUDA build and a
// visible GPU). Debian's LibTorch is CPU only: false.
bool cuda_available();

}  // namespace coinfer::models
