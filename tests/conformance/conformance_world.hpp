#pragma once
// What the conformance tests share: a scripted world loaded as the simulator loads it, run with a loop's
// trace on, and the words of a trace line.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/sim/sim_fixture.hpp"

namespace coinfer::test {

// A scenario, its model catalog and LUTs.
struct LoadedWorld {
  Scenario scenario;
  ModelCatalog models;
  LutSet luts;
};

// `yaml_or_path`: a scenario's text (LUTDIR stands for `s`'s folder, where it is written) or, without
// a newline, a scenario file's path; `sets` as `--set` gives them.
inline LoadedWorld load_world(SimSetup& s, const std::string& yaml_or_path, const std::vector<std::string>& sets = {}) {
  std::string path = yaml_or_path;
  if (yaml_or_path.find('\n') != std::string::npos) {
    std::string y = yaml_or_path;
    for (size_t p; (p = y.find("LUTDIR")) != std::string::npos;) y.replace(p, 6, s.dir());
    s.write_file("scenario.yaml", y);
    path = s.dir() + "/scenario.yaml";
  }
  LoadedWorld w{load_scenario(path, sets), ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models"), {}};
  w.luts = load_luts(w.scenario.luts);
  return w;
}

using Trace = std::vector<std::string>;

// A loaded world and the trace lines one kind of loop wrote in the simulator, per device or server index.
struct TracedWorld : LoadedWorld {
  std::map<int, Trace> traces;
};

// Runs `yaml` in the simulator with a loop trace on: set_sink(f) installs the sink f(index, line) for the
// run, set_sink(nullptr) removes it after (DeviceLoop::set_trace_sink, ServerLoopTrace::set_sink).
template <typename SetSink>
TracedWorld simulate_traced(SimSetup& s, const std::string& yaml, SetSink set_sink) {
  TracedWorld w{load_world(s, yaml), {}};
  set_sink([&w](int index, const std::string& line) { w.traces[index].push_back(line); });
  sim::run_simulation(w.scenario, w.models, w.luts);
  set_sink(nullptr);
  return w;
}

inline std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string x; in >> x;) out.push_back(x);
  return out;
}

}  // namespace coinfer::test
