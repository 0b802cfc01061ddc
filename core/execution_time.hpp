#pragma once
// The one question every part of coinfer asks about compute: how long does stages [begin, end) of a
// model take on a batch of b samples, on the hardware a LUT describes? The simulator (device and
// server executions, helpers), the analytic estimator and the real runtime's own estimates
// (data_parallel routing, helper forwarding) all ask an ExecutionTimeModel; predictors fitted or
// learned later plug in behind the same interface. Units: seconds.
#include <string>

#include "core/lut.hpp"

namespace coinfer {

class ExecutionTimeModel {
 public:
  virtual ~ExecutionTimeModel() = default;
  // Seconds to run stages [begin, end) on `batch` samples (batch >= 1). An empty range costs 0.
  // Throws LutMissingError when the model cannot answer for this range.
  virtual double seconds(const LutTable& lut, int begin, int end, int batch) const = 0;
  virtual std::string name() const = 0;
};

// The LUT entry's mean. A batch larger than the LUT's largest measured batch B costs
// mean(B) * batch / B: the measured batch is repeated as often as needed (no gain assumed beyond it).
class LutMeanTime final : public ExecutionTimeModel {
 public:
  double seconds(const LutTable& lut, int begin, int end, int batch) const override;
  std::string name() const override { return "lut_mean"; }
};

// The shared LutMeanTime (stateless).
const ExecutionTimeModel& lut_mean_time();

}  // namespace coinfer
