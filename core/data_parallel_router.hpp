#pragma once
// Where the next input of a data_parallel device goes (docs/ARCHITECTURE.md): each input runs whole on the
// device or whole on the server. A free side takes the next input; when both are free, the side
// with the lower estimated latency at the bandwidth the device sees now:
//     device: local_s                                         (whole model here, batch 1)
//     server: 2 * (link + access point one-way latency)
//             + (input bytes + result bytes) / bandwidth + remote_compute_s (whole model there)
// Ties go to the device. Engine-free: the simulator's device actor and the real device runtime
// hold one router each. Seconds, bytes, bytes/s.
#include <optional>

#include "core/execution_time.hpp"
#include "core/model_spec.hpp"
#include "core/scenario.hpp"

namespace coinfer {

struct DataParallelCosts {
  double local_s = 0;           // whole model on the device
  double remote_compute_s = 0;  // whole model on the server
  double input_bytes = 0;       // the raw input (bytes at split 0)
  double result_bytes = 0;      // the result (bytes at split n)
  double round_trip_latency_s = 0;
};

// The costs of one device from its spec, the access point, its model and the two LUTs (device
// type and its server's type); a missing LUT leaves that side's compute at 0.
DataParallelCosts data_parallel_costs(const DeviceSpec& device, const AccessPointSpec& ap, const ModelSpec& model, const LutTable* device_lut,
                                      const LutTable* server_lut, const ExecutionTimeModel& time = lut_mean_time());

class DataParallelRouter {
 public:
  enum class Side { device, server };
  explicit DataParallelRouter(DataParallelCosts costs = {}) : costs_(costs) {}
  bool any_free() const { return !device_busy_ || !server_busy_; }
  bool busy(Side s) const { return s == Side::device ? device_busy_ : server_busy_; }
  // The side the next input takes at `bytes_per_s` (the device's link now), marked busy; nullopt
  // when both sides are busy.
  std::optional<Side> route_next(double bytes_per_s);
  // Marks side `s` busy without the rule (the device side while the server is down).
  void take(Side s) { (s == Side::device ? device_busy_ : server_busy_) = true; }
  // The input on that side finished (or failed): the side is free again.
  void release(Side s) { (s == Side::device ? device_busy_ : server_busy_) = false; }
  const DataParallelCosts& costs() const { return costs_; }
  // New costs (the device switched to another model variant); which sides are busy is kept.
  void set_costs(DataParallelCosts costs) { costs_ = costs; }

 private:
  DataParallelCosts costs_;
  bool device_busy_ = false, server_busy_ = false;
};

}  // namespace coinfer
