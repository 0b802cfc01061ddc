#pragma once
// Builds the SimGrid platform of a scenario (call after the Engine exists, before any actor):
//   one star zone; every device host has its own uplink and downlink (bandwidth schedule, latency),
//   every server host a wired split-duplex link; all device traffic crosses one shared access-point
//   link (half-duplex wireless medium). Routes: device -> server = dev_up, ap, srv_down;
//   server -> device = srv_up, ap, dev_down.
// Hosts run at kFlopsPerSecond per core, so a LUT time of t seconds is an execution of t*kFlopsPerSecond.
#include <simgrid/s4u.hpp>

#include <vector>

#include "core/scenario.hpp"
#include "core/bandwidth_schedule.hpp"

namespace coinfer::sim {

constexpr double kFlopsPerSecond = 1e9;

struct Platform {
  std::vector<simgrid::s4u::Host*> device_hosts;
  std::vector<simgrid::s4u::Host*> server_hosts;
  std::vector<BandwidthSchedule> device_bandwidth;  // per device (owned here; link callbacks read it)
  std::vector<BandwidthSchedule> server_bandwidth;  // per server: its link's (servers[].link.trace, e.g. a cloud's WAN)
};

// `platform` must outlive the simulation: NONLINEAR link callbacks point into it.
void build_platform(const Scenario& s, Platform& platform);

}  // namespace coinfer::sim
