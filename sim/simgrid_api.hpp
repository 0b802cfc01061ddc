#pragma once
// The SimGrid calls whose spelling changed between 3.32 (Debian 12) and 4.0 (Debian 13), in one place
// (sim-internal). coinfer builds against both; on >= 4.0 it uses no call that 4.0 deprecates (4.1
// removes them), which the build enforces with -Werror=deprecated-declarations on sim/ and the bare
// benchmark. Versions between 3.33 and 3.36 take the 3.32 spellings (still present, some deprecated)
// and are not tested. None of these calls advances simulated time; all must run before or outside
// Engine::run() except add_actor, which may also be called by a running actor.
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#if SIMGRID_VERSION_MAJOR >= 4
#include <simgrid/simcall.hpp>
#define COINFER_SIMGRID_4 1
#else
#include <simgrid/simix.hpp>
#define COINFER_SIMGRID_4 0
#endif

namespace coinfer::sim {

// A star zone: on 4.0 it must hang under the engine's root zone (a parentless zone has no network
// model there and the engine aborts); on 3.32 the first zone made becomes the root.
inline simgrid::s4u::NetZone* add_star_zone(const std::string& name) {
#if COINFER_SIMGRID_4
  return simgrid::s4u::Engine::get_instance()->get_netzone_root()->add_netzone_star(name);
#else
  return simgrid::s4u::create_star_zone(name);
#endif
}

inline simgrid::s4u::Host* add_host(simgrid::s4u::NetZone* zone, const std::string& name, double flops_per_s) {
#if COINFER_SIMGRID_4
  return zone->add_host(name, flops_per_s);
#else
  return zone->create_host(name, flops_per_s);
#endif
}

inline simgrid::s4u::Link* add_link(simgrid::s4u::NetZone* zone, const std::string& name, double bytes_per_s) {
#if COINFER_SIMGRID_4
  return zone->add_link(name, bytes_per_s);
#else
  return zone->create_link(name, bytes_per_s);
#endif
}

// A one-way route in a star zone: from `host` to the centre (to_centre) or from the centre to `host`.
inline void add_star_route(simgrid::s4u::NetZone* zone, simgrid::s4u::Host* host, bool to_centre,
                           const std::vector<simgrid::s4u::LinkInRoute>& links) {
#if COINFER_SIMGRID_4
  // The Host overload: it takes a null end as "the centre"; the NetPoint one asserts both ends exist.
  const simgrid::s4u::Host* centre = nullptr;
  if (to_centre)
    zone->add_route(host, centre, links, false);
  else
    zone->add_route(centre, host, links, false);
#else
  auto* np = host->get_netpoint();
  if (to_centre)
    zone->add_route(np, nullptr, nullptr, nullptr, links, false);
  else
    zone->add_route(nullptr, np, nullptr, nullptr, links, false);
#endif
}

// Starts an actor on `host` (it runs once the engine schedules it).
inline simgrid::s4u::ActorPtr add_actor(const std::string& name, simgrid::s4u::Host* host, std::function<void()> code) {
#if COINFER_SIMGRID_4
  return simgrid::s4u::Engine::get_instance()->add_actor(name, host, std::move(code));
#else
  return simgrid::s4u::Actor::create(name, host, std::move(code));
#endif
}

// Calls `cb` at the completion of every communication (finished, failed or cancelled), in kernel
// context. 3.32 has one signal for all activities (fired once per waiting side, or once when maestro
// started the comm); 4.0 has one per activity class, fired once per comm in CommImpl::finish.
inline void on_comm_completion(std::function<void(const simgrid::s4u::Activity&)> cb) {
#if COINFER_SIMGRID_4
  simgrid::s4u::Comm::on_completion_cb([cb = std::move(cb)](const simgrid::s4u::Comm& c) { cb(c); });
#else
  simgrid::s4u::Activity::on_completion_cb([cb = std::move(cb)](const simgrid::s4u::Activity& a) {
    if (dynamic_cast<const simgrid::s4u::Comm*>(&a) != nullptr) cb(a);
  });
#endif
}

// "major.minor.patch" of the SimGrid library this process runs with (may differ from the headers it
// was built with when the shared library was replaced).
inline std::string runtime_version() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

inline std::string build_version() {
  return std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) + "." + std::to_string(SIMGRID_VERSION_PATCH);
}

}  // namespace coinfer::sim
