#pragma once
// Clock offsets between a board and the edge server, NTP's on-wire exchange over
// the middleware's heartbeats: the device stamps t1 when it sends a heartbeat, the server t2 when it
// receives it and t3 when it answers, the device t4 when the answer arrives -- each on its own clock,
// Unix seconds. Engine-free and pure: the device keeps the estimate, the journal merge applies it.
#include <cmath>
#include <vector>

#include "core/request_record.hpp"

namespace coinfer::hw {

struct ClockSample {
  double offset_s = NAN;  // server clock minus device clock
  double rtt_s = NAN;     // round trip, the server's time between t2 and t3 excluded
  double at_s = NAN;      // t4, device clock (Unix s)
};
// ((t2 - t1) + (t3 - t4)) / 2 and (t4 - t1) - (t3 - t2); exact when both directions take equal time,
// and wrong by at most rtt / 2 whatever the asymmetry.
ClockSample clock_sample(double t1, double t2, double t3, double t4);

// The best estimate so far: the sample with the smallest round trip (its error bound, rtt / 2, is the
// smallest; later samples of a loaded link do not spoil it).
class ClockEstimate {
 public:
  // True when `s` became the estimate.
  bool add(const ClockSample& s);
  bool known() const { return !std::isnan(best_.offset_s); }
  double offset_s() const { return best_.offset_s; }
  double uncertainty_s() const { return best_.rtt_s / 2; }
  int samples() const { return samples_; }

 private:
  ClockSample best_;
  int samples_ = 0;
};

// What a device journal says about clocks: the device's time zero (Unix s on its clock), the server's
// (Unix s on the server's clock, sent at registration), and the device's best offset estimate.
struct JournalClock {
  double device_epoch_unix_s = NAN, server_epoch_unix_s = NAN;
  double offset_s = NAN, uncertainty_s = NAN;
  int samples = 0;
};

// Moves a device's records onto the server's clock and time zero. The device stamped t_created,
// t_device_start/end and t_result on its own clock since its time zero; the server's fields
// (t_uplink_end, t_queued, t_batch_start/end) came from the server's clock, made relative to the
// device's time zero. Without an offset estimate only the time zeros are reconciled.
void correct_to_server_clock(std::vector<RequestRecord>& records, const JournalClock& clock);
// What correct_to_server_clock adds to a device-stamped time.
double device_time_shift(const JournalClock& clock);

}  // namespace coinfer::hw
