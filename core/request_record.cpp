#include "core/request_record.hpp"

#include <limits>

namespace coinfer {

const std::vector<RequestField>& request_fields() {
  using R = RequestRecord;
  using K = FieldKind;
  constexpr std::int64_t kInt32 = std::numeric_limits<std::int32_t>::max();
  constexpr std::int64_t kId = std::numeric_limits<std::int64_t>::max() / 2;
  auto status = [] {
    RequestField f;
    f.name = "status", f.kind = K::status, f.unit = "0 ok, 1 failed, 2 dropped";
    f.get_int = [](const R& r) { return static_cast<std::int64_t>(r.status); };
    f.set_int = [](R& r, std::int64_t v) { r.status = static_cast<R::Status>(v); };
    return f.accepts(0, 2, 0, false);
  };
  // The journal's ranges: ids within [-2^62, 2^62), indices from -1 (none) to int32's maximum.
  static const std::vector<RequestField> table = {
      integer_field("id", K::int64, "", &R::id).accepts(std::numeric_limits<std::int64_t>::min() / 2, kId, 0, true),
      integer_field("device", K::int32, "index into /devices", &R::device).accepts(-1, kInt32, 0, true),
      integer_field("server", K::int32, "index into /servers, -1 = none", &R::server).accepts(-1, kInt32, -1, false),
      text_field("strategy", &R::strategy),
      integer_field("split", K::int32, "device ran stages [0,split)", &R::split).accepts(-1, kInt32, 0, false),
      number_field("bytes_up", K::real, "bytes", &R::bytes_up),
      number_field("bytes_down", K::real, "bytes", &R::bytes_down),
      number_field("t_created", K::time, "s", &R::t_created),
      number_field("t_device_start", K::time, "s", &R::t_device_start),
      number_field("t_device_end", K::time, "s", &R::t_device_end),
      number_field("t_uplink_end", K::time, "s", &R::t_uplink_end),
      number_field("t_queued", K::time, "s", &R::t_queued),
      number_field("t_batch_start", K::time, "s", &R::t_batch_start),
      number_field("t_batch_end", K::time, "s", &R::t_batch_end),
      integer_field("batch_size", K::int32, "requests", &R::batch_size).accepts(0, kInt32, 0, false),
      integer_field("helper", K::int32, "index into /devices of the idle helper that ran the server part, -1 none", &R::helper)
          .accepts(-1, kInt32, -1, false),
      integer_field("resends", K::int32, "transfers started again after a handover (mobility.mid_transfer: resend)", &R::resends)
          .accepts(0, kInt32, 0, false),
      integer_field("cloud", K::int32, "index into /servers of the cloud that ran [m,n) of pp(k,m), -1 none", &R::cloud)
          .accepts(-1, kInt32, -1, false),
      number_field("bytes_to_cloud", K::real, "bytes the edge server sent its cloud", &R::bytes_to_cloud),
      number_field("t_cloud_queued", K::time, "s", &R::t_cloud_queued),
      number_field("t_cloud_batch_start", K::time, "s", &R::t_cloud_batch_start),
      number_field("t_cloud_batch_end", K::time, "s", &R::t_cloud_batch_end),
      integer_field("cloud_batch_size", K::int32, "requests", &R::cloud_batch_size).accepts(0, kInt32, 0, false),
      number_field("t_result", K::time, "s", &R::t_result),
      status(),
      text_field("failure", &R::failure),
  };
  return table;
}

const char* status_text(RequestRecord::Status s) {
  return s == RequestRecord::Status::ok ? "ok" : s == RequestRecord::Status::dropped ? "dropped" : "failed";
}

RequestRecord::Status status_from_text(const std::string& text) {
  return text == "ok" ? RequestRecord::Status::ok : text == "dropped" ? RequestRecord::Status::dropped : RequestRecord::Status::failed;
}

}  // namespace coinfer
