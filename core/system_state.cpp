#include "core/system_state.hpp"

namespace coinfer {

const DeviceState* SystemState::device(const std::string& id) const {
  for (const auto& d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

const ServerState* SystemState::server(const std::string& id) const {
  for (const auto& s : servers)
    if (s.id == id) return &s;
  return nullptr;
}

}  // namespace coinfer
