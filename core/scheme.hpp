#pragma once
// A scheme: the strategy of every connected device, plus the idle devices that may serve as helpers
// for pending server work, plus (optionally) a batching rule per server and a server per device.
// Plain data so that it serialises across a process boundary.
#include <map>
#include <string>
#include <vector>

#include "core/batch_spec.hpp"
#include "core/strategy.hpp"

namespace coinfer {

struct Scheme {
  std::map<std::string, Strategy> strategies;  // device id -> strategy
  std::vector<std::string> helpers;            // idle devices the server may forward work to
  // Server id -> its batch window and size from this decision on; a server not named keeps the one
  // it has (the scenario's servers[].batch until a scheme sets another).
  std::map<std::string, BatchSpec> batching;
  // Device id -> the server (id) its requests go to from this decision on (server
  // choice); a device not named keeps the one it has (the scenario's devices[].server until a scheme
  // sets another). Requests already uploading or at a server finish there (sim/README.md "Server choice").
  std::map<std::string, std::string> servers;

  // "pi0=pp(2) pi1=local helpers=[]", then " batching=[srv:20ms/8,...]" and " servers=[pi0:srv1,...]"
  // when it sets any.
  std::string to_string() const;
  bool operator==(const Scheme& o) const {
    return strategies == o.strategies && helpers == o.helpers && batching == o.batching && servers == o.servers;
  }
};

// A scheme given as another (its base) with some devices' strategies replaced: a search's candidate,
// which differs from the incumbent in a few devices (building each candidate as a whole Scheme costs a
// map of every device).
struct SchemeEdit {
  std::vector<std::pair<std::string, Strategy>> set;  // device id -> its strategy, in order (a later one wins)

  // `base` with the replacements made.
  Scheme applied_to(const Scheme& base) const;
  void apply_to(Scheme& base) const;
};

}  // namespace coinfer
