#pragma once
// Builds the SimGrid platform of a scenario (call after the Engine exists, before any actor):
//   one star zone; every device host has its own uplink and downlink (bandwidth schedule, latency)
//   (no device hosts where coinfer carries the devices' transfers: device_links below),
//   every server host a wired split-duplex link; all device traffic crosses one shared access-point
//   link (half-duplex wireless medium). Routes: device -> server = dev_up, ap, srv_down;
//   server -> device = srv_up, ap, dev_down.
//   An access point that can never bind (access_point_can_bind: false) is left out of the routes: the
//   shares SimGrid's solver gives are the same without it, and without it the devices' flows no longer
//   form one system of the solver (10,000 devices: +57 % engine rate, bench/RESULTS.md "Sixth pass").
// Hosts run at kFlopsPerSecond per core, so a LUT time of t seconds is an execution of t*kFlopsPerSecond.
#include <simgrid/s4u.hpp>

#include <vector>

#include "core/scenario.hpp"
#include "core/bandwidth_schedule.hpp"
#include "sim/flow_shares.hpp"

namespace coinfer::sim {

constexpr double kFlopsPerSecond = 1e9;

// One end of a transfer: a server or a device (scenario index).
struct Endpoint {
  bool server = false;
  int index = 0;
};

struct Platform {
  std::vector<simgrid::s4u::Host*> device_hosts;  // empty when device_links is false (below)
  std::vector<simgrid::s4u::Host*> server_hosts;
  std::vector<BandwidthSchedule> device_bandwidth;  // per device (owned here; link callbacks read it)
  std::vector<BandwidthSchedule> server_bandwidth;  // per server: its link's (servers[].link.trace, e.g. a cloud's WAN)
  bool access_point_in_routes = true;               // false: it could never bind and was left out
  bool device_links = true;                         // false: devices have no hosts, links or routes (below)
};

// The host of `e` (SimGrid carries the transfer); an internal error where devices have no hosts.
simgrid::s4u::Host* host_of(const Platform& platform, Endpoint e);

// Whether the shared access point can ever be a bottleneck: it has a latency of its own (kept, in the
// routes), or its capacity is below the sum of every device link's peak rate, up and down, over the
// whole run (`device_bandwidth`: one schedule per device, link and events). Below that sum some moment
// could load it past its capacity; at or above it no moment can.
bool access_point_can_bind(const AccessPointSpec& ap, const std::vector<BandwidthSchedule>& device_bandwidth);

// `platform` must outlive the simulation: NONLINEAR link callbacks point into it. device_links false:
// the devices are no SimGrid hosts, and there is no access point: coinfer's FlowShares carries every
// transfer they take part in (sim/device_transfers.hpp), and a device computes by kernel timers, so a
// device costs SimGrid nothing (a host with its CPU, net point and solver constraint: ~1.2 KB each,
// bench/RESULTS.md "Tenth pass").
void build_platform(const Scenario& s, Platform& platform, bool device_links = true);

// The same links in coinfer's own transfer model (sim/flow_shares.hpp), built from the same platform:
// each device's and each server's up and down link (same peak, latency and bandwidth schedule), and the
// access point where it is in the routes. A transfer from A to B crosses A's up link, the access point
// (between two devices, or a device and a server), and B's down link: SimGrid's routes above.
struct FlowLinks {
  std::vector<FlowShares::Link> device_up, device_down, server_up, server_down;
  FlowShares::Link access_point = -1;
};
FlowLinks add_flow_links(const Scenario& s, const Platform& platform, FlowShares& shares);
// Writes the route from `from` to `to` into `route` (FlowShares::kMaxRoute entries); returns its length.
int flow_route(const FlowLinks& links, Endpoint from, Endpoint to, FlowShares::Link* route);

}  // namespace coinfer::sim
