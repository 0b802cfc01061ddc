#include "core/scenario.hpp"

namespace coinfer {

int Scenario::server_index(const std::string& id) const {
  for (size_t i = 0; i < servers.size(); ++i)
    if (servers[i].id == id) return static_cast<int>(i);
  return -1;
}

int Scenario::device_index(const std::string& id) const {
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].id == id) return static_cast<int>(i);
  return -1;
}

int default_in_flight(const Strategy& s) {
  return (s.kind == Strategy::Kind::pp || s.kind == Strategy::Kind::data_parallel) ? 2 : 1;
}

bool scenario_uses_seed(const Scenario& s, bool luts_have_distributions) {
  if (s.service_time == Scenario::ServiceTime::sampled && luts_have_distributions) return true;
  for (const auto& d : s.devices)
    if (d.workload.arrival == WorkloadSpec::Arrival::poisson) return true;
  return false;
}

double one_way_latency_s(const Scenario& s, size_t device) {
  const DeviceSpec& d = s.devices.at(device);
  const int j = s.server_index(d.server);
  const double server_ms = j >= 0 ? s.servers[static_cast<size_t>(j)].link.latency_ms : 0;
  return (d.link.latency_ms + s.access_point.latency_ms + server_ms) * 1e-3;
}

}  // namespace coinfer
