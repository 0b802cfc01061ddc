#include "core/scenario.hpp"

#include <array>
#include <unordered_map>

namespace coinfer {

namespace {

// Position of an element with `id` in `v` (ids unique: the element), or -1. Lists longer than a few dozen
// are looked up through a per-thread index of the last few lists asked about (a 100,000-device scenario
// asks for its devices' servers 10^5 times per pass; a linear search over 1,000 servers each time cost
// seconds). A hit is checked against the list itself, and an id not found in the index is searched for
// linearly (and the index rebuilt), so a list changed since the index was built is never answered wrongly.
template <class T>
int find_by_id(const std::vector<T>& v, const std::string& id) {
  auto linear = [&] {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].id == id) return static_cast<int>(i);
    return -1;
  };
  if (v.size() < 32) return linear();
  struct Index {
    const T* data = nullptr;
    size_t size = 0;
    std::unordered_map<std::string, int> at;
  };
  thread_local std::array<Index, 4> indexes;
  thread_local size_t next = 0;
  for (Index& x : indexes) {
    if (x.data != v.data() || x.size != v.size()) continue;
    auto it = x.at.find(id);
    if (it != x.at.end() && it->second < static_cast<int>(v.size()) && v[static_cast<size_t>(it->second)].id == id) return it->second;
    const int i = linear();
    if (i >= 0)
      x.data = nullptr;  // stale: rebuilt below
    else
      return -1;
    break;
  }
  Index& x = indexes[next++ % indexes.size()];
  x.data = v.data();
  x.size = v.size();
  x.at.clear();
  for (size_t i = 0; i < v.size(); ++i) x.at.emplace(v[i].id, static_cast<int>(i));
  auto it = x.at.find(id);
  return it == x.at.end() ? -1 : it->second;
}

}  // namespace

namespace {
const std::string kNone;
}  // namespace

const std::string& EventSpec::device() const {
  return std::visit(Overloaded{[](const event::ServerFail&) -> const std::string& { return kNone; },
                               [](const event::ServerRecover&) -> const std::string& { return kNone; },
                               [](const auto& k) -> const std::string& { return k.device; }},
                    what);
}

const std::string& EventSpec::server() const {
  if (const auto* f = as<event::ServerFail>()) return f->server;
  if (const auto* r = as<event::ServerRecover>()) return r->server;
  return kNone;
}

const char* EventSpec::kind_name() const {
  return std::visit(Overloaded{[](const event::Bandwidth&) { return "bandwidth"; }, [](const event::Leave&) { return "leave"; },
                               [](const event::Join&) { return "join"; }, [](const event::Load&) { return "load"; },
                               [](const event::ServerFail&) { return "fail"; }, [](const event::ServerRecover&) { return "recover"; },
                               [](const event::Handover&) { return "handover"; }},
                    what);
}

int Scenario::server_index(const std::string& id) const { return find_by_id(servers, id); }

int Scenario::device_index(const std::string& id) const { return find_by_id(devices, id); }

int default_in_flight(const Strategy& s) {
  // local placed on several processors pipelines across them as pp does with the server
  const bool spread = s.kind == Strategy::Kind::local && s.placement.processors().size() > 1;
  return (s.kind == Strategy::Kind::pp || s.kind == Strategy::Kind::data_parallel || spread) ? 2 : 1;
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
