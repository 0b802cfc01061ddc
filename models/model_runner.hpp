#pragma once
// What the real runtime asks of a LibTorch model, behind a Torch-free interface: hw/device_runtime.cpp
// and hw/edge_server.cpp include no Torch header (the dependency-rule test checks it), so they compile
// in seconds and keep the runtime's threads apart from the tensor code. Split states cross this
// interface serialised (models/split_state.hpp's format), as they cross the wire.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
  // `processors`: per processor slot of the device (DeviceHardware order), the LibTorch device that
  // computes its segments here: "cpu", "cuda" or "cuda:N", "" for none (a segment placed there throws,
  // naming `processor_names[slot]`). Each slot gets its own copy of the model (same seed, same
  // parameters) on its device, so that the slots compute at once. Default: one slot, the CPU.
  // Throws std::invalid_argument naming the processor when a device cannot be used here (a CUDA
  // device without a CUDA LibTorch and a visible GPU; an INT8 variant on a GPU).
  DeviceModelRunner(const ModelSpec& spec, std::uint64_t seed, const std::string& input_file, const std::vector<std::string>& processors = {"cpu"},
                    const std::vector<std::string>& processor_names = {});
  ~DeviceModelRunner();
  DeviceModelRunner(const DeviceModelRunner&) = delete;
  DeviceModelRunner& operator=(const DeviceModelRunner&) = delete;

  // Input `request` (inputs are cycled) through stages [0, split): the serialised state at `split`;
  // "" when split is the model's end (the result stays on the device). Throws on a model failure.
  std::string run_stages(std::int64_t request, int split);
  // One segment of input `request`'s device stages: stages [begin, end) on processor slot `proc`,
  // the device running [0, device_split) in all. begin 0 starts from the input (moved to the slot's
  // device); else the state the previous segment kept is moved there first (the copy between
  // processors, a no-op between two CPU slots). end < device_split: the state is kept for the next
  // segment, returns ""; end == device_split: the serialised state at the split when the server runs
  // the rest, "" when the device runs the whole model (its result copied back to the CPU). A CUDA
  // slot waits for its kernels before returning (the segment's time is the work's). One call per slot
  // at a time, slots at once. Throws on a model failure (the kept state is dropped).
  std::string run_segment(std::int64_t request, int proc, int begin, int end, int device_split);
  // Drops what request `request` kept between segments (it failed or was dropped); any thread.
  void forget(std::int64_t request);
  // Requests holding a state between segments now.
  size_t states_kept() const;
  // Input `request`'s raw state (split 0), serialised: what an offloaded request sends.
  std::string input_state(std::int64_t request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws std::exception saying why when `spec` cannot be realised as a LibTorch model (the server
// checks every model it serves before it listens).
void check_realisable(const ModelSpec& spec);

// The LibTorch device `name` ("cpu", "cuda", "cuda:N") checked for use here: "" when it can, else why
// not ("cuda:0 needs a CUDA LibTorch with a visible GPU: torch::cuda::is_available() is false here").
std::string torch_device_problem(const std::string& name);

// Whether this LibTorch can compute on a GPU here (torch::cuda::is_available(): a CUDA build and a
// visible GPU). Debian's LibTorch is CPU only: false.
bool cuda_available();

}  // namespace coinfer::models
