#pragma once
// Operator (stage) placement inside one board: which of a board's processors runs each
// stage it computes, [0, k), or how a stage's output rows are shared between two of them. The rules
// are SparOA's baselines (docs/PAPERS.md: SparOA, Sec. 6.2) and GraNNite's GraphSplit (docs/PAPERS.md: GraNNite,
// Sec. IV-A); each gives a Placement (core/placement.hpp) priced by the simulator's own segment rule
// (core/device_plan.hpp segment_seconds): the seconds one request's device part takes alone on the
// board, copies between processors and the share exchange of split stages included. Engine-free, no
// state; a call does not advance simulated time.
// Departures from the papers (sched/README.md "Operator placement"): SparOA's share of an operator on
// the GPU is continuous and chosen by its SAC; here a rule picks it, dp and codl in tenths. SparOA's
// operators are DNN layers; ours are a model spec's stages. GraNNite splits inside a layer (graph
// preprocessing on the CPU, the dense product on the NPU); at stage granularity a sparse convolution
// is one irregular stage.
#include <string>
#include <vector>

#include "core/device_hardware.hpp"
#include "core/execution_time.hpp"
#include "core/placement.hpp"

namespace coinfer {

class ModelSpec;
class LutTable;

enum class PlacementRule {
  cpu_only,          // every stage on the board's CPU (SparOA's CPU-Only)
  accelerator_only,  // every stage on its GPU, else its NPU (SparOA's GPU-Only)
  greedy,            // each stage on the processor that runs it fastest alone, copies ignored (SparOA-greedy)
  dp,                // the least device seconds over every placement of whole stages and split stages with a
                     // share on the grid (SparOA-DP; exact on that set: a dynamic program over segments)
  codl,              // each stage split between the CPU and the accelerator in proportion to their speeds on it
                     // (CoDL's latency-balanced co-execution), the share snapped to the grid
  graphsplit,        // GraNNite's GraphSplit: irregular stages (KNN, gathers, pooling, sparse message passing)
                     // on the CPU, dense ones (linear layers, edge MLPs, dense-mask aggregation) on the NPU (GPU
                     // where the board has none)
};

// "cpu_only", "accelerator_only", "greedy", "dp", "codl", "graphsplit"; parse throws
// std::invalid_argument naming the allowed ones.
std::string rule_name(PlacementRule r);
PlacementRule parse_placement_rule(const std::string& name);
std::vector<PlacementRule> all_placement_rules();

// The shares of a split stage dp and codl consider on their first processor: 0.1, 0.2, ..., 0.9.
const std::vector<double>& default_share_grid();

struct PlacementChoice {
  Placement placement;        // over [0, k); empty when k is 0
  double device_seconds = 0;  // one request's device part, alone on the board (segment_seconds summed)
};

// The board: its hardware, per processor its table (core/device_plan.hpp processor_tables; null:
// none, the processor is not used), the model it runs and how many stages k it computes (the rest
// goes to the server when k < n). Throws std::invalid_argument when the rule needs a processor the
// board has no table for (cpu_only without a CPU table, ...).
PlacementChoice place_stages(PlacementRule rule, const ModelSpec& model, int k, const DeviceHardware& hw, const std::vector<const LutTable*>& tables,
                             const ExecutionTimeModel& time = lut_mean_time(), const std::vector<double>& share_grid = default_share_grid());

// The device seconds of `placement` over [0, k) (segment_seconds summed over its plan).
double placement_seconds(const Placement& placement, const ModelSpec& model, int k, const DeviceHardware& hw,
                         const std::vector<const LutTable*>& tables, const ExecutionTimeModel& time = lut_mean_time());

// GraphSplit's classification of a stage: true for irregular work (the CPU's).
bool irregular_stage(const ModelSpec& model, int stage);

}  // namespace coinfer
