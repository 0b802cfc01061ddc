#pragma once
// Read-only snapshot of the system that schedulers see. Built by the simulator's monitor (or the real
// runtime); plain data, copyable, serialisable. Units: seconds, Mbps.
#include <string>
#include <vector>

#include "core/strategy.hpp"

namespace coinfer {

struct DeviceState {
  std::string id, type, model, dataset, server;
  Strategy strategy;
  bool connected = true;
  bool busy = false;              // computing or holding unfinished requests
  int queue_length = 0;           // requests waiting on the device
  double link_bandwidth_mbps = 0; // latest measured/known estimate
  double link_latency_ms = 0;
};

struct ServerState {
  std::string id, type;
  int queue_length = 0;  // requests waiting to be batched or for a worker
  int busy_workers = 0;
  int workers = 0;
  double batch_window_ms = 0;
  int batch_max_size = 1;
};

struct SystemState {
  double time_s = 0;
  std::vector<DeviceState> devices;
  std::vector<ServerState> servers;

  const DeviceState* device(const std::string& id) const;
  const ServerState* server(const std::string& id) const;
};

}  // namespace coinfer
