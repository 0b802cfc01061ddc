#pragma once
// A testbed inventory (`coinfer testbed SCENARIO --inventory hosts.yaml`, hw/README.md "A real testbed
// over SSH"): the edge server host and each board, how to reach them over SSH, where coinfer is on
// each, and which scenario device each board plays. Strict keys; every error names the file, line and
// key. Paths on this machine (`key`, `known_hosts`) are relative to the inventory file, `~` is $HOME.
#include <map>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "core/scenario.hpp"

namespace coinfer {

// One machine reached over SSH (OpenSSH's client, non-interactive: keys only).
struct InventoryHost {
  std::string name;     // "server" or the board's device id (for messages and log files)
  std::string address;  // host name or address ssh connects to
  int ssh_port = 22;
  std::string user;         // "" = ssh's default (the local user, or ~/.ssh/config)
  std::string key;          // private key file on this machine ("" = ssh's default identities)
  std::string known_hosts;  // known_hosts file on this machine ("" = ssh's default)
  std::string coinfer;      // the coinfer-rt program on the host
  std::string workdir;      // scratch folder on the host; each run uses (and removes) a folder inside
  std::string arch;         // expected `uname -m`: x86_64, aarch64, armv7l, ...
  bool sudo = false;        // run tc through `sudo -n` (a user that is not root)
  // Where each key was written, for errors found later (an unreachable address, a wrong coinfer).
  std::map<std::string, SourceLocation> where;
  SourceLocation at(const std::string& key) const;
};

struct InventoryServer : InventoryHost {
  std::string service_address;  // what the boards connect to (default: address)
  int service_port = 7070;      // the port `coinfer serve` listens on
};

struct InventoryBoard : InventoryHost {
  std::string device;         // the scenario device this board plays
  std::string interface;      // its network interface (shaped when `shape`)
  bool shape = false;         // apply the scenario's bandwidth (trace, events) on `interface` with tc
  std::string power_command;  // a command printing watts (coinfer device --power-command); "" = none
};

struct Inventory {
  std::string file;
  InventoryServer server;
  std::vector<InventoryBoard> boards;
};

// Reads and checks the file (keys, types, key files readable, no two boards for one device).
Inventory load_inventory(const std::string& file);

// The inventory against a scenario: every board plays a device of the scenario, every device of the
// scenario has a board. InputError naming the inventory's line otherwise.
void check_inventory_against(const Inventory& inv, const Scenario& sc);

}  // namespace coinfer
