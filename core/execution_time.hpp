#pragma once
// The one question every part of coinfer asks about compute: how long does stages [begin, end) of a
// model take on a batch of b samples, on the hardware a LUT describes? The simulator (device and
// server executions, helpers), the analytic estimator and the real runtime's own estimates
// (data_parallel routing, helper forwarding) all ask an ExecutionTimeModel; predictors fitted or
// learned later plug in behind the same interface. Units: seconds.
//
// Two answers: seconds() is the expected time (estimators, routing, forwarding decisions);
// sample_seconds() is one execution's time, drawn by inversion from a uniform number the caller takes
// from its own seeded stream (core/random_stream.hpp, purpose service_time), so that the same seed
// gives the same run. The simulator asks sample_seconds() for the executions it simulates.
#include <string>
#include <vector>

#include "core/lut.hpp"

namespace coinfer {

class ExecutionTimeModel {
 public:
  virtual ~ExecutionTimeModel() = default;
  // Expected seconds to run stages [begin, end) on `batch` samples (batch >= 1). An empty range
  // costs 0. Throws LutMissingError when the model cannot answer for this range.
  virtual double seconds(const LutTable& lut, int begin, int end, int batch) const = 0;
  // One execution's seconds for the uniform number u in (0, 1): the u-quantile of the model's
  // distribution. A model without distributions answers seconds().
  virtual double sample_seconds(const LutTable& lut, int begin, int end, int batch, double u) const {
    (void)u;
    return seconds(lut, begin, end, batch);
  }
  virtual std::string name() const = 0;
};

// The LUT entry's mean, for every execution. A batch larger than the LUT's largest measured batch B
// costs mean(B) * batch / B: the measured batch is repeated as often as needed (no gain assumed
// beyond it).
class LutMeanTime final : public ExecutionTimeModel {
 public:
  double seconds(const LutTable& lut, int begin, int end, int batch) const override;
  std::string name() const override { return "lut_mean"; }
};

// Expected times as LutMeanTime; each execution's time drawn from the entry's measured distribution
// (LutTable quantiles) where it has one, else the mean. Beyond the largest measured batch B, the draw
// at B scaled by batch / B (as the mean is).
class LutSampledTime final : public ExecutionTimeModel {
 public:
  double seconds(const LutTable& lut, int begin, int end, int batch) const override;
  double sample_seconds(const LutTable& lut, int begin, int end, int batch, double u) const override;
  std::string name() const override { return "lut_sampled"; }
};

// The shared instances (stateless).
const ExecutionTimeModel& lut_mean_time();
const ExecutionTimeModel& lut_sampled_time();

// The quantile function of a LutTable distribution at u in [0, 1]: linear between levels; where a
// level repeats (a jump), u at the jump takes the upper value.
double quantile_at(const std::vector<double>& levels, const double* values, double u);
// Its first and second moments, E[S] and E[S^2], in closed form (segment by segment).
double distribution_mean(const std::vector<double>& levels, const double* values);
double distribution_second_moment(const std::vector<double>& levels, const double* values);

}  // namespace coinfer
