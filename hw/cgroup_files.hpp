#pragma once
// The cgroup file system as hw/cpu_cap.hpp and hw/memory_cap.hpp write it: one small write per file
// (blocking, no retry), and whether a cgroup v2 root delegates a controller to its children.
#include <filesystem>
#include <string>

namespace coinfer::hw {

// Writes `text` to the cgroup file `p` (one write, flushed); false when the kernel refuses it.
bool write_cgroup_file(const std::filesystem::path& p, const std::string& text);
// Whether `controller` ("cpu", "memory") is in `root`'s cgroup.subtree_control.
bool cgroup_v2_has_controller(const std::filesystem::path& root, const std::string& controller);

}  // namespace coinfer::hw
