#include "hw/cgroup_files.hpp"

#include <fstream>

namespace coinfer::hw {

bool write_cgroup_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p);
  if (!out) return false;
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

bool cgroup_v2_has_controller(const std::filesystem::path& root, const std::string& controller) {
  std::ifstream in(root / "cgroup.subtree_control");
  std::string w;
  while (in >> w)
    if (w == controller) return true;
  return false;
}

}  // namespace coinfer::hw
