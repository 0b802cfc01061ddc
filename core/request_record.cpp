#include "core/request_record.hpp"

#include <limits>

namespace coinfer {

namespace {
using F = RequestField;
using K = RequestField::Kind;
using R = RequestRecord;
constexpr std::int64_t kInt32 = std::numeric_limits<std::int32_t>::max();

// One row per member; the accessors are captureless lambdas (plain function pointers).
#define COINFER_INT(NAME, KIND, UNIT, LO, HI, FALLBACK, REQUIRED, TYPE)                                            \
  F{#NAME, KIND, UNIT, LO, HI, FALLBACK, REQUIRED, [](const R& r) -> std::int64_t { return r.NAME; },             \
    [](R& r, std::int64_t v) { r.NAME = static_cast<TYPE>(v); }, nullptr, nullptr, nullptr, nullptr}
#define COINFER_REAL(NAME, KIND, UNIT) \
  F{#NAME, KIND, UNIT, 0, 0, 0, false, nullptr, nullptr, [](const R& r) { return r.NAME; }, [](R& r, double v) { r.NAME = v; }, nullptr, nullptr}
#define COINFER_TEXT(NAME) \
  F{#NAME, K::text, "", 0, 0, 0, false, nullptr, nullptr, nullptr, nullptr, [](const R& r) -> const std::string& { return r.NAME; }, [](R& r, std::string v) { r.NAME = std::move(v); }}
}  // namespace

const std::vector<RequestField>& request_fields() {
  static const std::vector<RequestField> table = {
      COINFER_INT(id, K::int64, "", std::numeric_limits<std::int64_t>::min() / 2, std::numeric_limits<std::int64_t>::max() / 2, 0, true, std::int64_t),
      COINFER_INT(device, K::int32, "index into /devices", -1, kInt32, 0, true, std::int32_t),
      COINFER_INT(server, K::int32, "index into /servers, -1 = none", -1, kInt32, -1, false, std::int32_t),
      COINFER_TEXT(strategy),
      COINFER_INT(split, K::int32, "device ran stages [0,split)", -1, kInt32, 0, false, std::int32_t),
      COINFER_REAL(bytes_up, K::real, "bytes"),
      COINFER_REAL(bytes_down, K::real, "bytes"),
      COINFER_REAL(t_created, K::time, "s"),
      COINFER_REAL(t_device_start, K::time, "s"),
      COINFER_REAL(t_device_end, K::time, "s"),
      COINFER_REAL(t_uplink_end, K::time, "s"),
      COINFER_REAL(t_queued, K::time, "s"),
      COINFER_REAL(t_batch_start, K::time, "s"),
      COINFER_REAL(t_batch_end, K::time, "s"),
      COINFER_INT(batch_size, K::int32, "requests", 0, kInt32, 0, false, std::int32_t),
      COINFER_INT(helper, K::int32, "index into /devices of the idle helper that ran the server part, -1 none", -1, kInt32, -1, false, std::int32_t),
      COINFER_REAL(t_result, K::time, "s"),
      F{"status", K::status, "0 ok, 1 failed, 2 dropped", 0, 2, 0, false, [](const R& r) -> std::int64_t { return static_cast<std::int64_t>(r.status); },
        [](R& r, std::int64_t v) { r.status = static_cast<R::Status>(v); }, nullptr, nullptr, nullptr, nullptr},
      COINFER_TEXT(failure),
  };
  return table;
}

#undef COINFER_INT
#undef COINFER_REAL
#undef COINFER_TEXT

const char* status_text(RequestRecord::Status s) {
  return s == RequestRecord::Status::ok ? "ok" : s == RequestRecord::Status::dropped ? "dropped" : "failed";
}

RequestRecord::Status status_from_text(const std::string& text) {
  return text == "ok" ? RequestRecord::Status::ok : text == "dropped" ? RequestRecord::Status::dropped : RequestRecord::Status::failed;
}

}  // namespace coinfer
