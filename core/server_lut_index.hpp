#pragma once
// Which table each server has for each model a device may run: looked up once per distinct (server
// type, model, dataset) and shared by every device and server of a run. A scheme may move any device
// to any server (Scheme::servers), so every (server, device, binding) has an answer; holding it as
// servers x devices pointers cost 64 bytes per pair (6.4 GB at 100,000 devices and 1,000 servers) and
// as many string lookups to build. Here the memory is a few bytes per device binding plus one pointer
// per (type, model, dataset). Holds pointers into `luts`, which must outlive it. Immutable after
// construction: safe to read from any thread.
#include <cstddef>
#include <string>
#include <vector>

#include "core/lut.hpp"
#include "core/scenario.hpp"

namespace coinfer {

class ServerLutIndex {
 public:
  // `run_models[d]`: the models device d may run, binding order (its model as named first); one list
  // per device of the scenario.
  ServerLutIndex(const Scenario& s, const LutSet& luts, const std::vector<std::vector<std::string>>& run_models);

  // Server `server`'s table for device `device`'s binding `binding`; null where that server's type has
  // none, or the device has no such binding.
  const LutTable* table(int server, int device, int binding) const;
  // How many distinct (model, dataset) pairs and server types the run has (what the index holds).
  std::size_t models() const { return tables_.empty() ? 0 : tables_.front().size(); }
  std::size_t types() const { return tables_.size(); }

 private:
  std::vector<int> server_type_;                      // per server: its type's row in tables_
  std::vector<std::size_t> first_;                    // per device, then one past the last: offsets into model_of_
  std::vector<int> model_of_;                         // per (device, binding): its (model, dataset) column
  std::vector<std::vector<const LutTable*>> tables_;  // [type][(model, dataset)]
};

}  // namespace coinfer
