#pragma once
// Mobility: access points with positions and coverage, devices whose position
// changes over time (a trace, or the random-waypoint model), association to an access point, link
// rate as a function of distance, and handovers. Expanded when the scenario is loaded
// (expand_mobility) into what both engines already carry out: each moving device's link rate over
// time (DeviceSpec::link.trace points) and one `handover` event per change of access point, which
// triggers the scheduler (Trigger handover) and is recorded in results.h5's /events.
//
// The rules (scenarios/README.md "Mobility", sim/README.md "Mobility"):
//   position   trace: CSV `t_s,x_m,y_m`, linear between rows, the first row before it, the last after;
//              random_waypoint: a uniform start in the area, then repeatedly a uniform destination,
//              a uniform speed in [min, max] m/s, a straight walk, a uniform pause in [min, max] s
//              (Broch et al., MobiCom 1998); its draws come from RandomStream(seed, mobility, device
//              index); at most four legs per position sample (then it stays put: bounded work for
//              a tiny area walked fast); fixed: x_m, y_m.
//   association every step_s: among the access points whose range covers the device, `nearest`
//              (least distance) or `strongest` (highest received power: the access point's transmit
//              power minus the path loss); ties go to the one listed first; none covers it: no link.
//              With hysteresis_db > 0 a device keeps its access point while it is in range unless
//              another is better by more than hysteresis_db (associate_from: no ping-pong at a cell edge).
//   rate       log-distance path loss PL(d) = PL(1 m) + 10 n log10(max(d, 1 m) / 1 m) dB (Rappaport,
//              Wireless Communications, 2nd ed., Sec. 4.9); SNR = P_tx - PL(d) - noise (dB); rate =
//              efficiency x bandwidth x log2(1 + SNR) (Shannon's capacity scaled by the share a real
//              modulation and coding reach), capped by the device's link.bandwidth_mbps. Without
//              coverage, and for handover_ms after each handover, the link carries kNoLinkMbps.
//   handover   the associated access point changes (also across a gap without coverage; coverage lost
//              and regained at the same access point is none).
//   mid_transfer what happens to a request's transfer on the device's link when a handover starts
//              (mobility.mid_transfer): `wait` (default): it waits through the handover and then goes
//              on (the connection survives a layer-2 handover); `resend`: the bytes sent so far are
//              lost and the transfer starts again from its first byte when the handover ends (the
//              request's record counts it: RequestRecord::resends); `fail`: the request fails at the
//              handover, handover_failure() saying why. An upload and a result coming back follow the
//              rule; scheduling messages and forwarded batches wait through it. The simulator carries
//              out all three. The real runtime decides where the transfer arrives (handover_catching:
//              a byte written to a TCP stream cannot be taken back), so under `resend` the rest of the
//              first copy still crosses the link before the second (hw/README.md).
// Engine-free; does not advance simulated time.
#include <cstdint>
#include <string>
#include <vector>

#include "core/input_error.hpp"

namespace coinfer {

struct Scenario;

// What the link carries without an access point (Mbit/s): a link cannot have zero bandwidth in the
// simulator; 1 kbit/s moves a 12 KB upload in ~100 s, i.e. it waits for coverage.
constexpr double kNoLinkMbps = 0.001;

struct RadioModel {
  double bandwidth_mhz = 20;       // channel width
  double tx_power_dbm = 20;        // an access point's transmit power unless it states its own
  double noise_dbm = -90;          // noise floor over the channel
  double path_loss_db_at_1m = 40;  // PL(1 m): 40 dB is free space at 2.4 GHz
  double exponent = 3;             // n: 2 free space, 2.7-3.5 urban, 4-6 indoors with obstructions (Rappaport Table 4.2)
  double efficiency = 0.5;         // share of Shannon's capacity reached
};

struct AccessPointPlace {
  std::string id;
  double x_m = 0, y_m = 0, range_m = 100;
  double tx_power_dbm = 0;  // 0: the radio model's
  // The edge server behind this access point (scenario id; empty: none): a device associated with it
  // is served there — from the start and from each handover to it on (its devices[].server then
  // names its first access point's server; sched/rescheduler.hpp moves it at each handover).
  std::string server;
  SourceLocation where;
};

struct MobilitySpec {
  std::vector<AccessPointPlace> access_points;  // empty: no mobility in the scenario
  enum class Association { nearest, strongest };
  Association association = Association::nearest;
  double handover_ms = 50;
  // A device stays with its access point, while that one covers it, unless another is better by more
  // than this (dB of received power for strongest, of path loss for nearest); 0: always the best.
  double hysteresis_db = 0;
  enum class MidTransfer { wait, resend, fail };
  MidTransfer mid_transfer = MidTransfer::wait;
  double step_s = 0.1;  // positions and association are evaluated every step_s
  RadioModel radio;
  SourceLocation where;
};

struct PositionPoint {
  double t_s = 0, x_m = 0, y_m = 0;
};

// How one device moves (DeviceSpec::movement).
struct MovementSpec {
  enum class Kind { none, fixed, trace, random_waypoint };
  Kind kind = Kind::none;
  double x_m = 0, y_m = 0;            // fixed
  std::string trace_file;             // trace: CSV t_s,x_m,y_m (traces/README.md "Mobility traces")
  std::vector<PositionPoint> trace;   // loaded
  double area_w_m = 0, area_h_m = 0;  // random_waypoint: [0, w] x [0, h]
  double speed_min_mps = 1, speed_max_mps = 1;
  double pause_min_s = 0, pause_max_s = 0;
  SourceLocation where;
};

// Where a device is at t_s under `m` (random_waypoint: its precomputed legs, `legs`, from
// random_waypoint_legs). Pure.
struct WaypointLeg {
  double t0_s, t1_s;  // walking from (x0, y0) at t0 to (x1, y1) at t1, then paused until the next leg's t0
  double x0, y0, x1, y1;
};
// At most max_legs_hint legs (and at most limits::kMaxTraceRows); past the last it stays at its destination.
std::vector<WaypointLeg> random_waypoint_legs(const MovementSpec& m, std::uint64_t seed, std::uint64_t device_index, double until_s,
                                              std::size_t max_legs_hint = static_cast<std::size_t>(-1));
PositionPoint position_at(const MovementSpec& m, const std::vector<WaypointLeg>& legs, double t_s);

// The link rate (Mbit/s) at distance d_m from an access point transmitting at tx_dbm, capped at cap_mbps.
double link_rate_mbps(const RadioModel& r, double tx_dbm, double d_m, double cap_mbps);

// The access point (index) a device at (x, y) associates with, -1 when none covers it.
int associate(const MobilitySpec& s, double x_m, double y_m);
// The same for a device associated with `current` (-1: none): with hysteresis_db > 0 it keeps `current`
// while that covers it and no other is better by more than hysteresis_db (strongest: received power;
// nearest: path loss, i.e. nearer by a factor 10^(hysteresis_db / (10 exponent))).
int associate_from(const MobilitySpec& s, double x_m, double y_m, int current);

const char* mid_transfer_name(MobilitySpec::MidTransfer m);  // "wait", "resend", "fail"

// One handover of one device, as its engine carries it out: it starts at at_s (the link carries
// kNoLinkMbps from then) and ends at ends_s = at_s + handover_ms.
struct DeviceHandover {
  double at_s = 0, ends_s = 0;
  std::string from_access_point, access_point;
};
// The handovers of the scenario's device `device_id` (its handover events after expand_mobility), in time order.
std::vector<DeviceHandover> handovers_of(const Scenario& s, const std::string& device_id);

// The first of `handovers` (time order) that catches a transfer on the link over [start_s, end_s): one
// starting at or after its first byte left and before its last arrived (start_s <= at_s < end_s); null
// when none does. The real runtime decides this where a transfer ends, from the sender's time stamp
// (hw/README.md "Handovers mid-transfer"); the simulator cancels the transfer when the handover starts.
const DeviceHandover* handover_catching(const std::vector<DeviceHandover>& handovers, double start_s, double end_s);

// Why a request failed at a handover under mid_transfer: fail (`upload`: its upload was on the link;
// else its result coming back): "handover from p to q at 0.6 s during its upload (mobility.mid_transfer: fail)".
std::string handover_failure(const DeviceHandover& h, bool upload);
bool is_handover_failure(const std::string& failure);  // a failure handover_failure() wrote

// Replaces each moving device's link schedule by the rate its positions give, and adds a handover
// event per change of access point; nothing when the scenario has no access points. InputError where a
// moving device also has a bandwidth trace or bandwidth events (one source of its rate), or where the
// samples would exceed the bounds (duration / step_s per device).
void expand_mobility(Scenario& s);

}  // namespace coinfer
