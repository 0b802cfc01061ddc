#include "core/data_parallel_router.hpp"

namespace coinfer {

DataParallelCosts data_parallel_costs(const DeviceSpec& device, const AccessPointSpec& ap, const ModelSpec& model, const LutTable* device_lut,
                                      const LutTable* server_lut, const ExecutionTimeModel& time) {
  DataParallelCosts c;
  const int n = model.num_stages();
  if (device_lut) c.local_s = time.seconds(*device_lut, 0, n, 1);
  if (server_lut) c.remote_compute_s = time.seconds(*server_lut, 0, n, 1);
  c.input_bytes = model.bytes_at_split(0);
  c.result_bytes = model.bytes_at_split(n);
  c.round_trip_latency_s = 2 * (device.link.latency_ms + ap.latency_ms) * 1e-3;
  return c;
}

std::optional<DataParallelRouter::Side> DataParallelRouter::route_next(double bytes_per_s) {
  if (device_busy_ && server_busy_) return std::nullopt;
  Side side = device_busy_ ? Side::server : Side::device;
  if (!device_busy_ && !server_busy_) {
    const double remote = costs_.round_trip_latency_s + (costs_.input_bytes + costs_.result_bytes) / bytes_per_s + costs_.remote_compute_s;
    side = remote < costs_.local_s ? Side::server : Side::device;
  }
  (side == Side::device ? device_busy_ : server_busy_) = true;
  return side;
}

}  // namespace coinfer
