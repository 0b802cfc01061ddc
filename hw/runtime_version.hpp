#pragma once
// This program's identity, as `coinfer version --json` prints it and as a testbed over SSH
// (hw/ssh_hosts.cpp) checks it on every host before it starts anything.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace coinfer::hw {

// {"coinfer": version, "protocol": wire protocol version, "built_for": architecture compiled for,
// "machine": `uname -m` of the host, "unix_time_s": its clock now}.
nlohmann::json runtime_version();

// What another program's `version --json` printed, as an object with "coinfer" (text) and "protocol"
// (integer); nullopt when `printed` is not that (not JSON, or another program's output).
std::optional<nlohmann::json> parse_runtime_version(const std::string& printed);
// "coinfer 0.1.0 (wire protocol 1)" for a `version --json` object.
std::string describe_runtime(const nlohmann::json& version);
// Whether two `version --json` objects are the same coinfer speaking the same wire protocol (what two
// programs of one testbed must be; their architectures may differ).
bool same_runtime(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace coinfer::hw
