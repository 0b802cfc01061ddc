#pragma once
// Where a strategy runs a device's stages among the device's processors
// (scenarios/README.md "Placement"). Text form, inside the strategy's brackets:
//   [gpu]                       every device stage on the GPU
//   [cpu:0-1,gpu:1-3]           stages [0,1) on the CPU, [1,3) on the GPU (ranges in order, from 0,
//                               together exactly the device's stages)
//   [cpu:0-1,gpu*0.75+cpu:1-3]  each stage of [1,3) split: 75 % of its output rows on the GPU, the
//                               rest on the CPU, both at once (CoDL-style: the two parts are
//                               concatenated, so the output is exact)
// Departure from SparOA (docs/PAPERS.md: SparOA, Eq. 14), which mixes a stage's CPU and GPU
// executions by averaging two whole outputs weighted by the share: that keeps no output exact, so a
// share here divides the output rows instead, and its time is max(S t_P, (1 - S) t_Q) plus the
// exchange (core/device_plan.hpp).
// A placement names processors only; which ones a device has is checked against its hardware
// (core/device_hardware.hpp) by the scenario loader and the runtime.
#include <string>
#include <vector>

namespace coinfer {

struct PlacementPart {
  std::string processor;    // runs the part (its `share` of each stage when `with` is set)
  std::string with;         // "" or the processor that runs the rest of each stage at the same time
  double share = 1;         // of each stage's output rows on `processor`; 0 < share < 1 with `with`
  int begin = 0, end = -1;  // stages [begin, end); end -1: to the device's split (the one-part form)
  bool operator==(const PlacementPart& o) const {
    return processor == o.processor && with == o.with && share == o.share && begin == o.begin && end == o.end;
  }
};

struct Placement {
  std::vector<PlacementPart> parts;  // empty: the device's default processor runs every device stage

  bool empty() const { return parts.empty(); }
  // "[cpu:0-1,gpu:1-3]"; "" when empty. Shares print with up to 6 significant digits.
  std::string to_string() const;
  // The parts for a device that runs stages [0, device_split): ranges made explicit. Throws
  // std::invalid_argument when the ranges do not cover exactly [0, device_split) in order.
  std::vector<PlacementPart> resolved(int device_split) const;
  // Every processor it names, in order of first use.
  std::vector<std::string> processors() const;
  bool operator==(const Placement& o) const { return parts == o.parts; }
};

// Parses the text between the brackets ("cpu:0-1,gpu:1-3"). Throws std::invalid_argument naming the
// part that is wrong and the allowed forms.
Placement parse_placement(const std::string& text);

}  // namespace coinfer
