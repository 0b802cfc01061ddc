#include "hw/inventory.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/text_util.hpp"
#include "io/yaml_util.hpp"

namespace fs = std::filesystem;

namespace coinfer {

SourceLocation InventoryHost::at(const std::string& key) const {
  auto it = where.find(key);
  if (it != where.end()) return it->second;
  auto entry = where.find("");
  return entry != where.end() ? entry->second : SourceLocation{};
}

namespace {

const std::vector<std::string> kHostKeys = {"address", "ssh_port", "user", "key", "known_hosts", "coinfer", "workdir", "arch", "sudo"};

// A path on this machine: `~/` is $HOME, a relative path is relative to the inventory's folder.
std::string local_path(const std::string& text, const std::string& inventory_file) {
  if (text.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    return (fs::path(home ? home : "/") / text.substr(2)).string();
  }
  fs::path p(text);
  if (p.is_absolute()) return p.string();
  return (fs::absolute(inventory_file).parent_path() / p).lexically_normal().string();
}

// Reads the host keys of `n` over `base` (the defaults); `path` prefixes key names.
void read_host(const YamlReader& r, const YAML::Node& n, const std::string& path, InventoryHost& h) {
  h.where[""] = r.where(n);
  for (const auto& k : kHostKeys)
    if (n[k]) h.where[k] = r.where(n[k]);
  if (n["address"]) h.address = r.get_name(n, "address", path);
  if (n["ssh_port"]) h.ssh_port = static_cast<int>(r.get_int(n, "ssh_port", path, 22, 1, 65535));
  if (n["user"]) h.user = r.get_name(n, "user", path);
  if (n["key"]) h.key = local_path(r.get_name(n, "key", path), r.file());
  if (n["known_hosts"]) h.known_hosts = local_path(r.get_name(n, "known_hosts", path), r.file());
  if (n["coinfer"]) h.coinfer = r.get_name(n, "coinfer", path);
  if (n["workdir"]) h.workdir = r.get_name(n, "workdir", path);
  if (n["arch"]) h.arch = r.get_name(n, "arch", path);
  if (n["sudo"]) h.sudo = r.get_bool(n, "sudo", path, false);
  // Text that reaches a remote shell is quoted there; names that start with '-' would read as
  // options to ssh.
  if (!h.address.empty() && h.address[0] == '-') r.fail(n["address"], key_path(path, "address"), "must not start with '-'");
  if (!h.user.empty() && h.user[0] == '-') r.fail(n["user"], key_path(path, "user"), "must not start with '-'");
}

// Checks what every host needs once defaults are applied.
void finish_host(const YamlReader& r, const YAML::Node& n, const std::string& path, InventoryHost& h) {
  // A value given in defaults is reported under defaults.KEY.
  auto kp = [&](const std::string& k) { return n[k] ? key_path(path, k) : key_path("defaults", k); };
  if (h.address.empty()) r.fail(n, key_path(path, "address"), "missing required key (the host name or address ssh connects to)");
  if (h.coinfer.empty()) r.fail(n, key_path(path, "coinfer"), "missing required key (the coinfer-rt program on this host; or give it in defaults)");
  if (h.arch.empty()) r.fail(n, key_path(path, "arch"), "missing required key (the host's `uname -m`: x86_64, aarch64, armv7l, ...)");
  if (h.workdir.empty()) h.workdir = "/tmp";
  if (h.workdir[0] != '/') throw InputError(h.at("workdir"), kp("workdir"), "must be an absolute path on the host");
  if (h.coinfer.find('/') != std::string::npos && h.coinfer[0] != '/')
    throw InputError(h.at("coinfer"), kp("coinfer"), "must be an absolute path on the host, or a program name on its PATH");
  for (const auto* k : {"key", "known_hosts"}) {
    const std::string& f = std::string(k) == "key" ? h.key : h.known_hosts;
    if (f.empty()) continue;
    std::error_code ec;
    if (std::string(k) == "key" && (!fs::is_regular_file(f, ec) || ::access(f.c_str(), R_OK) != 0))
      throw InputError(h.at(k), kp(k), "'" + f + "' is not a readable file (the SSH private key for this host)");
    if (std::string(k) == "known_hosts" && !fs::is_directory(fs::path(f).parent_path(), ec))
      throw InputError(h.at(k), kp(k), "the folder of '" + f + "' does not exist");
  }
}

}  // namespace

Inventory load_inventory(const std::string& file) {
  YamlReader r(file);
  YAML::Node root = r.load_file();
  r.check_keys(root, {"defaults", "server", "boards"}, "");
  Inventory inv;
  inv.file = file;
  InventoryHost defaults;
  if (root["defaults"]) {
    r.check_keys(root["defaults"], kHostKeys, "defaults");
    read_host(r, root["defaults"], "defaults", defaults);
    if (!defaults.address.empty()) r.fail(root["defaults"]["address"], "defaults.address", "each host has its own address");
  }
  auto with_defaults = [&](InventoryHost& h) {
    std::map<std::string, SourceLocation> own = h.where;
    static_cast<InventoryHost&>(h) = defaults;
    for (auto& kv : own) h.where[kv.first] = kv.second;
  };

  const YAML::Node sv = root["server"];
  if (!sv) r.fail(root, "server", "missing required key (the edge server host)");
  std::vector<std::string> server_keys = kHostKeys;
  server_keys.insert(server_keys.end(), {"service_address", "service_port"});
  r.check_keys(sv, server_keys, "server");
  with_defaults(inv.server);
  read_host(r, sv, "server", inv.server);
  inv.server.name = "server";
  finish_host(r, sv, "server", inv.server);
  inv.server.service_address = r.get_string(sv, "service_address", "server", inv.server.address);
  if (sv["service_address"]) inv.server.where["service_address"] = r.where(sv["service_address"]);
  inv.server.service_port = static_cast<int>(r.get_int(sv, "service_port", "server", 7070, 1, 65535));

  const YAML::Node boards = root["boards"];
  if (!boards || !boards.IsSequence() || boards.size() == 0) r.fail(boards ? boards : root, "boards", "expected a non-empty list of boards");
  std::map<std::string, int> device_board;
  for (size_t i = 0; i < boards.size(); ++i) {
    const YAML::Node b = boards[i];
    const std::string path = "boards[" + std::to_string(i) + "]";
    std::vector<std::string> keys = kHostKeys;
    keys.insert(keys.end(), {"device", "interface", "shape", "power_command"});
    r.check_keys(b, keys, path);
    InventoryBoard board;
    with_defaults(board);
    read_host(r, b, path, board);
    board.device = r.get_name(b, "device", path);
    board.where["device"] = r.where(b["device"]);
    board.name = board.device;
    finish_host(r, b, path, board);
    board.interface = r.get_string(b, "interface", path, "");
    if (b["interface"]) board.where["interface"] = r.where(b["interface"]);
    board.shape = r.get_bool(b, "shape", path, false);
    if (board.shape && board.interface.empty())
      r.fail(b["shape"], key_path(path, "shape"), "shaping needs the board's network interface (interface: eth0)");
    if (!board.interface.empty() &&
        (board.interface.size() > 15 || board.interface.find_first_of(" /'\"\\") != std::string::npos || board.interface[0] == '-'))
      r.fail(b["interface"], key_path(path, "interface"), "'" + printable(board.interface) + "' is not a network interface name");
    board.power_command = r.get_string(b, "power_command", path, "");
    auto [it, fresh] = device_board.emplace(board.device, static_cast<int>(i));
    if (!fresh)
      r.fail(b["device"], key_path(path, "device"),
             "device '" + board.device + "' already has a board (boards[" + std::to_string(it->second) + "]); one board plays one device");
    inv.boards.push_back(std::move(board));
  }
  return inv;
}

void check_inventory_against(const Inventory& inv, const Scenario& sc) {
  std::set<std::string> ids;
  for (const auto& d : sc.devices) ids.insert(d.id);
  std::set<std::string> played;
  for (size_t i = 0; i < inv.boards.size(); ++i) {
    const auto& b = inv.boards[i];
    if (!ids.count(b.device)) {
      std::vector<std::string> all(ids.begin(), ids.end());
      const std::string near = nearest_word(b.device, all);
      throw InputError(
          b.at("device"), "boards[" + std::to_string(i) + "].device",
          "the scenario (" + sc.file + ") has no device '" + b.device + "'" + (near.empty() ? std::string() : "; did you mean '" + near + "'?"));
    }
    played.insert(b.device);
  }
  std::string missing;
  for (const auto& d : sc.devices)
    if (!played.count(d.id)) missing += (missing.empty() ? "" : ", ") + d.id;
  if (!missing.empty())
    throw InputError(SourceLocation{inv.file, 0, 0}, "boards",
                     "no board plays the scenario's device(s) " + missing + " (each device of " + sc.file + " needs a board)");
}

}  // namespace coinfer
