#pragma once
// State shared by the actors of one simulation run (sim-internal). Owned by Simulation; actors hold
// raw pointers into it, valid for the whole Engine::run().
#include <simgrid/s4u.hpp>

#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "core/limits.hpp"
#include "core/lut.hpp"
#include "core/model_spec.hpp"
#include "core/request_record.hpp"
#include "core/scenario.hpp"
#include "sim/platform_builder.hpp"

namespace coinfer {

class DeviceRuntime;
class EdgeServer;

// One request in flight. Lives in SimRun::requests (a deque: stable addresses).
struct SimRequest {
  RequestRecord rec;
  int device_split = 0;   // device runs [0, device_split); server runs the rest
  int batch_group = 0;    // (model, dataset, split) key id; only requests with equal ids batch together
  bool data_parallel = false; // created under data_parallel
  bool dp_to_server = false;  // data_parallel input sent whole to the server
  bool finished = false;
};

struct SimRun {
  const Scenario* scenario = nullptr;
  Platform platform;
  std::vector<ModelSpec> device_models;         // per device
  std::vector<const LutTable*> device_luts;     // per device: LUT of its type
  std::vector<const LutTable*> device_server_luts;  // per device: LUT of its server's type for its model
  std::map<std::pair<int, int>, const LutTable*> helper_luts;  // (idle helper, origin device) -> helper's LUT for the origin's model
  std::vector<std::unique_ptr<DeviceRuntime>> devices;
  std::vector<std::unique_ptr<EdgeServer>> servers;
  std::deque<SimRequest> requests;
  double arrivals_end_s = 0;  // min(duration) — no request is created at or after this time
  double hard_end_s = 0;      // arrivals_end_s + drain_s: whatever is unfinished then fails
  long long unfinished = 0;   // requests created and not finished
  simgrid::s4u::SemaphorePtr all_done;  // released when arrivals ended and unfinished hit 0

  SimRequest& new_request(int device);
  // False once the run holds limits::kMaxRequests requests: devices stop creating, and the run is
  // refused afterwards (run_simulation throws InputError).
  bool may_create_request() const { return static_cast<long long>(requests.size()) < limits::kMaxRequests; }
  // Marks a request finished (ok) at the current time and wakes the controller if it was the last.
  void finish(SimRequest& r);
  int batch_group_id(const std::string& model, const std::string& dataset, int split);

 private:
  std::vector<std::string> group_names_;
};

}  // namespace coinfer
