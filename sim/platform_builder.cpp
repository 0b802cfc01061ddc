#include "sim/platform_builder.hpp"

#include <simgrid/kernel/ProfileBuilder.hpp>

#include <charconv>
#include <stdexcept>
#include <string>

#include "core/text_util.hpp"
#include "core/units.hpp"
#include "sim/simgrid_api.hpp"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::profile::ProfileBuilder;

namespace coinfer::sim {

namespace {

double bytes_per_s(double mbps) { return mbps_to_bytes_per_s(mbps); }

// A link whose bandwidth follows a schedule. SimGrid caps an in-flight transfer at the bandwidth it
// saw when it started (notes: pitfall 2), so a rising bandwidth would not speed it up. Instead the link
// is declared at the schedule's peak with a NONLINEAR sharing callback returning the scheduled value,
// and a constant profile at the change points forces the solver to re-evaluate there.
sg4::Link* scheduled_link(sg4::NetZone* zone, const std::string& name, const BandwidthSchedule* sched, double latency_s) {
  sg4::Link* l = add_link(zone, name, bytes_per_s(sched->peak_mbps()))->set_latency(latency_s);
  if (sched->constant()) return l;
  l->set_sharing_policy(sg4::Link::SharingPolicy::NONLINEAR,
                        [sched](double /*capacity*/, int /*flows*/) { return sched->bytes_per_s_at(sg4::Engine::get_clock()); });
  // The profile's text, numbers in their shortest exact form (std::to_chars: one call a number; a
  // moving device's schedule has a point every mobility.step_s, and format_double's search for the
  // shortest form took 5.6 s of printf for 1,000 such devices).
  std::string trigger;
  char peak_text[32];
  const double peak = bytes_per_s(sched->peak_mbps());
  const char* peak_end = std::to_chars(peak_text, peak_text + sizeof peak_text, peak).ptr;
  for (const auto& p : sched->points()) {
    char t[32];
    trigger.append(t, static_cast<size_t>(std::to_chars(t, t + sizeof t, p.t_s).ptr - t));
    trigger += ' ';
    trigger.append(peak_text, static_cast<size_t>(peak_end - peak_text));
    trigger += '\n';
  }
  l->set_bandwidth_profile(ProfileBuilder::from_string(name + "_changes", trigger, -1));
  return l;
}

}  // namespace

bool access_point_can_bind(const AccessPointSpec& ap, const std::vector<BandwidthSchedule>& device_bandwidth) {
  if (ap.latency_ms != 0) return true;
  // Every flow that crosses the access point crosses a device's link as well (once per crossing: a
  // device-to-device route crosses it twice and two device links), and with SimGrid's cross-traffic a
  // flow's 5 % back on the reverse route loads a device link as it loads the access point. So the access
  // point carries at most what the device links carry, which is at most the sum of their peaks, up and
  // down. Summed in Mbit/s, compared before any conversion.
  double sum_mbps = 0;
  for (const auto& b : device_bandwidth) sum_mbps += 2 * b.peak_mbps();
  return ap.bandwidth_mbps < sum_mbps;
}

void build_platform(const Scenario& s, Platform& p, bool device_links) {
  p.device_bandwidth.clear();
  for (const auto& d : s.devices) p.device_bandwidth.emplace_back(d, s.events);
  p.server_bandwidth.clear();
  for (const auto& sv : s.servers) p.server_bandwidth.push_back(server_link_schedule(sv));  // built whole before any link points into it
  auto* zone = add_star_zone("coinfer");
  p.access_point_in_routes = access_point_can_bind(s.access_point, p.device_bandwidth);
  p.device_links = device_links;
  sg4::Link* ap = nullptr;
  if (p.access_point_in_routes && device_links) {
    ap = add_link(zone, "access_point", bytes_per_s(s.access_point.bandwidth_mbps))->set_latency(s.access_point.latency_ms * 1e-3);
    ap->seal();
  }
  for (size_t j = 0; j < s.servers.size(); ++j) {
    const ServerSpec& sv = s.servers[j];
    const int cores = sv.cores > 0 ? sv.cores : sv.workers;
    sg4::Host* h = add_host(zone, sv.id, kFlopsPerSecond)->set_core_count(cores);
    sg4::Link* up = scheduled_link(zone, sv.id + "_up", &p.server_bandwidth[j], sv.link.latency_ms * 1e-3);
    sg4::Link* down = scheduled_link(zone, sv.id + "_down", &p.server_bandwidth[j], sv.link.latency_ms * 1e-3);
    up->seal();
    down->seal();
    add_star_route(zone, h, true, {sg4::LinkInRoute(up)});
    add_star_route(zone, h, false, {sg4::LinkInRoute(down)});
    p.server_hosts.push_back(h);
  }
  for (size_t i = 0; i < s.devices.size(); ++i) {
    if (!device_links) break;  // coinfer carries its transfers (sim/device_transfers.hpp)
    const DeviceSpec& d = s.devices[i];
    sg4::Host* h = add_host(zone, d.id, kFlopsPerSecond);
    p.device_hosts.push_back(h);
    const double lat = d.link.latency_ms * 1e-3;
    sg4::Link* up = scheduled_link(zone, d.id + "_up", &p.device_bandwidth[i], lat);
    sg4::Link* down = scheduled_link(zone, d.id + "_down", &p.device_bandwidth[i], lat);
    up->seal();
    down->seal();
    if (ap) {
      add_star_route(zone, h, true, {sg4::LinkInRoute(up), sg4::LinkInRoute(ap)});
      add_star_route(zone, h, false, {sg4::LinkInRoute(ap), sg4::LinkInRoute(down)});
    } else {
      add_star_route(zone, h, true, {sg4::LinkInRoute(up)});
      add_star_route(zone, h, false, {sg4::LinkInRoute(down)});
    }
  }
  zone->seal();
}

sg4::Host* host_of(const Platform& p, Endpoint e) {
  const std::vector<sg4::Host*>& hosts = e.server ? p.server_hosts : p.device_hosts;
  if (e.index < 0 || static_cast<size_t>(e.index) >= hosts.size())
    throw std::logic_error(std::string("host_of: no SimGrid host for ") + (e.server ? "server " : "device ") + std::to_string(e.index) +
                           (e.server || p.device_links ? "" : " (coinfer carries the devices' transfers: devices have no hosts)"));
  return hosts[static_cast<size_t>(e.index)];
}

FlowLinks add_flow_links(const Scenario& s, const Platform& p, FlowShares& shares) {
  FlowLinks f;
  if (p.access_point_in_routes) f.access_point = shares.add_link(bytes_per_s(s.access_point.bandwidth_mbps), s.access_point.latency_ms * 1e-3);
  for (size_t j = 0; j < s.servers.size(); ++j) {
    const BandwidthSchedule* b = &p.server_bandwidth[j];
    const double lat = s.servers[j].link.latency_ms * 1e-3;
    f.server_up.push_back(shares.add_link(bytes_per_s(b->peak_mbps()), lat, b));
    f.server_down.push_back(shares.add_link(bytes_per_s(b->peak_mbps()), lat, b));
  }
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const BandwidthSchedule* b = &p.device_bandwidth[i];
    const double lat = s.devices[i].link.latency_ms * 1e-3;
    f.device_up.push_back(shares.add_link(bytes_per_s(b->peak_mbps()), lat, b));
    f.device_down.push_back(shares.add_link(bytes_per_s(b->peak_mbps()), lat, b));
  }
  return f;
}

int flow_route(const FlowLinks& f, Endpoint from, Endpoint to, FlowShares::Link* route) {
  int n = 0;
  route[n++] = from.server ? f.server_up[static_cast<size_t>(from.index)] : f.device_up[static_cast<size_t>(from.index)];
  // SimGrid's star routes: a device's leg to the centre crosses the access point, a server's does not.
  if (f.access_point >= 0 && !from.server) route[n++] = f.access_point;
  if (f.access_point >= 0 && !to.server) route[n++] = f.access_point;
  route[n++] = to.server ? f.server_down[static_cast<size_t>(to.index)] : f.device_down[static_cast<size_t>(to.index)];
  return n;
}

}  // namespace coinfer::sim
