#pragma once
// A server's batching rule in two numbers (ACE-GNN Sec. III-E, "batch processing with a time
// window"): how long the first request of a batch waits for company, and how many requests a batch
// may hold. The scenario gives each server one (servers[].batch); a scheme may set another from a
// decision on (Scheme::batching). Plain data.
#include <string>

namespace coinfer {

struct BatchSpec {
  double window_ms = 0;  // 0 = dispatch at once
  int max_size = 1;
  // A batch may wait for more requests: a window and room for more than one. Otherwise every
  // request is its own batch the moment it arrives.
  bool windowed() const { return window_ms > 0 && max_size > 1; }
  bool operator==(const BatchSpec& o) const { return window_ms == o.window_ms && max_size == o.max_size; }
  bool operator!=(const BatchSpec& o) const { return !(*this == o); }
  // "20ms/8" (the shortest text that reads back to the same double).
  std::string to_string() const;
};

}  // namespace coinfer
