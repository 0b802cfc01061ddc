#pragma once
// A scheduler in another process, in any language:
//
//   scheduler: {name: external, command: "python3 my_scheduler.py --threshold 10", timeout_s: 10}
//
// coinfer starts the command (split into words like a shell would, but no shell runs: no expansion,
// no pipes; quotes group words) in the scenario file's folder, and talks to it in JSON lines over its
// standard input and output (its stderr stays coinfer's). The protocol, version 1 (sched/README.md):
//
//   coinfer -> scheduler  {"type":"hello","protocol":1,"scenario":NAME,"objective":"throughput",
//                          "devices":[{"id":..,"type":..,"model":..,"dataset":..,"stages":N},...],
//                          "servers":[..ids..]}
//   scheduler -> coinfer  {"type":"ready","name":"my scheduler"}            (name optional)
//   coinfer -> scheduler  {"type":"decide","id":K,"state":<SystemState, sched/state_json.hpp>}
//   scheduler -> coinfer  {"type":"scheme","id":K,"scheme":{"strategies":{"dev":"pp(3)",..},"helpers":[..]}}
//   ... one decide per decision; then coinfer closes the scheduler's stdin, and it should exit.
//
// A device the scheme leaves out keeps its strategy. Every answer must come within timeout_s seconds
// (default 10; also the bound on the hello). A command that cannot start or does not answer the hello
// is an InputError naming scheduler.command (exit 2 before anything runs). Later, a scheduler that
// exits, does not answer in time, or answers anything but the expected line is a SchedulerFailure
// naming what it did (its stderr tail is not captured: it went to coinfer's stderr); it is then
// stopped, and every later decide fails the same way.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.hpp"

namespace coinfer {

// The external scheduler of `scenario` (scheduler.command, timeout_s): starts the command and waits for
// its hello. `stages`: the stage count per "model/dataset" the hello announces. One of the built-in
// schedulers' table (sched/scheduler_factory.cpp), which checks every scheme it returns.
std::unique_ptr<Scheduler> make_external_scheduler(const Scenario& scenario, const std::map<std::string, int>& stages);

}  // namespace coinfer
