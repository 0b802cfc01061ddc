#pragma once
// The real device runtime's common ground (hw/device_runtime.cpp and its rooms): the scenario and
// options as fixed at construction, the device's model, link and journal, its clock and log, and the
// process's one lock. The rooms, each a class that owns its state:
//   DeviceWork       (hw/device_work.hpp)        the device loop's threads: arrivals, compute, uploads, helping
//   DeviceServerLink (hw/device_server_link.hpp) its server: registration, moves, the readers, results
// Locking rule (hw/runtime_lock.hpp): one mutex guards both rooms' state; a room's state is reachable
// only through its methods, and those that read or write it take a `const DeviceLock::Held&`. What a
// reader alone uses (the results a handover caught, the clock estimate) has its own lock in its room.
// Torch stays in the .cpp files (the model runner is only named here).
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/lut.hpp"
#include "core/mobility.hpp"
#include "core/model_spec.hpp"
#include "core/scenario.hpp"
#include "core/server_failures.hpp"
#include "hw/device_runtime.hpp"
#include "hw/record_journal.hpp"
#include "hw/runtime_lock.hpp"
#include "io/model_spec_loader.hpp"

namespace coinfer::models {
class DeviceModelRunner;
}

namespace coinfer::hw {

using DeviceLock = RuntimeLock;

struct DeviceContext {
  // Fixed at construction (read by any thread without the lock).
  Scenario sc;
  ModelCatalog catalog;
  LutSet luts;
  DeviceOptions opt;
  int index = 0;  // this device in the scenario
  ModelSpec spec;
  int num_stages = 0;                                // of its model
  std::unique_ptr<models::DeviceModelRunner> model;  // its model and inputs (LibTorch behind it; its own locking)
  BandwidthSchedule schedule;
  std::shared_ptr<const BandwidthSchedule> shared_schedule;  // the same, for the connection's pacing (opt.shape)
  ServerAvailability availability;                           // the scenario's server failures (the testbed carries them out)
  // Its handovers where a transfer caught by one does not wait through it (mobility.mid_transfer
  // resend or fail; empty under wait): the server decides for uploads, this device for results.
  std::vector<DeviceHandover> handovers;
  std::string memory_processor;             // the processor this machine's CPU stands for
  std::unique_ptr<JournalWriter> journal;   // its own lock
  const std::atomic<bool>* stop = nullptr;  // set by run()
  std::atomic<bool> finished{false};        // the run is over (set once, at its end)

  DeviceLock lock;

  ~DeviceContext();
  const DeviceSpec& device() const { return sc.devices[static_cast<size_t>(index)]; }
  double device_unix() const;  // this device's clock (Unix s, with opt.clock_skew_s)
  double now() const { return device_unix() - opt.epoch_unix_s; }
  void log(const std::string& s) const;
  bool stopping() const { return *stop || finished; }
  // The reason a request fails when the board's memory limit (TrackingAllocator) refused a tensor
  // (TensorMemoryExhausted's need and have, bytes).
  std::string out_of_memory_text(double need_bytes, double have_bytes) const;
  // "server ID failed at T s" when the scenario has `server` down at run time t (a fail event at or
  // before t, no recover since: `coinfer testbed` killed it), else "". A quarter second of grace: the
  // device may see the drop a little before its own clock reaches the event.
  std::string scheduled_failure_reason(double t, int server) const;
};

class DeviceWork;
class DeviceServerLink;

// The rooms, for the rooms to reach each other (set once, before any thread starts).
struct DeviceRooms {
  DeviceWork* work = nullptr;
  DeviceServerLink* link = nullptr;
};

}  // namespace coinfer::hw
