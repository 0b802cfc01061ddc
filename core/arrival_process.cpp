#include "core/arrival_process.hpp"

#include <algorithm>
#include <limits>

namespace coinfer {

ArrivalProcess::ArrivalProcess(const DeviceSpec& device, std::uint64_t seed, int device_index, double arrivals_end_s)
    : device_(device),
      gaps_(seed, StreamPurpose::arrivals, static_cast<std::uint64_t>(device_index)),
      end_s_(std::min(device.leave_at_s, arrivals_end_s)),
      last_s_(device.join_at_s) {}

double ArrivalProcess::next() {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  if (done_) return kNever;
  double t = kNever;
  const WorkloadSpec& w = device_.workload;
  if (w.arrival == WorkloadSpec::Arrival::trace) {
    const auto& times = w.arrival_times_s;
    while (trace_pos_ < times.size() && times[trace_pos_] < device_.join_at_s) ++trace_pos_;
    if (trace_pos_ < times.size()) t = times[trace_pos_++];
  } else if (w.arrival == WorkloadSpec::Arrival::poisson) {
    t = last_s_ + gaps_.next_exponential(w.rate_per_s);
  }
  if (!(t < end_s_)) {
    done_ = true;
    return kNever;
  }
  last_s_ = t;
  return t;
}

bool ArrivalProcess::admits(const Strategy& current, const ClosedLoopView& v) {
  if (current.kind == Strategy::Kind::data_parallel) return !v.data_parallel_input_waiting && v.data_parallel_side_free;
  if (v.unfinished >= v.in_flight_limit) return false;
  return current.device_split(v.num_stages) > 0 ? v.compute_idle : v.upload_idle;
}

}  // namespace coinfer
