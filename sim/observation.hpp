#pragma once
// What the scheduler monitor reads from the device and server actors to build the SystemState, and
// the one command it gives a server (its helpers). Interfaces, so that the monitor, the device
// actors and the server actors do not include each other.
#include <vector>

#include "core/batch_spec.hpp"

#include "core/strategy.hpp"

namespace coinfer::sim {

class ObservedDevice {
 public:
  virtual ~ObservedDevice() = default;
  virtual const Strategy& strategy() const = 0;  // as applied on the device now
  virtual int unfinished() const = 0;
  virtual int queued() const = 0;
  virtual bool busy() const = 0;
  virtual long long completed() const = 0;   // own requests completed since the start
  virtual double latency_sum_s() const = 0;  // the sum of their latencies (s)
};

class ObservedServer {
 public:
  virtual ~ObservedServer() = default;
  virtual int queued() const = 0;
  virtual int busy_workers() const = 0;
  // Requests on their way from it to its cloud now (pp(k,m)).
  virtual int to_cloud() const { return 0; }
  // Idle devices (scenario indices) the scheme names as this server's helpers; replaces the set.
  virtual void set_helpers(const std::vector<int>& devices) = 0;
  // The scheme's batching for this server from now on (core/server_loop.hpp set_batching).
  virtual void set_batching(const BatchSpec& spec) = 0;
  // The server fails (false) or recovers (true): core/server_failures.hpp.
  virtual void set_up(bool up) = 0;
};

}  // namespace coinfer::sim
