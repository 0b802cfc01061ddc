#pragma once
// Filling LUT gaps with estimates (coinfer lut fill; the MEDN paper's per-module regressors). An entry
// [begin, end) at batch b is estimated as the sum of its stages [s, s+1) at batch b: each stage's
// measured single-stage entry where the table has one, else the per-module regressor's prediction,
// anchored where it can be: when the table measured that stage at another batch size b0 (the nearest),
// the estimate is measured(b0) x predicted(b) / predicted(b0), so the regressor supplies only the
// scaling and the table's own hardware supplies the level (method "op=kind scaling batch b0"). The
// scaling is bounded by what batching can physically do (batch_ratio_lower/upper; method gains
// "(bounded)" where it was cut): a regressor extrapolating past its training batches once scaled a
// stage by 10^4 from batch 4 to 7 and wrote an entry of 115,809 s that the LUT loader then refused.
// A stage or an entry whose estimate is not in (0, limits::kMaxLutLatencyS] is unfillable, never
// written.
// Its relative error is the regressors' held-out error weighted by their share of the sum, plus the
// error of the sum rule itself (how far measured multi-stage entries are from the sum of their measured
// stages, over the training tables): a filled entry never claims more accuracy than was measured.
// Filled entries have no distribution (p50 = p95 = mean, std 0, count 0) and carry the estimate mark
// (core/lut.hpp). Engine-free and Torch-free: the regressor comes in as a callback.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "core/module_features.hpp"

namespace coinfer {

struct ModulePrediction {
  double seconds = 0;
  double relative_error = 0;  // held-out mean absolute percentage error of the regressor (0.08 = 8 %)
  std::string method;         // e.g. "medn"
};
// nullopt: no regressor for this stage's op. `method` empty: the predictor chooses; otherwise it must
// use that method (an anchored estimate takes both of its predictions from one regressor).
using ModulePredictor =
    std::function<std::optional<ModulePrediction>(const ModelSpec&, int stage, int batch, const MeasurableParams&, const std::string& method)>;

// The mean relative difference between measured multi-stage entries and the sum of their measured
// single-stage entries, over the measured or imported tables given (0 when none can be compared).
double sum_rule_error(const std::vector<const LutTable*>& tables);

// How much a stage's latency may change from batch `from_batch` to `to_batch`, as a factor: a larger
// batch is never faster than a smaller one (lower bound 1 going up), and never slower than running it
// as ceil(to/from) consecutive batches of the smaller size (upper bound ceil(to/from)); going down,
// the reciprocal bounds: [1 / ceil(from/to), 1]. Equal batches: exactly 1.
double batch_ratio_upper(int from_batch, int to_batch);
double batch_ratio_lower(int from_batch, int to_batch);

struct FillOutcome {
  long long filled = 0;
  std::vector<std::string> unfillable;  // "stage 3 (op gat) of gcn/mr: no regressor" ...
};

// Fills entry [begin, end) at `batch` of `table` (spec: the table's model on its dataset; hw: the
// table's hardware). The table must cover `batch` (LutTable::with_max_batch first). A present entry is
// left alone. Returns false (and says why in outcome.unfillable) when a stage has neither a
// measurement nor a prediction.
bool fill_entry(LutTable& table, const ModelSpec& spec, int begin, int end, int batch, const MeasurableParams& hw, const ModulePredictor& predict,
                double sum_rule_relative_error, FillOutcome& outcome);

}  // namespace coinfer
