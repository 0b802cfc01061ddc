#include "core/dynamic_batching.hpp"

#include <algorithm>

namespace coinfer {

namespace {
// Linear between the integer sizes around b (b in [1, max]).
double between(const std::function<double(int)>& f, double b, int max) {
  b = std::clamp(b, 1.0, static_cast<double>(max));
  const int lo = static_cast<int>(std::floor(b));
  const int hi = std::min(lo + 1, max);
  const double w = b - lo;
  return w == 0 || hi == lo ? f(lo) : (1 - w) * f(lo) + w * f(hi);
}
}  // namespace

DynamicBatchingResult sparoa_batch_size(const DynamicBatchingInputs& in, const DynamicBatchingParams& p) {
  DynamicBatchingResult r;
  const int max = std::max(1, in.max_size);
  auto per_request_ms = [&](double b) { return between(in.batch_seconds, b, max) / std::clamp(b, 1.0, static_cast<double>(max)) * 1e3; };
  auto memory = [&](double b) -> std::optional<double> {
    if (!in.peak_memory_bytes) return std::nullopt;
    const int lo = std::max(1, std::min(max, static_cast<int>(std::ceil(b))));  // the next integer size is what runs
    return in.peak_memory_bytes(lo);
  };
  // The largest size that fits the memory limit (max when nothing is known or everything fits).
  int fits = max;
  if (std::isfinite(p.memory_bytes))
    while (fits > 1) {
      const auto m = memory(fits);
      if (!m || *m <= p.memory_bytes) break;
      --fits;
    }
  double b = std::clamp(static_cast<double>(in.initial), 1.0, static_cast<double>(max));
  double upper = max;  // below every size found over a limit
  double l_prev = std::numeric_limits<double>::infinity();
  double l = per_request_ms(b);
  while (std::fabs(l - l_prev) > p.epsilon_ms && r.iterations < p.max_iterations) {
    ++r.iterations;
    // Line 7: the gradient by a central difference of one request (one-sided at the ends).
    const double lo = std::max(1.0, b - 1), hi = std::min(static_cast<double>(max), b + 1);
    const double grad = hi > lo ? (per_request_ms(hi) - per_request_ms(lo)) / (hi - lo) : 0;
    b = std::clamp(b - p.learning_rate * grad, 1.0, upper);  // line 8
    const auto m = memory(b);
    if ((m && *m > p.memory_bytes) || between(in.batch_seconds, b, max) > p.real_time_s) {  // lines 9-11
      upper = std::max(1.0, std::ceil(b) - 1);
      b = std::max(1.0, b / 2);
    }
    if (!std::isnan(p.sparsity_threshold) && in.input_sparsity && *in.input_sparsity > p.sparsity_threshold)
      b = std::min({2 * b, static_cast<double>(fits), upper});  // lines 12-13 (never above a size found over a limit)
    r.trace.push_back(b);
    l_prev = l;  // line 17
    l = per_request_ms(b);
  }
  r.batch = std::clamp(static_cast<int>(std::lround(b)), 1, max);
  return r;
}

}  // namespace coinfer
