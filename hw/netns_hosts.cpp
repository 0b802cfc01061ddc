// The emulated testbed's back-end (hw/testbed_hosts.hpp): one network namespace for the edge server,
// one for the access point and one per device on this machine, tc shaping the links as the simulator's
// platform has them; without permission to create namespaces, loopback with shaping inside the
// middleware. Processes are coinfer-rt serve / device, started here.
#include <sys/stat.h>
#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "core/bandwidth_schedule.hpp"
#include "core/input_error.hpp"
#include "core/limits.hpp"
#include "core/log.hpp"
#include "core/text_util.hpp"
#include "core/units.hpp"
#include "hw/auth.hpp"
#include "hw/cpu_cap.hpp"
#include "hw/memory_cap.hpp"
#include "core/device_hardware.hpp"
#include "hw/protocol.hpp"
#include "hw/record_journal.hpp"
#include "hw/runtime_version.hpp"
#include "hw/testbed.hpp"
#include "hw/testbed_hosts.hpp"
#include "plumbing/child_process.hpp"

namespace fs = std::filesystem;

namespace coinfer::hw {

namespace {
using Seconds = std::chrono::duration<double>;

// Runs a short command (ip, tc) and waits; returns its exit status, with its stderr in `err`.
int run_command(const std::vector<std::string>& argv, std::string* err = nullptr) {
  log::debug("testbed", join(argv, " "));
  ChildSpec spec;
  spec.argv = argv;
  spec.stdout_file = "/dev/null";
  spec.capture_stderr = true;
  const ChildResult r = run_child(spec, 60);
  if (err) {
    *err = r.timed_out ? "did not finish within 60 s" : r.err;
    while (!err->empty() && err->back() == '\n') err->pop_back();
  }
  return r.timed_out ? 124 : r.status;
}

void must(const std::vector<std::string>& argv) {
  std::string err;
  if (run_command(argv, &err) != 0) throw std::runtime_error("'" + join(argv, " ") + "' failed: " + err);
}

std::string rate_text(double mbps) {
  char b[64];
  std::snprintf(b, sizeof b, "%.0fkbit", std::max(8.0, mbps * 1000));
  return b;
}

std::string delay_text(double ms) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3fms", std::max(0.0, ms));
  return b;
}

// A server or device process: its own process group (stopping it stops what it started), output in
// its log.
Child start_logged(const std::vector<std::string>& argv, const std::string& log_path, bool append = false) {
  ChildSpec spec;
  spec.argv = argv;
  spec.stdout_file = log_path;
  spec.append = append;
  spec.stderr_file = "&1";
  spec.own_process_group = true;
  spec.die_with_parent = true;  // it stops when the testbed is gone, however it died (cli/rt_main.cpp)
  log::debug("testbed", join(argv, " ") + " > " + log_path);
  return Child::start(spec);
}

// What the device CPU cap covers: the scope asked for, "auto" resolved to the work threads where
// cgroup v1 takes thread ids (hw/cpu_cap.hpp), else the whole process.
std::string cpu_cap_scope(const TestbedOptions& o) {
  if (o.device_cpu_scope != "auto") return o.device_cpu_scope;
  return fs::exists("/sys/fs/cgroup/cpu/tasks") ? "work" : "process";
}

class NetnsHosts final : public TestbedHosts {
 public:
  NetnsHosts(const Scenario& sc, const TestbedOptions& o) : sc_(sc), o_(o), nd_(static_cast<int>(sc.devices.size())) {
    if (nd_ > kMaxTestbedDevices)
      throw InputError(SourceLocation{o.scenario, 0, 0}, "devices",
                       "the scenario names " + std::to_string(nd_) + " devices; the testbed creates at most " + std::to_string(kMaxTestbedDevices));
    if (sc.servers.size() > static_cast<size_t>(kMaxTestbedServers))
      throw InputError(
          SourceLocation{o.scenario, 0, 0}, "servers",
          "the scenario names " + std::to_string(sc.servers.size()) + " servers; the testbed runs at most " + std::to_string(kMaxTestbedServers));
    servers_.resize(sc.servers.size());
    for (const auto& d : sc.devices) schedules_.emplace_back(d, sc.events);
    tag_ = "cf" + std::to_string(::getpid() % 10000);
    // Background load takes its share from the device's CPU cap (the cgroup quota is lowered at the
    // event's time): without a cap there is nothing to take it from.
    for (const auto& e : sc.events)
      if (e.is<event::Load>() && !(o.device_cpu_cores > 0))
        throw InputError(e.where, "events",
                         "a load event on the testbed lowers the device's CPU cap to (1 - load) x its cores: give the cap with "
                         "--device-cpu CORES (e.g. the cores the device LUT was profiled with)");
    if (!o.device_launcher.empty()) {
      // A launcher stands between the testbed and the device process: a cap applied to the process the
      // testbed started would miss the device, already forked below it. Work-thread caps (by thread id,
      // hw/cpu_cap.hpp) still reach it.
      if (o.device_cpu_cores > 0 && cpu_cap_scope(o) == "process")
        throw InputError(SourceLocation{"--device-launcher", 0, 0}, "--device-launcher",
                         "--device-cpu caps the device process itself here (no cgroup v1 for its work threads), which a launcher hides: "
                         "drop --device-cpu or the launcher");
      if (o.device_memory == "exact")
        throw InputError(SourceLocation{"--device-launcher", 0, 0}, "--device-launcher",
                         "--device-memory exact limits the device process itself, which a launcher hides: use auto or off");
    }
    if (!o.device_rt_exe.empty() || !o.device_launcher.empty()) check_device_program();
  }
  ~NetnsHosts() override { undo(); }

  // The devices' own program (o.device_rt_exe run by o.device_launcher, e.g. an arm64 build inside its
  // root under emulation): it runs here and is the same coinfer, or nothing starts.
  void check_device_program() {
    const SourceLocation where{"--device-rt", 0, 0};
    const std::string exe = o_.device_rt_exe.empty() ? o_.rt_exe : o_.device_rt_exe;
    std::vector<std::string> argv = o_.device_launcher;
    argv.insert(argv.end(), {exe, "version", "--json"});
    ChildSpec spec;
    spec.argv = argv;
    spec.capture_stdout = true;
    spec.capture_stderr = true;
    // Emulated, LibTorch's libraries alone take seconds to load.
    const ChildResult r = run_child(spec, 120);
    const std::string what = "'" + join(argv, " ") + "'";
    if (r.timed_out) throw InputError(where, "--device-rt", what + " did not answer within 120 s");
    // Another architecture's program fails to start: "Exec format error" without emulation, qemu's
    // missing loader ("Could not open '/lib/ld-linux-aarch64.so.1'") where binfmt_misc runs it.
    const std::string launcher_hint =
        o_.device_launcher.empty()
            ? "; a program built for another architecture needs its launcher (e.g. --device-launcher \"bash scripts/board.sh run\")"
            : "";
    if (r.status == 127 || r.status == 126 || r.err.find("Exec format error") != std::string::npos)
      throw InputError(where, "--device-rt",
                       what + " cannot run here (exit " + std::to_string(r.status) + ": " + printable(trim_end(r.err), 300) + ")" + launcher_hint);
    const std::optional<nlohmann::json> parsed = parse_runtime_version(trim_end(r.out));
    if (!parsed)
      throw InputError(where, "--device-rt",
                       what + " did not print coinfer's version (exit " + std::to_string(r.status) +
                           "): " + printable(trim_end(r.out + " " + r.err), 300) + launcher_hint);
    const nlohmann::json& v = *parsed;
    const nlohmann::json here = runtime_version();
    if (!same_runtime(v, here))
      throw InputError(where, "--device-rt",
                       what + " is " + describe_runtime(v) + "; the server runs " + describe_runtime(here) + ": build both from one tree");
    device_program_ = {
        {"program", exe}, {"launcher", join(o_.device_launcher, " ")}, {"built_for", v.value("built_for", "")}, {"machine", v.value("machine", "")}};
    if (!o_.quiet)
      log::info("testbed", "the devices run " + exe + " (" + v.value("built_for", std::string("?")) + ", on " + v.value("machine", std::string("?")) +
                               (o_.device_launcher.empty() ? std::string(")") : ") through '" + join(o_.device_launcher, " ") + "'"));
  }

  bool prepare(const std::string& work, const std::atomic<bool>& interrupted) override {
    work_ = work;
    secret_file_ = work + "/secret";
    {
      std::ofstream s(secret_file_);
      s << random_nonce_hex(32) << "\n";
    }
    ::chmod(secret_file_.c_str(), 0600);
    netns_ = !o_.loopback;
    if (netns_) {
      if (::geteuid() != 0) {
        netns_ = false;
        why_not_ = "not root";
      } else if (run_command({"ip", "netns", "add", server_ns(0)}, &why_not_) != 0) {
        netns_ = false;
      } else {
        namespaces_.push_back(server_ns(0));
      }
      if (!netns_ && !o_.quiet)
        log::info("testbed", "cannot create network namespaces (" + why_not_ + "): falling back to loopback with shaping inside the middleware");
    }
    return !netns_ || build_network(interrupted);
  }

  // 3 s a server process needs (LibTorch, the models); several start in two steps, the coordinator and,
  // once it listens, the servers (start_server below).
  double server_start_s() const override { return coordinated() ? 6 : 3; }

  void start_server(double epoch) override {
    epoch_ = epoch;
    std::snprintf(epoch_text_, sizeof epoch_text_, "%.6f", epoch);
    for (const auto& s : o_.sets) common_.insert(common_.end(), {"--set", s});
    common_.insert(common_.end(), {"--secret-file", secret_file_, "--threads", std::to_string(o_.threads)});
    if (!netns_)
      common_.push_back("--shape");
    else if (!use_netem_)
      common_.push_back("--shape-latency");
    // One server coordinates itself. Several: a coordinator of its own first (hw/README.md "Several
    // edge servers": it holds the scheduler and writes the decisions; no fail event kills it, as the
    // simulator's monitor outlives its host's server), in the first server's namespace on port 7071;
    // the servers once it listens (server_listening starts them: they need its port).
    if (!coordinated()) {
      start_one_server(0);
      return;
    }
    std::vector<std::string> argv;
    if (netns_) argv = {"ip", "netns", "exec", server_ns(0)};
    argv.insert(argv.end(), {o_.rt_exe, "serve", o_.scenario, "--coordinate-only", "--bind", netns_ ? "0.0.0.0" : "127.0.0.1", "--port",
                             netns_ ? "7071" : "0", "--port-file", work_ + "/port-coordinator", "--decisions-out", work_ + "/decisions.jsonl"});
    argv.insert(argv.end(), common_.begin(), common_.end());
    argv.insert(argv.end(), {"--epoch", epoch_text_});
    coordinator_.argv = argv;
    coordinator_.child = start_logged(argv, work_ + "/logs/coordinator.log");
    coordinator_.started = true;
  }
  std::string coordinator_address() const { return server_host(0) + ":" + (netns_ ? std::string("7071") : coordinator_.port); }

  // Server j: a single server writes the decisions; with several, each says where devices reach it and
  // where the coordinator listens.
  void start_one_server(int j) {
    ServerProc& p = servers_[static_cast<size_t>(j)];
    std::vector<std::string> argv;
    if (netns_) argv = {"ip", "netns", "exec", server_ns(j)};
    argv.insert(argv.end(), {o_.rt_exe, "serve", o_.scenario, "--server", sc_.servers[static_cast<size_t>(j)].id, "--bind",
                             netns_ ? "0.0.0.0" : "127.0.0.1", "--port", netns_ ? "7070" : "0", "--port-file", port_file(j)});
    if (!coordinated()) argv.insert(argv.end(), {"--decisions-out", work_ + "/decisions.jsonl"});
    argv.insert(argv.end(), common_.begin(), common_.end());
    // The epoch is given to every process, the servers included (their decision times, periods and the
    // end of arrivals count from it).
    argv.insert(argv.end(), {"--epoch", epoch_text_});
    if (coordinated()) {
      argv.insert(argv.end(), {"--coordinator", coordinator_address()});
      if (netns_) argv.insert(argv.end(), {"--advertise", address(j)});
    }
    p.argv = argv;
    p.child = start_logged(argv, work_ + "/logs/" + server_log_name(sc_, j));
    p.started = true;
  }

  bool can_fail_server() const override { return true; }
  void kill_server(int j) override {
    ServerProc& p = servers_[static_cast<size_t>(j)];
    p.child.signal(SIGKILL);
    p.child.wait();
  }
  // The same command on the same address: a namespace's server listens on 7070 in any case; on
  // loopback, on the port the first start was given (the devices reconnect there).
  void restart_server(int j) override {
    ServerProc& p = servers_[static_cast<size_t>(j)];
    std::vector<std::string> argv = p.argv;
    for (size_t k = 0; k + 1 < argv.size(); ++k)
      if (argv[k] == "--port" && argv[k + 1] == "0") argv[k + 1] = p.port;
    argv.push_back("--recovering");
    p.child = start_logged(argv, work_ + "/logs/" + server_log_name(sc_, j), true);
  }

  bool server_listening() override {
    if (coordinator_.started && coordinator_.port.empty()) {
      if (!fs::exists(work_ + "/port-coordinator")) {
        if (!coordinator_.child.running())
          throw std::runtime_error("the coordinator exited (status " + std::to_string(coordinator_.child.status()) + ") before listening; see " +
                                   work_ + "/logs/coordinator.log:\n" + read_run_file(work_ + "/logs/coordinator.log"));
        return false;
      }
      coordinator_.port = read_run_file(work_ + "/port-coordinator");
      coordinator_.port = coordinator_.port.substr(0, coordinator_.port.find('\n'));
      for (size_t j = 0; j < servers_.size(); ++j) start_one_server(static_cast<int>(j));  // it listens: the servers can start
    }
    bool all = true;
    for (size_t j = 0; j < servers_.size(); ++j) {
      ServerProc& p = servers_[j];
      if (!p.started) {
        all = false;
        continue;
      }
      if (!p.port.empty()) continue;
      if (fs::exists(port_file(static_cast<int>(j)))) {
        p.port = read_run_file(port_file(static_cast<int>(j)));
        p.port = p.port.substr(0, p.port.find('\n'));
        continue;
      }
      all = false;
      if (!p.child.running()) {
        const std::string log = work_ + "/logs/" + server_log_name(sc_, static_cast<int>(j));
        throw std::runtime_error("edge server " + sc_.servers[j].id + " exited (status " + std::to_string(p.child.status()) +
                                 ") before listening; see " + log + ":\n" + read_run_file(log));
      }
    }
    return all;
  }

  bool start_devices(const std::atomic<bool>& interrupted) override {
    // The device cap: on the work threads only where cgroup v1 takes thread ids (hw/cpu_cap.hpp).
    cap_scope_ = cpu_cap_scope(o_);
    const bool cap = o_.device_cpu_cores > 0;
    plan_memory_caps();
    mem_caps_.resize(static_cast<size_t>(nd_));
    for (int i = 0; i < nd_; ++i) {
      const DeviceSpec& d = sc_.devices[static_cast<size_t>(i)];
      std::vector<std::string> argv;
      if (netns_) argv = {"ip", "netns", "exec", dev_ns(i)};
      const int k = sc_.server_index(d.server);
      argv.insert(argv.end(), o_.device_launcher.begin(), o_.device_launcher.end());
      argv.insert(argv.end(), {o_.device_rt_exe.empty() ? o_.rt_exe : o_.device_rt_exe, "device", o_.scenario, "--id", d.id, "--host", server_host(k),
                               "--port", servers_[static_cast<size_t>(k)].port, "--epoch", epoch_text_, "--records", journal(i)});
      if (coordinated()) argv.insert(argv.end(), {"--coordinator", coordinator_address()});
      argv.insert(argv.end(), common_.begin(), common_.end());
      for (const std::string& pd : o_.processor_devices) argv.insert(argv.end(), {"--processor-device", pd});
      const bool mem_cap = memory_capacity(i) > 0 && memory_mode_ != "off";
      if ((cap && cap_scope_ == "work") || mem_cap) argv.insert(argv.end(), {"--work-threads-file", tids_file(i)});
      if (auto skew = o_.device_clock_skew_s.find(d.id); skew != o_.device_clock_skew_s.end())
        argv.insert(argv.end(), {"--clock-skew", format_double(skew->second)});
      if (auto meter = o_.device_power_command.find(d.id); meter != o_.device_power_command.end())
        argv.insert(argv.end(), {"--power-command", meter->second});
      devices_.push_back(start_logged(argv, work_ + "/logs/device-" + d.id + ".log"));
      // Capped from here: inside `ip netns exec` the cgroup file system is not mounted. Its memory at
      // once, so that what LibTorch loads is charged to its cgroup (exact: the board's memory; auto:
      // accounted now, limited once it has started, below).
      if (mem_cap)
        mem_caps_[static_cast<size_t>(i)] =
            MemoryCap::apply_to(devices_.back().pid(), memory_mode_ == "exact" ? memory_capacity(i) : std::numeric_limits<double>::infinity(),
                                tag_ + "d" + std::to_string(i));
      if (cap && cap_scope_ == "process") caps_.push_back(CpuCap::apply_to(devices_.back().pid(), o_.device_cpu_cores));
    }
    for (int i = 0; i < nd_; ++i) {
      const bool work_cap = cap && cap_scope_ == "work";
      MemoryCap* mem = mem_caps_[static_cast<size_t>(i)].get();
      if (!work_cap && !mem) continue;
      // Each device writes its compute and upload threads' ids when they start (before time zero,
      // after its model is built).
      const std::vector<long> tids = wait_work_threads(i, interrupted);
      if (interrupted) return false;
      const std::string& id = sc_.devices[static_cast<size_t>(i)].id;
      if (work_cap) {
        caps_.push_back(CpuCap::for_threads(o_.device_cpu_cores, id));
        for (long t : tids) caps_.back()->add_thread(t);
      }
      if (mem && memory_mode_ == "auto") {
        // The board's memory is what the model may use (the simulator's capacity: weights and working
        // sets); the process's own footprint before its first request (LibTorch, code, inputs, the
        // weights once more) comes on top.
        const double footprint = mem->usage_bytes();
        mem->set_limit(memory_capacity(i) + (std::isfinite(footprint) ? footprint : 0));
        footprint_bytes_[id] = footprint;
      }
    }
    if (cap && cap_scope_ == "work" && unix_now() > epoch_) log::warn("testbed", "capping the devices' work threads ended after time zero");
    return true;
  }

  std::vector<bool> shaped_devices() const override { return std::vector<bool>(static_cast<size_t>(nd_), netns_); }
  // tc in the namespaces; on loopback the processes pace themselves.
  void reshape(int device, double mbps) override { shape(device, mbps, false); }
  // The device's cap (process or work threads) becomes (1 - share) x --device-cpu.
  void set_load(int device, double share) override {
    if (static_cast<size_t>(device) >= caps_.size() || !caps_[static_cast<size_t>(device)]) return;
    const double cores = o_.device_cpu_cores * (1 - share);
    caps_[static_cast<size_t>(device)]->set_cores(cores);
    const std::string& id = sc_.devices[static_cast<size_t>(device)].id;
    log::info("testbed", "device " + id + ": background load " + format_double(share) + ": CPU cap " + format_double(cores) + " of " +
                             format_double(o_.device_cpu_cores) + " cores");
    loads_applied_.push_back({{"t_s", unix_now() - epoch_}, {"device", id}, {"load", share}, {"cpu_cores", cores}});
  }

  ProcessState device_state(int device, double) override {
    ProcessState st = state_of(devices_[static_cast<size_t>(device)]);
    if (st.kind == ProcessState::Kind::ended && static_cast<size_t>(device) < mem_caps_.size())
      if (const MemoryCap* mem = mem_caps_[static_cast<size_t>(device)].get(); mem && mem->oom_kills() > 0)
        st.why = "the kernel killed it for memory (" + mem->description() + ")";
    return st;
  }
  ProcessState server_state(int j) override { return state_of(servers_[static_cast<size_t>(j)].child); }
  double poll_interval_s() const override { return 0.01; }
  void stop_devices(double grace_s) override {
    for (auto& c : devices_) c.stop(grace_s);
  }
  void stop_server(double grace_s) override {
    for (size_t j = servers_.size(); j-- > 0;) servers_[j].child.stop(grace_s);  // the servers first, the coordinator last
    coordinator_.child.stop(grace_s);
  }

  bool collect(std::vector<std::string>& journals, std::string& decisions) override {
    note_memory_caps();
    journals.assign(static_cast<size_t>(nd_), "");
    for (int i = 0; i < nd_; ++i)
      if (fs::exists(journal(i))) journals[static_cast<size_t>(i)] = journal(i);
    decisions = fs::exists(work_ + "/decisions.jsonl") ? work_ + "/decisions.jsonl" : "";
    return true;
  }

  bool finish() override {
    undo();
    return true;
  }

  nlohmann::json info() const override {
    const bool capped = o_.device_cpu_cores > 0;
    // Where each server listened (and the coordinator of several), with its log (hw/README.md "Several
    // edge servers").
    nlohmann::json servers = nlohmann::json::array();
    for (size_t j = 0; j < servers_.size(); ++j)
      servers.push_back(
          {{"id", sc_.servers[j].id}, {"address", address(static_cast<int>(j))}, {"log", "logs/" + server_log_name(sc_, static_cast<int>(j))}});
    nlohmann::json coordinator = nullptr;
    if (coordinator_.started) coordinator = {{"address", coordinator_address()}, {"log", "logs/coordinator.log"}};
    return {
        {"mode", netns_ ? "netns" : "loopback"},
        {"servers", servers},
        {"coordinator", coordinator},
        {"device_cpu_cores", o_.device_cpu_cores},
        {"device_cpu_scope", capped ? cap_scope_ : std::string("none")},
        {"device_memory", {{"mode", memory_mode_}, {"requested", o_.device_memory}, {"unavailable", memory_unavailable_}, {"devices", memory_info_}}},
        {"fallback_reason", why_not_},
        {"device_program", device_program_},
        {"loads_applied", loads_applied_},
        {"shaping", !netns_ ? "middleware (rate and latency per device; no shared access point)"
                    : use_netem_
                        ? "device links: tc netem (rate and latency); access point (shared, both directions) and server link: tc tbf"
                        : "device links: tc tbf (rate), middleware (latency); access point (shared, both directions) and server link: tc tbf"}};
  }
  std::string summary_mode() const override { return netns_ ? "network namespaces + tc" : "loopback + middleware shaping"; }
  std::string started_what() const override {
    return (servers_.size() == 1 ? std::string("the edge server") : std::to_string(servers_.size()) + " edge servers") + " and " +
           std::to_string(nd_) + " device processes";
  }

 private:
  // A coordinator of its own: with several servers, and with one that fails (its scheduler then
  // outlives it, as the simulator's monitor does, and decides on its failure and recovery).
  bool coordinated() const {
    if (servers_.size() > 1) return true;
    for (const EventSpec& e : sc_.events)
      if (e.is<event::ServerFail>()) return true;
    return false;
  }
  std::string server_ns(int j) const { return j == 0 ? tag_ + "s" : tag_ + "s" + std::to_string(j); }
  // Server j's address for devices and peers: 10.200.j.1:7070 in its namespace, 127.0.0.1 and the port
  // it listens on over loopback.
  std::string server_host(int j) const { return netns_ ? "10.200." + std::to_string(j) + ".1" : "127.0.0.1"; }
  std::string address(int j) const { return server_host(j) + ":" + (netns_ ? std::string("7070") : servers_[static_cast<size_t>(j)].port); }
  std::string ap_ns() const { return tag_ + "p"; }
  std::string dev_ns(int i) const { return tag_ + "d" + std::to_string(i); }
  std::string veth_ap(int i) const { return tag_ + "a" + std::to_string(i); }
  std::string veth_device(int i) const { return tag_ + "b" + std::to_string(i); }
  std::string port_file(int j) const { return j == 0 ? work_ + "/port" : work_ + "/port-" + std::to_string(j); }
  std::string journal(int i) const { return work_ + "/device-" + std::to_string(i) + ".jsonl"; }
  std::string tids_file(int i) const { return work_ + "/device-" + std::to_string(i) + ".tids"; }

  // The work threads' ids device i writes when they start; empty when interrupted. Throws when the
  // device ends first (saying when the kernel killed it for memory) or takes over 60 s.
  std::vector<long> wait_work_threads(int i, const std::atomic<bool>& interrupted) {
    const std::string& id = sc_.devices[static_cast<size_t>(i)].id;
    const auto deadline = std::chrono::steady_clock::now() + Seconds(60);
    std::vector<long> tids;
    while (!interrupted) {
      tids.clear();
      std::ifstream in(tids_file(i));
      for (long t; in >> t;) tids.push_back(t);
      if (tids.size() >= 2) return tids;
      if (!devices_[static_cast<size_t>(i)].running()) {
        // A device that refused its input (exit 2: the scenario, an option) is the user's to fix: its
        // message, exit 2 here too (the testbed's output folder is not made).
        if (devices_[static_cast<size_t>(i)].status() == 2) {
          std::ifstream log(work_ + "/logs/device-" + id + ".log");
          std::string line, error;
          while (std::getline(log, line))
            if (line.rfind("error: ", 0) == 0) error = line.substr(7);
          if (!error.empty()) throw InputError("device " + id + " refused to start: " + error);
        }
        const MemoryCap* mem = mem_caps_[static_cast<size_t>(i)].get();
        throw std::runtime_error("device " + id + " exited before starting" +
                                 (mem && mem->oom_kills() > 0 ? ": the kernel killed it for memory (" + mem->description() +
                                                                    "): the board's memory is below what the process needs before its "
                                                                    "first request (--device-memory auto adds that footprint)"
                                                              : std::string()) +
                                 "; see " + work_ + "/logs/device-" + id + ".log");
      }
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("device " + id + " did not start its work threads within 60 s");
      std::this_thread::sleep_for(Seconds(0.02));
    }
    return {};
  }

  // Device i's memory (memory_gb or its profile's capacity; 0 = not stated), bytes.
  double memory_capacity(int i) const {
    const DeviceSpec& d = sc_.devices[static_cast<size_t>(i)];
    return d.hardware ? d.hardware->pool_capacity_bytes.at(0) : 0;
  }

  // --device-memory: auto and exact need a writable cgroup memory controller; without one (or
  // without any device stating its memory) nothing is limited by the kernel, said once.
  void plan_memory_caps() {
    memory_mode_ = o_.device_memory;
    bool any = false;
    for (int i = 0; i < nd_; ++i) any = any || memory_capacity(i) > 0;
    if (memory_mode_ == "off" || !any) {
      memory_mode_ = "off";
      return;
    }
    if (!o_.device_launcher.empty()) {  // the cgroup would hold the launcher, not the device (see the constructor)
      memory_unavailable_ = "the devices run under a launcher (--device-launcher)";
      if (!o_.quiet) log::warn("testbed", "the devices' memory is not limited by the kernel: " + memory_unavailable_);
      memory_mode_ = "off";
      return;
    }
    std::string why;
    if (!MemoryCap::available(&why)) {
      if (o_.device_memory == "exact") throw std::runtime_error("--device-memory exact: " + why);
      log::warn("testbed", "the devices' memory is not limited by the kernel (" + why +
                               "); each device runtime still limits its LibTorch tensors to the board's memory");
      memory_mode_ = "off";
      memory_unavailable_ = why;
    }
  }

  // After the run: each device the kernel killed for memory gets its journal's unfinished requests
  // failed with the reason (hw/record_journal.hpp "cut" note), and testbed.json the figures.
  void note_memory_caps() {
    for (int i = 0; i < nd_ && i < static_cast<int>(mem_caps_.size()); ++i) {
      const MemoryCap* mem = mem_caps_[static_cast<size_t>(i)].get();
      if (!mem) continue;
      const DeviceSpec& d = sc_.devices[static_cast<size_t>(i)];
      const long kills = mem->oom_kills();
      nlohmann::json j = {
          {"limit_mb", mem->limit_bytes() / 1e6}, {"board_memory_mb", memory_capacity(i) / 1e6}, {"how", mem->description()}, {"oom_kills", kills}};
      if (auto f = footprint_bytes_.find(d.id); f != footprint_bytes_.end()) j["footprint_before_first_request_mb"] = f->second / 1e6;
      if (const double peak = mem->peak_bytes(); std::isfinite(peak)) j["peak_mb"] = peak / 1e6;
      memory_info_[d.id] = j;
      if (kills == 0) continue;
      const std::string why = "out of memory on " + d.id + ":" + d.default_processor() + " (the kernel killed the device process at its " +
                              format_double(std::round(mem->limit_bytes() / 1e5) / 10) + " MB limit, " + mem->description() + ")";
      log::warn("testbed", "device " + d.id + ": " + why);
      if (fs::exists(journal(i))) {
        const std::string text = cut_journal_text(read_run_file(journal(i)), why);
        std::ofstream(journal(i)) << text;
      }
    }
  }

  static ProcessState state_of(Child& c) {
    ProcessState s;
    if (c.pid() <= 0 || !c.running()) {
      s.kind = ProcessState::Kind::ended;
      s.status = c.pid() <= 0 ? 0 : c.status();
    }
    return s;
  }

  // tc netem shapes rate and delay; kernels without sch_netem get tbf for the rate and the one-way
  // latency added by the middleware's sender instead (recorded in testbed.json). The whole path's
  // latency (device link + access point + server link, core/scenario.hpp) sits on the device link.
  void tbf(const std::string& ns, const std::string& dev, double mbps, bool add) {
    // Bucket of 1 ms at the rate (at least two full-size frames), queue of up to 1 s.
    const long burst = std::max(3028L, static_cast<long>(mbps_to_bytes_per_s(mbps) * 0.001));
    must({"ip", "netns", "exec", ns, "tc", "qdisc", add ? "add" : "change", "dev", dev, "root", "tbf", "rate", rate_text(mbps), "burst",
          std::to_string(burst), "latency", "1000ms"});
  }
  void shape(int i, double mbps, bool add) {
    const double lat = one_way_latency_s(sc_, static_cast<size_t>(i)) * 1e3;
    for (int side = 0; side < 2; ++side) {
      const std::string ns = side == 0 ? dev_ns(i) : ap_ns();
      const std::string dev = side == 0 ? veth_device(i) : veth_ap(i);
      std::vector<std::string> netem = {
          "ip",    "netns",         "exec",  ns,      "tc", "qdisc", add ? "add" : "change", "dev", dev, "root", "netem", "rate", rate_text(mbps),
          "delay", delay_text(lat), "limit", "100000"};
      std::string err;
      if (use_netem_ && run_command(netem, &err) == 0) continue;
      if (use_netem_ && add && side == 0 && i == 0 && err.find("unknown") != std::string::npos) {
        use_netem_ = false;
        if (!o_.quiet) log::info("testbed", "this kernel has no tc netem: shaping the rate with tbf, adding the link latency in the middleware");
      } else if (use_netem_) {
        throw std::runtime_error("'" + join(netem, " ") + "' failed: " + err);
      }
      tbf(ns, dev, mbps, add);
    }
  }

  // The network, as the simulator's platform (sim/platform_builder.cpp) has it:
  //   device i ──(its link, shaped both ways)── access point ──(server link, shaped both ways)── server
  // each device in its own namespace, the access point a namespace that routes between them, where
  // every device's traffic in both directions goes through one intermediate functional block (ifb)
  // shaped at the access point's rate: the shared medium, both directions sharing it as the
  // simulator's single access_point link does. Server j has its own namespace and link to the access
  // point and the address 10.200.j.1; the servers reach each other through the access point too.
  bool build_network(const std::atomic<bool>& interrupted) {
    const std::string ap_medium = tag_ + "m";  // the ifb in the access point
    run_command({"ip", "netns", "add", ap_ns()});
    namespaces_.push_back(ap_ns());
    must({"ip", "-n", ap_ns(), "link", "set", "lo", "up"});
    must({"ip", "netns", "exec", ap_ns(), "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"});
    for (size_t j = 0; j < sc_.servers.size(); ++j) {  // the server links
      const int k = static_cast<int>(j);
      const std::string suffix = j == 0 ? "" : std::to_string(j);
      const std::string veth_server_side = tag_ + "sv" + suffix, veth_ap_uplink = tag_ + "up" + suffix;  // server ns / ap ns
      const std::string net = "10.200." + std::to_string(j) + ".";
      if (j > 0) {
        run_command({"ip", "netns", "add", server_ns(k)});
        namespaces_.push_back(server_ns(k));
      }
      must({"ip", "-n", server_ns(k), "link", "set", "lo", "up"});
      must({"ip", "link", "add", veth_server_side, "type", "veth", "peer", "name", veth_ap_uplink});
      must({"ip", "link", "set", veth_server_side, "netns", server_ns(k)});
      must({"ip", "link", "set", veth_ap_uplink, "netns", ap_ns()});
      must({"ip", "-n", server_ns(k), "addr", "add", net + "1/24", "dev", veth_server_side});
      must({"ip", "-n", ap_ns(), "addr", "add", net + "2/24", "dev", veth_ap_uplink});
      must({"ip", "-n", server_ns(k), "link", "set", veth_server_side, "up"});
      must({"ip", "-n", ap_ns(), "link", "set", veth_ap_uplink, "up"});
      must({"ip", "-n", server_ns(k), "route", "add", "10.201.0.0/16", "via", net + "2"});
      if (sc_.servers.size() > 1) must({"ip", "-n", server_ns(k), "route", "add", "10.200.0.0/16", "via", net + "2"});
      tbf(server_ns(k), veth_server_side, sc_.servers[j].link.bandwidth_mbps, true);  // server -> devices
      tbf(ap_ns(), veth_ap_uplink, sc_.servers[j].link.bandwidth_mbps, true);         // devices -> server
    }
    // The access point's shared medium.
    must({"ip", "-n", ap_ns(), "link", "add", ap_medium, "type", "ifb"});
    must({"ip", "-n", ap_ns(), "link", "set", ap_medium, "up"});
    // Beyond the bound of one link (1 Tbit/s; the loader allows more only so that an access point that
    // never binds can be written for any population) tc's bucket cannot be sized: the medium is left
    // unshaped, which is what such a rate means on this host.
    if (sc_.access_point.bandwidth_mbps <= limits::kMaxBandwidthMbps)
      tbf(ap_ns(), ap_medium, sc_.access_point.bandwidth_mbps, true);
    else
      log::info("testbed", "the access point's " + format_double(sc_.access_point.bandwidth_mbps) +
                               " Mbit/s is beyond what tc shapes (1 Tbit/s): its medium is left unshaped");
    for (int i = 0; i < nd_; ++i) {
      if (interrupted) return false;
      run_command({"ip", "netns", "add", dev_ns(i)});
      namespaces_.push_back(dev_ns(i));
      must({"ip", "link", "add", veth_ap(i), "type", "veth", "peer", "name", veth_device(i)});
      must({"ip", "link", "set", veth_ap(i), "netns", ap_ns()});
      must({"ip", "link", "set", veth_device(i), "netns", dev_ns(i)});
      const std::string net = "10.201." + std::to_string(i) + ".";
      must({"ip", "-n", ap_ns(), "addr", "add", net + "1/24", "dev", veth_ap(i)});
      must({"ip", "-n", dev_ns(i), "addr", "add", net + "2/24", "dev", veth_device(i)});
      must({"ip", "-n", ap_ns(), "link", "set", veth_ap(i), "up"});
      must({"ip", "-n", dev_ns(i), "link", "set", veth_device(i), "up"});
      must({"ip", "-n", dev_ns(i), "link", "set", "lo", "up"});
      must({"ip", "-n", dev_ns(i), "route", "add", "default", "via", net + "1"});
      shape(i, schedules_[static_cast<size_t>(i)].mbps_at(0), true);
      // Both directions of this device through the shared medium: what the device sends (ingress here)
      // and what it receives (egress here, before its own link's qdisc).
      must({"ip", "netns", "exec", ap_ns(), "tc", "qdisc", "add", "dev", veth_ap(i), "clsact"});
      for (const char* hook : {"ingress", "egress"})
        must({"ip",  "netns", "exec", ap_ns(), "tc", "filter", "add",    "dev",    veth_ap(i), hook,  "protocol", "all",
              "u32", "match", "u32",  "0",     "0",  "action", "mirred", "egress", "redirect", "dev", ap_medium});
    }
    if (!o_.quiet)
      log::info("testbed", "created " + std::to_string(nd_ + 1 + static_cast<int>(sc_.servers.size())) + " network namespaces (server" +
                               (sc_.servers.size() > 1 ? "s " + server_ns(0) + ".." : " " + server_ns(0)) + ", access point " + ap_ns() +
                               ", devices " + dev_ns(0) + "..): device links shaped by tc " + (use_netem_ ? "netem" : "tbf") +
                               ", the access point's shared medium (" + format_double(sc_.access_point.bandwidth_mbps) +
                               " Mbit/s, both directions) and the server link" + (sc_.servers.size() > 1 ? "s" : "") + " (" +
                               format_double(sc_.servers.front().link.bandwidth_mbps) + " Mbit/s each way" +
                               (sc_.servers.size() > 1 ? " for the first" : "") + ") by tbf");
    return true;
  }

  // Processes stopped, cgroups removed once their processes are gone, namespaces deleted.
  void undo() {
    for (auto& c : devices_) c.stop(2);
    for (size_t j = servers_.size(); j-- > 0;) servers_[j].child.stop(2);
    coordinator_.child.stop(2);
    devices_.clear();
    caps_.clear();
    mem_caps_.clear();
    for (auto it = namespaces_.rbegin(); it != namespaces_.rend(); ++it) run_command({"ip", "netns", "del", *it});
    namespaces_.clear();
  }

  const Scenario& sc_;
  const TestbedOptions& o_;
  const int nd_;
  std::vector<BandwidthSchedule> schedules_;
  std::string tag_, work_, secret_file_, why_not_, cap_scope_;
  bool netns_ = false, use_netem_ = true;
  double epoch_ = 0;
  char epoch_text_[64] = {0};
  std::vector<std::string> common_;  // arguments for the server and every device
  std::vector<std::string> namespaces_;
  // Per scenario server: its process, how it was started (restart_server starts it so again), its port.
  struct ServerProc {
    Child child;
    std::vector<std::string> argv;
    std::string port;
    bool started = false;
  };
  std::vector<ServerProc> servers_;
  ServerProc coordinator_;  // several servers: the process that only coordinates
  std::vector<Child> devices_;
  std::vector<std::unique_ptr<CpuCap>> caps_;
  nlohmann::json loads_applied_ = nlohmann::json::array();  // background-load changes as applied (testbed.json)
  // Per device: its memory cgroup (null where none); the mode in force; figures for testbed.json.
  std::vector<std::unique_ptr<MemoryCap>> mem_caps_;
  std::string memory_mode_ = "off", memory_unavailable_;
  nlohmann::json device_program_ = nullptr;  // the devices' own program, when not the testbed's (check_device_program)
  std::map<std::string, double> footprint_bytes_;
  nlohmann::json memory_info_ = nlohmann::json::object();
};

}  // namespace

int cleanup_stray_namespaces() {
  ChildSpec list;
  list.argv = {"ip", "netns", "list"};
  list.capture_stdout = true;
  std::istringstream in(run_child(list, 60).out);
  std::string line;
  int removed = 0;
  while (std::getline(in, line)) {
    const std::string name = line.substr(0, line.find(' '));
    bool ours = name.size() > 3 && name.rfind("cf", 0) == 0 && std::isdigit(static_cast<unsigned char>(name[2]));
    if (!ours) continue;
    // What still runs inside it goes first (a namespace with processes is only unlinked by `del`).
    ChildSpec pids;
    pids.argv = {"ip", "netns", "pids", name};
    pids.capture_stdout = true;
    std::istringstream listed(run_child(pids, 60).out);
    std::vector<pid_t> inside;
    for (long pid = 0; listed >> pid;)
      if (pid > 1 && ::kill(static_cast<pid_t>(pid), SIGTERM) == 0) inside.push_back(static_cast<pid_t>(pid));
    for (int waited = 0; waited < 60 && std::any_of(inside.begin(), inside.end(), [](pid_t p) { return ::kill(p, 0) == 0; }); ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (pid_t p : inside)
      if (::kill(p, 0) == 0) ::kill(p, SIGKILL);
    for (pid_t p : inside) std::cout << "stopped process " << p << " in namespace " << name << "\n";
    if (run_command({"ip", "netns", "del", name}) == 0) {
      std::cout << "removed namespace " << name << "\n";
      ++removed;
    }
  }
  return removed;
}

std::unique_ptr<TestbedHosts> make_netns_hosts(const Scenario& sc, const TestbedOptions& o) { return std::make_unique<NetnsHosts>(sc, o); }

}  // namespace coinfer::hw
