#pragma once
// The life of one inference request. The simulator and the real runtime produce the same records
// (results.h5 schema in sim/README.md). Times are seconds since the start of the run; NaN = the step
// did not happen for this request (e.g. no uplink for a local request).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/record_field.hpp"

namespace coinfer {

struct RequestRecord {
  // dropped: past its deadline with workload.drop_late, given up at the first point the device knew it
  // (core/device_loop.hpp); failure says where and how late.
  enum class Status : std::int8_t { ok = 0, failed = 1, dropped = 2 };
  std::int64_t id = 0;
  std::int32_t device = 0;   // index into the scenario's devices
  std::int32_t server = -1;  // index of the server used, -1 if none
  std::string strategy;      // strategy the request started with ("pp(2)")
  std::int32_t split = 0;    // device ran [0,split); for data_parallel, 0 (server) or n (device)
  double bytes_up = 0, bytes_down = 0;
  double t_created = NAN;
  double t_device_start = NAN, t_device_end = NAN;
  double t_uplink_end = NAN;  // request fully received by the server
  double t_queued = NAN;      // entered the server's request queue (= t_uplink_end in the simulator)
  double t_batch_start = NAN, t_batch_end = NAN;
  std::int32_t batch_size = 0;
  std::int32_t helper = -1;  // device index of the idle helper that ran the server part, -1 if none
  // Its transfers (upload, result) started again from the first byte after a handover caught them on
  // the device's link (mobility.mid_transfer: resend; core/mobility.hpp).
  std::int32_t resends = 0;
  // A cloud tier (pp(k,m)): the cloud server that ran [m,n) (-1: none), the bytes the
  // edge sent it (the tensor at stage m), and the request's time there (queued, its batch).
  std::int32_t cloud = -1;
  double bytes_to_cloud = 0;
  double t_cloud_queued = NAN;
  double t_cloud_batch_start = NAN, t_cloud_batch_end = NAN;
  std::int32_t cloud_batch_size = 0;
  double t_result = NAN;  // result available on the device
  Status status = Status::ok;
  std::string failure;  // why, when failed

  bool done() const { return !std::isnan(t_result); }
  double latency_s() const { return t_result - t_created; }
};

// The record's fields as one table (core/record_field.hpp): results.h5's /requests columns
// (io/results_h5.cpp, write and read) and the real runtime's records journal (hw/record_journal.cpp,
// JSON lines) both walk it, so a new field is one row here (and its member above). In table order.
using RequestField = RecordField<RequestRecord>;
const std::vector<RequestField>& request_fields();
// The status as the journal writes it, and back (anything but "ok" and "dropped" reads as failed).
const char* status_text(RequestRecord::Status s);
RequestRecord::Status status_from_text(const std::string& text);

}  // namespace coinfer
