// Reference for bench/sim_speed.py: a bare SimGrid program (3.32 or >= 4.0: the spellings that differ
// come from sim/simgrid_api.hpp, header-only) with coinfer's platform shape (star
// zone, per-device up/down links, one shared access point, per-server links, energy plugin) in which
// every device loops: execute its stages, send the split bytes to its server, execute the server
// stages on the server host, receive the result. Same transfers and executions as a coinfer pp(k)
// run with in_flight 1 and no batching, with no coinfer logic (no queues, batching, records).
// usage: bare_simgrid DEVICES SERVERS DURATION_S DEVICE_S SERVER_S UP_BYTES DOWN_BYTES DEVICE_MBPS [AP_MBPS [STAGGER_S]]
// (AP_MBPS: the shared access point, default 300, 0 for none, as coinfer leaves out one that cannot bind; STAGGER_S: device k of each server starts at
// ((k mod 16) / 16) x STAGGER_S instead of all at 0, as bench/sim_speed.py --stagger gives coinfer's devices)
// prints: requests=<completed> wall_s=<engine run time>
#include <simgrid/plugins/energy.h>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;
using coinfer::sim::add_host;
using coinfer::sim::add_link;
using coinfer::sim::add_star_route;

int main(int argc, char** argv) {
  if (argc < 9 || argc > 11) {
    std::fprintf(stderr, "usage: %s DEVICES SERVERS DURATION_S DEVICE_S SERVER_S UP_BYTES DOWN_BYTES DEVICE_MBPS [AP_MBPS [STAGGER_S]]\n", argv[0]);
    return 2;
  }
  const int devices = std::atoi(argv[1]), servers = std::atoi(argv[2]);
  const double duration = std::atof(argv[3]), dev_s = std::atof(argv[4]), srv_s = std::atof(argv[5]);
  const auto up = static_cast<uint64_t>(std::atof(argv[6])), down = static_cast<uint64_t>(std::atof(argv[7]));
  const double dev_bps = std::atof(argv[8]) * 1e6 / 8;
  const double ap_bps = (argc >= 10 ? std::atof(argv[9]) : 300.0) * 1e6 / 8;
  const double stagger_s = argc >= 11 ? std::atof(argv[10]) : 0.0;
  int one = 1;
  sg4::Engine e(&one, argv);
  xbt_log_control_set("root.thresh:warning");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e12");
  sg_host_energy_plugin_init();
  auto* zone = coinfer::sim::add_star_zone("bare");
  sg4::Link* ap = ap_bps > 0 ? add_link(zone, "ap", ap_bps)->seal() : nullptr;
  std::vector<sg4::Host*> srv, dev;
  for (int s = 0; s < servers; ++s) {
    auto* h = add_host(zone, "srv" + std::to_string(s), 1e9)->set_core_count(2);
    h->set_property("wattage_per_state", "0:0");
    auto* l_up = add_link(zone, "srv" + std::to_string(s) + "_up", 125e6)->set_latency(1e-4)->seal();
    auto* l_dn = add_link(zone, "srv" + std::to_string(s) + "_down", 125e6)->set_latency(1e-4)->seal();
    add_star_route(zone, h, true, {sg4::LinkInRoute(l_up)});
    add_star_route(zone, h, false, {sg4::LinkInRoute(l_dn)});
    srv.push_back(h);
  }
  for (int d = 0; d < devices; ++d) {
    auto* h = add_host(zone, "dev" + std::to_string(d), 1e9);
    h->set_property("wattage_per_state", "2.7:6.4");
    auto* l_up = add_link(zone, "dev" + std::to_string(d) + "_up", dev_bps)->set_latency(2e-3)->seal();
    auto* l_dn = add_link(zone, "dev" + std::to_string(d) + "_down", dev_bps)->set_latency(2e-3)->seal();
    if (ap) {
      add_star_route(zone, h, true, {sg4::LinkInRoute(l_up), sg4::LinkInRoute(ap)});
      add_star_route(zone, h, false, {sg4::LinkInRoute(ap), sg4::LinkInRoute(l_dn)});
    } else {
      add_star_route(zone, h, true, {sg4::LinkInRoute(l_up)});
      add_star_route(zone, h, false, {sg4::LinkInRoute(l_dn)});
    }
    dev.push_back(h);
  }
  zone->seal();
  long long completed = 0;
  for (int d = 0; d < devices; ++d) {
    sg4::Host* me = dev[d];
    sg4::Host* server = srv[d % servers];
    const double start_s = stagger_s * static_cast<double>(d / servers % 16) / 16;
    coinfer::sim::add_actor("dev" + std::to_string(d), me, [=, &completed] {
      if (start_s > 0) sg4::this_actor::sleep_until(start_s);
      while (sg4::Engine::get_clock() < duration) {
        sg4::this_actor::execute(dev_s * 1e9);
        sg4::Comm::sendto(me, server, up);
        server->exec_async(srv_s * 1e9)->wait();
        sg4::Comm::sendto(server, me, down);
        ++completed;
      }
    });
  }
  auto t0 = std::chrono::steady_clock::now();
  e.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("requests=%lld wall_s=%.6f\n", completed, wall);
  return 0;
}
