#pragma once
// This program's identity, as `coinfer version --json` prints it and as a testbed over SSH
// (hw/ssh_hosts.cpp) checks it on every host before it starts anything.
#include <nlohmann/json.hpp>

namespace coinfer::hw {

// {"coinfer": version, "protocol": wire protocol version, "built_for": architecture compiled for,
// "machine": `uname -m` of the host, "unix_time_s": its clock now}.
nlohmann::json runtime_version();

}  // namespace coinfer::hw
