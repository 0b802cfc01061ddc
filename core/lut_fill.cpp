#include "core/lut_fill.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/limits.hpp"
#include "core/text_util.hpp"

namespace coinfer {

double sum_rule_error(const std::vector<const LutTable*>& tables) {
  double total = 0;
  long long n = 0;
  for (const LutTable* t : tables) {
    if (t->provenance().kind != "measured" && t->provenance().kind != "imported") continue;
    for (int i = 0; i < t->num_stages(); ++i)
      for (int j = i + 2; j <= t->num_stages(); ++j)
        for (int b = 1; b <= t->max_batch(); ++b) {
          if (!t->has_latency(i, j, b) || t->estimate(i, j, b)) continue;
          double sum = 0;
          bool all = true;
          for (int s = i; s < j && all; ++s) {
            all = t->has_latency(s, s + 1, b) && !t->estimate(s, s + 1, b);
            if (all) sum += t->mean_seconds(s, s + 1, b);
          }
          if (!all) continue;
          const double m = t->mean_seconds(i, j, b);
          total += std::abs(sum - m) / m;
          ++n;
        }
  }
  return n ? total / static_cast<double>(n) : 0;
}

double batch_ratio_upper(int from_batch, int to_batch) {
  if (to_batch <= from_batch) return 1;
  return std::ceil(static_cast<double>(to_batch) / from_batch);
}

double batch_ratio_lower(int from_batch, int to_batch) {
  if (to_batch >= from_batch) return 1;
  return 1 / std::ceil(static_cast<double>(from_batch) / to_batch);
}

bool fill_entry(LutTable& table, const ModelSpec& spec, int begin, int end, int batch, const MeasurableParams& hw, const ModulePredictor& predict,
                double sum_rule_relative_error, FillOutcome& outcome) {
  if (begin >= end || table.has_latency(begin, end, batch)) return true;
  double sum = 0, weighted_error = 0;
  int measured = 0;
  std::map<std::string, std::string> methods;  // op -> method
  for (int s = begin; s < end; ++s) {
    if (table.has_latency(s, s + 1, batch) && !table.estimate(s, s + 1, batch)) {
      sum += table.mean_seconds(s, s + 1, batch);
      ++measured;
      continue;
    }
    const StageSpec& st = spec.stages[static_cast<size_t>(s)];
    const std::optional<ModulePrediction> p = predict(spec, s, batch, hw, "");
    if (!p) {
      outcome.unfillable.push_back(table.key().to_string() + " [" + std::to_string(begin) + "," + std::to_string(end) + ") batch " +
                                   std::to_string(batch) + ": stage " + std::to_string(s) + " (" + st.name + ", op " + st.op +
                                   ") has no measurement and no regressor");
      return false;
    }
    // Anchored to the table's own hardware: where the stage was measured at another batch size b0
    // (the nearest), the regressor only scales it: measured(b0) x predicted(b) / predicted(b0).
    int anchor = 0;
    for (int d = 1; d < table.max_batch() && !anchor; ++d)
      for (int b0 : {batch - d, batch + d})
        if (!anchor && b0 >= 1 && b0 <= table.max_batch() && table.has_latency(s, s + 1, b0) && !table.estimate(s, s + 1, b0)) anchor = b0;
    double seconds = p->seconds;
    std::string how = p->method;
    if (anchor) {
      const std::optional<ModulePrediction> p0 = predict(spec, s, anchor, hw, p->method);
      if (p0 && p0->seconds > 0 && std::isfinite(p0->seconds) && p->seconds > 0 && std::isfinite(p->seconds)) {
        const double ratio = p->seconds / p0->seconds;
        const double bounded = std::clamp(ratio, batch_ratio_lower(anchor, batch), batch_ratio_upper(anchor, batch));
        seconds = table.mean_seconds(s, s + 1, anchor) * bounded;
        how += " scaling batch " + std::to_string(anchor);
        if (bounded != ratio) how += " (bounded)";
      }
    }
    if (!(seconds > 0) || !std::isfinite(seconds) || seconds > limits::kMaxLutLatencyS) {
      outcome.unfillable.push_back(table.key().to_string() + " [" + std::to_string(begin) + "," + std::to_string(end) + ") batch " +
                                   std::to_string(batch) + ": stage " + std::to_string(s) + " (" + st.name + ", op " + st.op + "): " + p->method +
                                   " predicts " + format_double(seconds) + " s, outside (0, " + format_double(limits::kMaxLutLatencyS) + "] s");
      return false;
    }
    sum += seconds;
    weighted_error += seconds * p->relative_error;
    methods[st.op] = how;
  }
  const double regressor_error = sum > 0 ? weighted_error / sum : 0;
  const bool single = end - begin == 1;
  std::string method = single ? "" : "sum of stages: ";
  if (!single && measured) method += std::to_string(measured) + " measured";
  for (const auto& [op, m] : methods) method += std::string(method.empty() || method.back() == ' ' ? "" : ", ") + op + "=" + m;
  const double error = regressor_error + (single ? 0 : sum_rule_relative_error);
  if (sum > limits::kMaxLutLatencyS) {
    outcome.unfillable.push_back(table.key().to_string() + " [" + std::to_string(begin) + "," + std::to_string(end) + ") batch " +
                                 std::to_string(batch) + ": the sum of its stages is " + format_double(sum) + " s, beyond the limit of " +
                                 format_double(limits::kMaxLutLatencyS) + " s");
    return false;
  }
  sum = std::max(sum, limits::kMinLutLatencyS);
  table.set_latency(begin, end, batch, LatencyStats{sum, sum, sum, 0, 0});
  table.set_estimate(begin, end, batch, {method, error});
  ++outcome.filled;
  return true;
}

}  // namespace coinfer
