#pragma once
// Which waiting batch goes to which idle helper device, and when (ACE-GNN Sec. III-D: idle devices
// named by the scheme as helpers run the server part of others' requests). Engine-free: the
// simulator's server actors and the real server's threads ask the same object.
//
// The rule: while more sealed batches wait than workers are idle, the newest waiting batch goes to
// the first free helper (lowest device index) if that helper is expected to return its result
// sooner than the server would:
//     helper:  helper_s(h, batch)      = its input transfer at the helper's bandwidth + its compute
//     server:  (first worker free - now) + (server seconds of the batches ahead) / workers
//              + server seconds of the batch itself
// Whole batches move (never single requests out of a batch); a helper runs one batch at a time and
// is free again when it reports the batch done. Times in seconds.
#include <functional>
#include <map>
#include <vector>

#include "core/execution_time.hpp"
#include "core/scenario.hpp"

namespace coinfer {

// Who may help whom, one rule for both engines: a device with `arrival: none` (an idle
// device) may run the server part of any device of its own server that creates inputs. Pairs
// (helper, origin) of device indices, helpers in index order, then origins. Whether the scheme names
// the helper is decided per decision (Scheme::helpers); this is what the engines prepare LUTs for.
std::vector<std::pair<int, int>> helper_pairs(const Scenario& s);

// The server's state as the rule needs it.
struct ServerLoad {
  double now_s = 0;
  int workers = 1;
  int busy_workers = 0;
  std::vector<double> running_until_s;  // expected end of each batch running now
};

// The helper side of the rule: a helper's expected seconds for a batch of `batch` inputs whose server
// part starts at `split`: the batch's input bytes at the helper's bandwidth (bytes/s), plus the
// helper's own time for [split, n) at that batch size (`helper_lut`: the helper's type, the origin's
// model).
double helper_batch_seconds(double input_bytes, double bytes_per_s, const LutTable& helper_lut, int split, int batch,
                            const ExecutionTimeModel& time = lut_mean_time());

class HelperForwardPolicy {
 public:
  // The scheme's helpers for this server (device indices); replaces the previous set. A helper that
  // stays in the set keeps its busy flag.
  void set_helpers(const std::vector<int>& devices);
  // The helper finished (or failed) the batch it was given.
  void helper_done(int device);
  bool has_helpers() const { return !busy_.empty(); }
  bool is_helper(int device) const { return busy_.count(device) != 0; }
  bool busy(int device) const;
  std::vector<int> helpers() const;

  // ready_server_s: the server's expected seconds for each sealed batch waiting, oldest first.
  // helper_s(h, i): helper h's expected seconds for batch i (transfer + compute).
  // available(h): whether helper h can take work now beyond the policy's own busy flag (the real
  // server: its connection is up and it reports itself idle); null = always.
  // Returns the helpers chosen, newest batch first: result[j] takes ready[size - 1 - j]. The caller
  // moves those batches out; the chosen helpers are marked busy.
  std::vector<int> plan(const ServerLoad& load, const std::vector<double>& ready_server_s,
                        const std::function<double(int helper, size_t batch)>& helper_s, const std::function<bool(int helper)>& available = nullptr);

 private:
  std::map<int, bool> busy_;  // helper device index -> running a forwarded batch now
};

}  // namespace coinfer
