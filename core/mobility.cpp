#include "core/mobility.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/limits.hpp"
#include "core/random_stream.hpp"
#include "core/scenario.hpp"
#include "core/text_util.hpp"
#include "core/enum_names.hpp"

namespace coinfer {

namespace {
double uniform(RandomStream& r, double lo, double hi) { return hi > lo ? lo + (hi - lo) * r.next_unit() : lo; }
}  // namespace

std::vector<WaypointLeg> random_waypoint_legs(const MovementSpec& m, std::uint64_t seed, std::uint64_t device_index, double until_s,
                                              std::size_t max_legs_hint) {
  std::vector<WaypointLeg> legs;
  RandomStream r(seed, StreamPurpose::mobility, device_index);
  double x = uniform(r, 0, m.area_w_m), y = uniform(r, 0, m.area_h_m), t = 0;
  // At most max_legs legs (expand_mobility: four per position sample): an area of millimetres walked at
  // 1000 m/s without pauses would otherwise need millions of legs a device; past them it stays put.
  const size_t max_legs = std::min<size_t>(limits::kMaxTraceRows, max_legs_hint);
  while (t < until_s && legs.size() < max_legs) {
    const double x1 = uniform(r, 0, m.area_w_m), y1 = uniform(r, 0, m.area_h_m);
    const double speed = uniform(r, m.speed_min_mps, m.speed_max_mps);
    const double walk = std::hypot(x1 - x, y1 - y) / speed;
    legs.push_back({t, t + walk, x, y, x1, y1});
    t += walk + uniform(r, m.pause_min_s, m.pause_max_s);
    x = x1;
    y = y1;
  }
  return legs;
}

PositionPoint position_at(const MovementSpec& m, const std::vector<WaypointLeg>& legs, double t) {
  switch (m.kind) {
    case MovementSpec::Kind::none:
    case MovementSpec::Kind::fixed:
      return {t, m.x_m, m.y_m};
    case MovementSpec::Kind::trace: {
      const auto& p = m.trace;
      if (p.empty()) return {t, 0, 0};
      if (t <= p.front().t_s) return {t, p.front().x_m, p.front().y_m};
      if (t >= p.back().t_s) return {t, p.back().x_m, p.back().y_m};
      const auto hi = std::upper_bound(p.begin(), p.end(), t, [](double v, const PositionPoint& q) { return v < q.t_s; });
      const PositionPoint& b = *hi;
      const PositionPoint& a = *(hi - 1);
      const double f = b.t_s > a.t_s ? (t - a.t_s) / (b.t_s - a.t_s) : 1;
      return {t, a.x_m + f * (b.x_m - a.x_m), a.y_m + f * (b.y_m - a.y_m)};
    }
    case MovementSpec::Kind::random_waypoint: {
      if (legs.empty()) return {t, 0, 0};
      auto it = std::upper_bound(legs.begin(), legs.end(), t, [](double v, const WaypointLeg& l) { return v < l.t0_s; });
      const WaypointLeg& l = it == legs.begin() ? legs.front() : *(it - 1);
      if (t >= l.t1_s) return {t, l.x1, l.y1};  // paused at its destination
      const double f = l.t1_s > l.t0_s ? (t - l.t0_s) / (l.t1_s - l.t0_s) : 1;
      return {t, l.x0 + f * (l.x1 - l.x0), l.y0 + f * (l.y1 - l.y0)};
    }
  }
  return {t, 0, 0};
}

double link_rate_mbps(const RadioModel& r, double tx_dbm, double d_m, double cap_mbps) {
  const double path_loss_db = r.path_loss_db_at_1m + 10 * r.exponent * std::log10(std::max(d_m, 1.0));
  const double snr_db = tx_dbm - path_loss_db - r.noise_dbm;
  const double rate = r.efficiency * r.bandwidth_mhz * std::log2(1 + std::pow(10, snr_db / 10));  // MHz x bit/s/Hz = Mbit/s
  return std::max(kNoLinkMbps, std::min(cap_mbps, rate));
}

namespace {
double tx_of(const MobilitySpec& s, const AccessPointPlace& a) { return a.tx_power_dbm != 0 ? a.tx_power_dbm : s.radio.tx_power_dbm; }
}  // namespace

namespace {
double path_loss_db(const RadioModel& r, double d_m) { return r.path_loss_db_at_1m + 10 * r.exponent * std::log10(std::max(d_m, 1.0)); }
// How good access point k is for a device at (x, y), in dB: its received power (strongest) or minus
// the path loss to it (nearest: the same order as minus the distance). -infinity: out of its range.
double signal_db(const MobilitySpec& s, size_t k, double x, double y) {
  const AccessPointPlace& a = s.access_points[k];
  const double d = std::hypot(x - a.x_m, y - a.y_m);
  if (d > a.range_m) return -std::numeric_limits<double>::infinity();
  return (s.association == MobilitySpec::Association::strongest ? tx_of(s, a) : 0.0) - path_loss_db(s.radio, d);
}
}  // namespace

int associate(const MobilitySpec& s, double x, double y) {
  int best = -1;
  double best_key = -std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < s.access_points.size(); ++k) {
    const AccessPointPlace& a = s.access_points[k];
    const double d = std::hypot(x - a.x_m, y - a.y_m);
    if (d > a.range_m) continue;
    const double key = s.association == MobilitySpec::Association::nearest ? -d : tx_of(s, a) - path_loss_db(s.radio, d);
    if (key > best_key) {  // ties: the first listed
      best_key = key;
      best = static_cast<int>(k);
    }
  }
  return best;
}

int associate_from(const MobilitySpec& s, double x, double y, int current) {
  const int best = associate(s, x, y);
  if (s.hysteresis_db <= 0 || current < 0 || best < 0 || best == current) return best;
  const double now_db = signal_db(s, static_cast<size_t>(current), x, y);
  if (!std::isfinite(now_db)) return best;  // out of its range: no choice
  return signal_db(s, static_cast<size_t>(best), x, y) > now_db + s.hysteresis_db ? best : current;
}

void expand_mobility(Scenario& s) {
  const MobilitySpec& m = s.mobility;
  if (m.access_points.empty()) return;
  for (size_t k = 0; k < m.access_points.size(); ++k) {  // access points tied to servers
    const AccessPointPlace& a = m.access_points[k];
    if (a.server.empty()) continue;
    const std::string key = "mobility.access_points[" + std::to_string(k) + "].server";
    if (s.server_index(a.server) < 0) throw InputError(a.where, key, "unknown server '" + a.server + "'");
    if (s.scheduler.choose_servers)
      throw InputError(a.where, key,
                       "a device behind this access point is served by its server, and scheduler.choose_servers lets the scheduler "
                       "choose: one or the other");
  }
  const double end_s = s.hard_end_s();
  const double steps = std::ceil(end_s / m.step_s) + 1;
  for (size_t i = 0; i < s.devices.size(); ++i) {
    DeviceSpec& d = s.devices[i];
    if (d.movement.kind == MovementSpec::Kind::none) continue;
    if (!d.link.trace.empty())
      throw InputError(d.movement.where, "devices (id " + d.id + ").movement",
                       "a moving device's link rate comes from its positions; it cannot also have link.trace (" + d.link.trace_file + ")");
    for (const EventSpec& e : s.events)
      if (e.of_device<event::Bandwidth>(d.id))
        throw InputError(e.where, "events",
                         "device " + d.id + " moves (devices[].movement): its link rate comes from its positions, not bandwidth events");
    if (steps * static_cast<double>(s.devices.size()) > static_cast<double>(limits::kMaxTraceRows) * 10)
      throw InputError(m.where, "mobility.step_s",
                       format_double(steps) + " steps a device over " + format_double(end_s) + " s x " + std::to_string(s.devices.size()) +
                           " devices is more than " + std::to_string(limits::kMaxTraceRows * 10) + " samples; raise step_s");
    const std::vector<WaypointLeg> legs =
        d.movement.kind == MovementSpec::Kind::random_waypoint
            ? random_waypoint_legs(d.movement, s.seed, static_cast<std::uint64_t>(i), end_s, 4 * static_cast<std::size_t>(steps) + 16)
            : std::vector<WaypointLeg>{};
    const double cap = d.link.bandwidth_mbps;
    std::vector<BandwidthPoint> rate;
    int ap = -2;               // the access point at the previous step (-2: before the first)
    double outage_until = -1;  // a handover's end
    for (double k = 0; k < steps; ++k) {
      const double t = std::round(k * m.step_s * 1e9) / 1e9;  // 10.2 s, not 10.200000000000001 s (ns resolution)
      if (t > end_s) break;
      const PositionPoint p = position_at(d.movement, legs, t);
      const int now = associate_from(m, p.x_m, p.y_m, ap);
      // Its first access point's server serves it from the start (one tied to a server).
      if (ap == -2 && now >= 0 && !m.access_points[static_cast<size_t>(now)].server.empty())
        d.server = m.access_points[static_cast<size_t>(now)].server;
      if (ap >= 0 && now >= 0 && now != ap) {  // a handover: the link carries nothing for handover_ms
        EventSpec e;
        e.at_s = t;
        e.what = event::Handover{d.id, m.access_points[static_cast<size_t>(now)].id, m.access_points[static_cast<size_t>(ap)].id};
        e.where = d.movement.where;
        s.events.push_back(e);
        outage_until = t + m.handover_ms * 1e-3;
      }
      if (now >= 0) ap = now;
      double mbps = kNoLinkMbps;
      if (now >= 0) {
        const AccessPointPlace& a = m.access_points[static_cast<size_t>(now)];
        mbps = link_rate_mbps(m.radio, tx_of(m, a), std::hypot(p.x_m - a.x_m, p.y_m - a.y_m), cap);
      }
      if (t < outage_until) {
        if (rate.empty() || rate.back().mbps != kNoLinkMbps) rate.push_back({t, kNoLinkMbps});
        if (outage_until < t + m.step_s) rate.push_back({outage_until, mbps});  // back before the next step
        continue;
      }
      if (rate.empty() || rate.back().mbps != mbps) rate.push_back({t, mbps});
    }
    d.link.trace = std::move(rate);
    d.link.trace_file = "";  // from its movement (the resolved scenario says how)
  }
  if (s.events.size() > limits::kMaxEvents)
    throw InputError(m.where, "mobility",
                     std::to_string(s.events.size()) + " events with the handovers; at most " + std::to_string(limits::kMaxEvents));
  std::stable_sort(s.events.begin(), s.events.end(), [](const EventSpec& a, const EventSpec& b) { return a.at_s < b.at_s; });
}

namespace {
using MidTransfer = MobilitySpec::MidTransfer;
constexpr auto kMidTransferNames = enum_names<MidTransfer>({"wait", "resend", "fail"});
static_assert(kMidTransferNames.names_each_of(MidTransfer::wait, MidTransfer::fail));
}  // namespace

const char* mid_transfer_name(MobilitySpec::MidTransfer m) { return kMidTransferNames.name(m, "wait"); }

std::vector<DeviceHandover> handovers_of(const Scenario& s, const std::string& device_id) {
  std::vector<DeviceHandover> out;
  for (const EventSpec& e : s.events)  // in time order (expand_mobility sorts them)
    if (const auto* h = e.of_device<event::Handover>(device_id))
      out.push_back(DeviceHandover{e.at_s, e.at_s + s.mobility.handover_ms * 1e-3, h->from_access_point, h->access_point});
  return out;
}

const DeviceHandover* handover_catching(const std::vector<DeviceHandover>& handovers, double start_s, double end_s) {
  for (const DeviceHandover& h : handovers) {
    if (h.at_s >= end_s) break;  // in time order: none later can catch it
    if (h.at_s >= start_s) return &h;
  }
  return nullptr;
}

std::string handover_failure(const DeviceHandover& h, bool upload) {
  return "handover from " + h.from_access_point + " to " + h.access_point + " at " + format_double(h.at_s) + " s during its " +
         (upload ? "upload" : "result's transfer") + " (mobility.mid_transfer: fail)";
}

bool is_handover_failure(const std::string& failure) {
  static const std::string tail = "(mobility.mid_transfer: fail)";
  return failure.rfind("handover from ", 0) == 0 && failure.size() >= tail.size() &&
         failure.compare(failure.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace coinfer
