#pragma once
// A scheme: the strategy of every connected device, plus the idle devices that may serve as helpers
// for pending server work. Plain data so that it serialises across a process boundary.
#include <map>
#include <string>
#include <vector>

#include "core/strategy.hpp"

namespace coinfer {

struct Scheme {
  std::map<std::string, Strategy> strategies;  // device id -> strategy
  std::vector<std::string> helpers;            // idle devices the server may forward work to

  std::string to_string() const;  // "pi0=pp(2) pi1=local helpers=[]"
  bool operator==(const Scheme& o) const { return strategies == o.strategies && helpers == o.helpers; }
};

}  // namespace coinfer
