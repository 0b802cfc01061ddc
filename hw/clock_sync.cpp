#include "hw/clock_sync.hpp"

namespace coinfer::hw {

ClockSample clock_sample(double t1, double t2, double t3, double t4) {
  ClockSample s;
  s.offset_s = ((t2 - t1) + (t3 - t4)) / 2;
  s.rtt_s = (t4 - t1) - (t3 - t2);
  s.at_s = t4;
  return s;
}

bool ClockEstimate::add(const ClockSample& s) {
  if (!std::isfinite(s.offset_s) || !std::isfinite(s.rtt_s) || s.rtt_s < 0) return false;
  ++samples_;
  if (known() && s.rtt_s >= best_.rtt_s) return false;
  best_ = s;
  return true;
}

namespace {
double zeros_shift(const JournalClock& c) {
  return std::isfinite(c.device_epoch_unix_s) && std::isfinite(c.server_epoch_unix_s) ? c.device_epoch_unix_s - c.server_epoch_unix_s : 0;
}
}  // namespace

double device_time_shift(const JournalClock& c) { return zeros_shift(c) + (std::isfinite(c.offset_s) ? c.offset_s : 0); }

void correct_to_server_clock(std::vector<RequestRecord>& records, const JournalClock& c) {
  const double zeros = zeros_shift(c);
  const double device_shift = device_time_shift(c);
  for (RequestRecord& r : records) {
    for (double* t : {&r.t_created, &r.t_device_start, &r.t_device_end, &r.t_result}) *t += device_shift;
    for (double* t : {&r.t_uplink_end, &r.t_queued, &r.t_batch_start, &r.t_batch_end}) *t += zeros;
  }
}

}  // namespace coinfer::hw
