#pragma once
// What a server's loop asks its engine about the requests it holds (core/server_loop.hpp
// ServerActions: a batch's expected time, a request's time alone, its batch limit, its deadline, its
// priority, a helper's time for a batch, why a request was dropped), answered once for both engines
// from the facts of a request. Each engine only says what the facts are for its own request type
// (sim/server_actors.cpp, hw/edge_server.cpp) and what it observes (a helper's bandwidth).
// Times in seconds of run time; bytes in bytes. Holds references to the scenario and the server's
// timing, which must outlive it. No call blocks or advances time.
#include <string>

#include "core/scenario.hpp"
#include "core/server_timing.hpp"

namespace coinfer {

// One request as a server's loop sees it.
struct ServerRequestFacts {
  int device = -1;          // the scenario's device index (-1: none, e.g. an item that names no device)
  int binding = 0;          // the model binding it runs (core/server_timing.hpp; the testbed: 0)
  int begin = 0;            // the first stage this server runs
  int end = -1;             // the end of this server's part (-1: the model's end; an edge's part of pp(k,m): m)
  int device_split = 0;     // where a helper starts it (the device's split)
  bool may_forward = true;  // a helper may run it (no cloud part, not a cloud's request: core/cloud_handoff.hpp)
  double t_created_s = 0;   // its creation, run time (NaN: not known; it is then never dropped)
  double bytes = 0;         // its input's bytes as uploaded
};

class ServerRequestRules {
 public:
  ServerRequestRules(const Scenario& s, int server, const ServerTiming& timing) : s_(s), server_(server), timing_(timing) {}

  // This server's expected seconds for a batch of `size` requests like `first` (its LUT).
  double expected_seconds(const ServerRequestFacts& first, int size) const;
  // The least it still needs here: its LUT at batch 1 (0 for no device).
  double seconds_alone(const ServerRequestFacts& r) const;
  // The largest batch its group may reach here (core/server_timing.hpp batch_limit; 0: max_size).
  int batch_limit(const ServerRequestFacts& r) const;
  // Its deadline: creation + its device's workload.drop_after_s() (+infinity: never dropped).
  double drop_after_s(const ServerRequestFacts& r) const;
  // Its device's workload.priority (0 for no device).
  int priority(const ServerRequestFacts& r) const;
  // Helper `helper`'s expected seconds for a batch of `size` requests like `first` whose inputs are
  // `bytes` in all, at the helper's `bytes_per_s` as the engine observes it; +infinity when the batch
  // may not go to a helper or the helper has no LUT for it.
  double helper_seconds(int helper, const ServerRequestFacts& first, int size, double bytes, double bytes_per_s) const;
  // What a request dropped here at `now_s` is told (core/device_loop.hpp server_drop_reason).
  std::string drop_reason(const ServerRequestFacts& r, double now_s) const;

 private:
  const Scenario& s_;
  int server_;
  const ServerTiming& timing_;
};

}  // namespace coinfer
