#include "core/execution_time.hpp"

#include <algorithm>

namespace coinfer {

double LutMeanTime::seconds(const LutTable& lut, int begin, int end, int batch) const {
  if (begin >= end) return 0;
  const int measured = std::max(1, std::min(batch, lut.max_batch()));
  const double t = lut.mean_seconds(begin, end, measured);
  return batch > measured ? t * static_cast<double>(batch) / measured : t;
}

const ExecutionTimeModel& lut_mean_time() {
  static const LutMeanTime instance;
  return instance;
}

}  // namespace coinfer
