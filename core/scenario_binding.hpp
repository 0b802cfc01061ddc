#pragma once
// Binding a scenario to its models and LUTs, shared by the simulator, the real runtime and the
// commands: what every device's model, dataset, split and LUT entries must be for the run to start,
// which LUT entries a run may consult, the model specs the estimator takes, and the execution variants a
// scheduler may choose. Pure functions of their arguments (the models through ModelSource: the catalog
// io/model_spec_loader.hpp loads); errors are InputErrors naming the scenario's file, line and key.
#include <functional>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/model_source.hpp"
#include "core/model_spec.hpp"
#include "core/model_variant.hpp"
#include "core/scenario.hpp"
#include "core/scheduler_traits.hpp"

namespace coinfer {

// Where a remedy for a missing LUT looks for device profiles (coinfer lut synth needs the type's):
// the profiles file, and whether it has a profile of a type. Asked only when a LUT is missing; empty
// functions: "traces/devices.yaml", none.
struct DeviceProfileHint {
  std::function<std::string()> file;
  std::function<bool(const std::string& type)> has_profile;
};
// Checks what needs the model catalog and the LUTs (io/scenario_loader.hpp check_scenario_against: with
// the project's device profiles): every device's model, dataset and type exists, its
// split is in range, and every LUT entry the run will consult is present (device ranges at batch 1,
// server ranges at batch 1..max_size). Throws InputError naming the device entry and key.
// Where the scenario's luts_fill is not `allow`, an estimated entry among them is refused too (key luts_fill).
// `scheduler`: the traits of the scenario's scheduler (sched/scheduler_factory.hpp scheduler_traits).
void check_scenario_binding(const Scenario& s, const ModelSource& models, const LutSet& luts, const SchedulerTraits& scheduler,
                            const DeviceProfileHint& profiles = {});
// The spec of every device's (model, dataset) pair, its execution variants' too: what the analytic
// estimator takes.
ModelSpecs scenario_model_specs(const Scenario& s, const ModelSource& models);

// One LUT entry a run may consult: stages [begin,end) of `key` at `batch`, for device `device` (its
// index), or, when helper_for names a device, for device `device` running that one's server part as an
// idle helper (only batch sizes its table covers). The device's model and dataset must exist.
struct LutNeed {
  LutKey key;
  int num_stages = 0;
  int begin = 0, end = 0, batch = 1;
  size_t device = 0;
  std::string helper_for;
  bool on_server = false;  // the device's server runs the range (key.device_type is the server's type)
  // Only the table must exist (the simulator binds both the device's and its server's table whatever
  // the strategy: wire bytes, a scheduler's moves); its entries are not consulted. `lut fill` makes an
  // absent one with the whole-model entry [0, num_stages) at batch 1.
  bool table_only = false;
};
std::vector<LutNeed> lut_entries_needed(const Scenario& s, const ModelSource& models, const SchedulerTraits& scheduler);
// The same needs handed to `visit` one at a time, in the same order, none kept: a run's checks at
// 100,000 devices would otherwise hold ~50 needs of ~200 bytes per device at once.
void for_each_lut_need(const Scenario& s, const ModelSource& models, const SchedulerTraits& scheduler,
                       const std::function<void(const LutNeed&)>& visit);

// The estimated entries (coinfer lut fill) among those a run may consult, each once.
struct EstimatedUse {
  LutKey key;
  int begin = 0, end = 0, batch = 1;
  std::string method;
  double relative_error = 0;
};
std::vector<EstimatedUse> estimated_entries_used(const Scenario& s, const ModelSource& models, const LutSet& luts, const SchedulerTraits& scheduler);

// Execution variants as a scheduling dimension (scheduler.max_output_error >= 0): fills each device's
// variant_choices with the variants of its model (and "fp32", the base) that it may run: a LUT for
// its type and one for its server's type, both complete for every strategy (device [0,k) at batch 1,
// server [k,n) at batch 1..max_size), no estimated entries unless luts_fill allows them, and an
// output error within the bound (documented_output_error). Returns one note per variant left out
// and why. Does nothing when max_output_error < 0.
std::vector<std::string> resolve_variant_choices(Scenario& s, const ModelSource& models, const LutSet& luts);
// A variant's output error relative to the base model's outputs: 0 for exact variants
// (ModelVariant::exact), else output_mean_abs_error / output_mean_abs from the table's provenance
// (written by coinfer profile --variant); -1 when the table does not document it.
double documented_output_error(const LutTable& t, const ModelVariant& v);

}  // namespace coinfer
