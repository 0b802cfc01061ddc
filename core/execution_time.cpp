#include "core/execution_time.hpp"

#include <algorithm>

namespace coinfer {

namespace {
int measured_batch(const LutTable& lut, int batch) { return std::max(1, std::min(batch, lut.max_batch())); }
}  // namespace

double LutMeanTime::seconds(const LutTable& lut, int begin, int end, int batch) const {
  if (begin >= end) return 0;
  const int measured = measured_batch(lut, batch);
  const double t = lut.mean_seconds(begin, end, measured);
  return batch > measured ? t * static_cast<double>(batch) / measured : t;
}

double LutSampledTime::seconds(const LutTable& lut, int begin, int end, int batch) const { return lut_mean_time().seconds(lut, begin, end, batch); }

double LutSampledTime::sample_seconds(const LutTable& lut, int begin, int end, int batch, double u) const {
  if (begin >= end) return 0;
  const int measured = measured_batch(lut, batch);
  const double* q = lut.quantiles(begin, end, measured);
  if (!q) return seconds(lut, begin, end, batch);
  const double t = quantile_at(lut.quantile_levels(), q, u);
  return batch > measured ? t * static_cast<double>(batch) / measured : t;
}

const ExecutionTimeModel& lut_mean_time() {
  static const LutMeanTime instance;
  return instance;
}

const ExecutionTimeModel& lut_sampled_time() {
  static const LutSampledTime instance;
  return instance;
}

double quantile_at(const std::vector<double>& levels, const double* values, double u) {
  if (u <= 0) return values[0];
  if (u >= 1) return values[levels.size() - 1];
  // The first level above u; the segment [levels[i], levels[j]) holds u and has positive width.
  const size_t j = static_cast<size_t>(std::upper_bound(levels.begin(), levels.end(), u) - levels.begin());
  const size_t i = j - 1;
  const double w = levels[j] - levels[i];
  return values[i] + (values[j] - values[i]) * (u - levels[i]) / w;
}

double distribution_mean(const std::vector<double>& levels, const double* values) {
  double m = 0;
  for (size_t i = 0; i + 1 < levels.size(); ++i) m += (levels[i + 1] - levels[i]) * (values[i] + values[i + 1]) / 2;
  return m;
}

double distribution_second_moment(const std::vector<double>& levels, const double* values) {
  // On a segment of width w where Q runs linearly from a to b: integral of Q^2 = w (a^2 + ab + b^2) / 3.
  double m = 0;
  for (size_t i = 0; i + 1 < levels.size(); ++i) {
    const double a = values[i], b = values[i + 1];
    m += (levels[i + 1] - levels[i]) * (a * a + a * b + b * b) / 3;
  }
  return m;
}

}  // namespace coinfer
