#include <limits>

#include "core/run_results.hpp"

namespace coinfer {

namespace {
using K = FieldKind;
constexpr std::int64_t kInt32 = std::numeric_limits<std::int32_t>::max();
}  // namespace

const std::vector<RecordField<DeviceResult>>& device_result_fields() {
  using R = DeviceResult;
  // The radio's energy by state, for devices whose radio has power states (NaN for the others; the
  // columns are left out when no device has them).
  auto radio = [](const char* name, const char* unit, double RadioEnergy::*member) {
    return number_field<R>(
               name, K::real, unit, [member](const R& d) { return d.radio.*member; }, [member](R& d, double v) { d.radio.*member = v; })
        .only_where([](const R& d) { return d.radio_states; });
  };
  static const std::vector<RecordField<R>> table = {
      text_field("id", &R::id),
      text_field("type", &R::type),
      text_field("model", &R::model),
      text_field("dataset", &R::dataset),
      text_field("server", &R::server),
      text_field("strategy", &R::strategy),
      number_field("energy_compute_j", K::real, "J over the measurement window: computing above idle power (testbed: the whole board as metered)",
                   &R::energy_compute_j),
      number_field("energy_idle_j", K::real, "J over the measurement window: idle power all along (testbed: NaN, not split)", &R::energy_idle_j),
      number_field("energy_radio_j", K::real, "J over the measurement window: the radio (flat J/MB or power states)", &R::energy_radio_j),
      radio("radio_active_j", "J: radio active (base power while transferring + per-Mbit terms); NaN: flat rate", &RadioEnergy::active_j),
      radio("radio_tail_j", "J: radio tail after transfers; NaN: flat rate", &RadioEnergy::tail_j),
      radio("radio_promotion_j", "J: radio promotions from idle; NaN: flat rate", &RadioEnergy::promotion_j),
      radio("radio_idle_j", "J: radio idle; NaN: flat rate", &RadioEnergy::idle_j),
      number_field("bytes_sent", K::real, "bytes", &R::bytes_sent),
      number_field("bytes_received", K::real, "bytes", &R::bytes_received),
      number_field("throughput_rps", K::real, "requests/s: results delivered inside the measurement window (core/metrics.hpp)", &R::throughput_rps),
      number_field("throughput_incl_drain_rps", K::real, "requests/s: requests created in the window that completed, drain included",
                   &R::throughput_incl_drain_rps),
      number_field("offered_rps", K::real, "requests/s: requests created in the window", &R::offered_rps),
      integer_field("saturated", K::flag, "1 = its queues grew over the measurement window (core/metrics.hpp)", &R::saturated),
  };
  return table;
}

const std::vector<RecordField<ServerResult>>& server_result_fields() {
  using R = ServerResult;
  static const std::vector<RecordField<R>> table = {
      number_field("busy_s", K::real, "s computing (union of its batches' spans) over the measurement window", &R::busy_s),
      number_field("energy_j", K::real,
                   "J over the measurement window: idle_w x (window - down_s) + (busy_w - idle_w) x busy_s; NaN: power not stated", &R::energy_j),
      number_field("down_s", K::real, "s of the measurement window the server was failed (events fail/recover)", &R::down_s),
      integer_field("failures", K::int64, "fail events in the measurement window", &R::failures),
      integer_field("batches", K::int64, "batches started in the measurement window", &R::batches),
      integer_field("requests", K::int64, "requests created in the window and completed that it computed a part of", &R::requests),
  };
  return table;
}

const std::vector<RecordField<EventRecord>>& event_fields() {
  using R = EventRecord;
  static const std::vector<RecordField<R>> table = {
      number_field("t_s", K::real, "s", &R::t_s).stored_as("t"),
      text_field("kind", &R::kind),
      text_field("device", &R::device),
      text_field("server", &R::server),
      number_field("value", K::real, "bandwidth_mbps for kind=bandwidth, the share taken for kind=load", &R::value),
      text_field("access_point", &R::access_point),
      text_field("from_access_point", &R::from_access_point),
  };
  return table;
}

const std::vector<RecordField<DecisionRecord>>& decision_fields() {
  using R = DecisionRecord;
  // decisions.jsonl must carry every key but the detail; results.h5 has neither the wall-clock time
  // (not deterministic) nor the detail.
  static const std::vector<RecordField<R>> table = {
      number_field("t_s", K::real, "s", &R::t_s).stored_as("t").required_key(),
      text_field("trigger", &R::trigger).required_key(),
      text_field("scheme", &R::scheme).required_key(),
      number_field("predicted_throughput_rps", K::real, "requests/s", &R::predicted_throughput_rps).required_key(),
      number_field("predicted_latency_ms", K::real, "ms", &R::predicted_latency_ms).required_key(),
      integer_field("switched", K::int32, "devices sent a new strategy", &R::switched).accepts(0, kInt32, 0, true),
      number_field("wall_s", K::real, "s of wall-clock time in decide(); 0 in decisions.jsonl (a deterministic file: the times are in timing.json)",
                   &R::wall_s)
          .required_key()
          .json_only(),
      text_field("detail", &R::detail, K::json_object).json_only(),
  };
  return table;
}

const std::vector<RecordField<BandwidthSample>>& bandwidth_fields() {
  using R = BandwidthSample;
  static const std::vector<RecordField<R>> table = {
      number_field("t_s", K::real, "s", &R::t_s).stored_as("t"),
      integer_field("device", K::int32, "index into /devices", &R::device),
      number_field("mbps", K::real, "Mbit/s from t on", &R::mbps),
  };
  return table;
}

}  // namespace coinfer
