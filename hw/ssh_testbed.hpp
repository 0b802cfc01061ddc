#pragma once
// `coinfer testbed SCENARIO --inventory hosts.yaml`: the scenario on real hosts over SSH (hw/README.md
// "A real testbed over SSH"). The edge server and every board named by the inventory (io/inventory.hpp)
// run coinfer itself, started with OpenSSH's client; nothing else of ours is installed there.
//
// 1. Checks every host before anything starts: reachable, `coinfer version` the same as here (program
//    and wire protocol), the architecture the inventory states; sends each a run folder with the
//    scenario, the LUTs and traces it names (their relative layout kept) and a fresh shared secret
//    (mode 0600), and has `coinfer check` load the scenario there (models, LUTs, secret permissions).
// 2. Starts the server, then every device, with one time zero given to each on its own clock (offsets
//    estimated while checking; the clock probes of hw/clock_sync.hpp then correct the journals).
//    Applies the scenario's bandwidth on boards marked `shape: true` with tc (both directions of their
//    interface), streams every device's journal back live, prints progress.
// 3. At the end, or on Ctrl-C, or on an error: stops every remote process (its process group), removes
//    shaping and the run folders, copies the journals and the decisions back and writes results.h5,
//    summary.json, decisions.jsonl, testbed.json and logs/ in the simulator's schema. A board that
//    became unreachable keeps what it streamed until then; its unfinished requests are failed with
//    that reason.
// Torch-free: it only starts ssh.
#include <atomic>
#include <nlohmann/json.hpp>

#include "hw/testbed.hpp"

namespace coinfer::hw {

// Returns 0 on success, 1 when the run finished with faults (a device lost, processes left that could
// not be stopped), 130 when interrupted. InputError (exit 2) for a bad inventory or a host that fails
// its check, before any process is started.
int run_ssh_testbed(const TestbedOptions& o, const std::atomic<bool>& interrupted);

// This program's identity as `coinfer version --json` prints it: {"coinfer": version, "protocol":
// wire protocol version, "built_for": architecture compiled for, "machine": `uname -m` of the host,
// "unix_time_s": its clock now}.
nlohmann::json runtime_version();

}  // namespace coinfer::hw
