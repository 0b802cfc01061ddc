// The testbed's back-end on real hosts over SSH (hw/testbed_hosts.hpp; hw/README.md "A real testbed
// over SSH"). The edge server and every board named by the inventory (hw/inventory.hpp) run coinfer
// itself, started with OpenSSH's client; nothing else of ours is installed there.
//
// prepare: checks every host before anything starts (reachable, `coinfer version` the same as here —
// program and wire protocol —, the architecture the inventory states); sends each a run folder with the
// scenario, the LUTs and traces it names (their relative layout kept) and a fresh shared secret (mode
// 0600), and has `coinfer check` load the scenario there; applies the scenario's bandwidth on boards
// marked `shape: true` with tc (both directions of their interface). Each host gets time zero on its own
// clock (offsets estimated while checking; the clock probes of hw/clock_sync.hpp then correct the
// journals); every device's journal streams back live. collect copies the journals and the decisions
// back; a board that became unreachable keeps what it streamed until then, and its unfinished requests
// are failed with that reason. finish (or the destructor, on an error or Ctrl-C) stops every remote
// process (its process group), removes shaping and the run folders.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/bandwidth_schedule.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/text_util.hpp"
#include "core/units.hpp"
#include "hw/auth.hpp"
#include "hw/protocol.hpp"
#include "hw/record_journal.hpp"
#include "hw/remote_host.hpp"
#include "hw/runtime_version.hpp"
#include "hw/testbed.hpp"
#include "hw/testbed_hosts.hpp"
#include "plumbing/child_process.hpp"
#include "io/data_root.hpp"
#include "hw/inventory.hpp"
#include "io/lut_repository.hpp"
#include "io/scenario_loader.hpp"
#include "sched/scheduler_factory.hpp"

namespace fs = std::filesystem;

namespace coinfer::hw {

namespace {

using Seconds = std::chrono::duration<double>;

// One host's part of the run.
struct HostRun {
  RemoteHost host;
  std::string path;           // "server" or "boards[i]": the inventory's key for messages
  std::string dir;            // its run folder on the host
  std::string cwd;            // where its processes run (inside dir/data: relative paths as here)
  bool has_dir = false;       // dir exists there (removed at the end)
  bool started = false;       // a process of ours may run there (dir/pid names its process group)
  bool shaped = false;        // tc shaping applied on its interface
  double clock_offset_s = 0;  // its clock minus ours, from the check (a coarse estimate: start times only)
  Child ssh;                  // the local ssh client of its process
  bool lost = false;          // its ssh session broke (255) before its process ended
  double lost_at_s = NAN;     // run time when that was seen
  std::string lost_why;       // the last line its ssh client wrote
  std::string lost_report;    // what the run reports: board, address, time and lost_why
  explicit HostRun(const InventoryHost& h, std::string p) : host(h), path(std::move(p)) {}
};

// The remote shell command that stops the process group named by DIR/pid: SIGTERM, up to `grace_s`
// for it to end, then SIGKILL; prints "gone" when nothing of it is left.
std::string stop_command(const std::string& dir, double grace_s) {
  const std::string pid = shell_quote(dir + "/pid");
  const int tenths = static_cast<int>(std::ceil(grace_s * 10));
  return "p=$(cat " + pid +
         " 2>/dev/null) || { echo gone; exit 0; }; "
         "kill -s TERM -- -$p 2>/dev/null; i=0; "
         "while kill -s 0 -- -$p 2>/dev/null && [ $i -lt " +
         std::to_string(tenths) +
         " ]; do sleep 0.1; i=$((i+1)); done; "
         "kill -s KILL -- -$p 2>/dev/null; sleep 0.1; kill -s 0 -- -$p 2>/dev/null || echo gone";
}

std::string tbf_args(double mbps) {
  const long burst = std::max(3028L, static_cast<long>(mbps_to_bytes_per_s(mbps) * 0.001));
  return "tbf rate " + std::to_string(std::max(8L, std::lround(mbps * 1000))) + "kbit burst " + std::to_string(burst) + " latency 1000ms";
}

// Everything started on the hosts, undone by the destructor whatever happened: processes stopped,
// shaping removed, run folders removed (unless kept). What cannot be undone (a host unreachable by
// then) is reported with what to do by hand.
struct RemoteSetup {
  std::vector<HostRun> hosts;  // [0] the server, then the boards in scenario device order
  std::string ifb;             // the ifb device name used for shaping a board's downlink
  bool keep = false;
  bool clean = true;  // every undo step succeeded

  void stop_process(HostRun& h, double grace_s) {
    if (!h.started) return;
    const ChildResult r = h.host.run(stop_command(h.dir, grace_s), grace_s + 15);
    h.started = false;  // one attempt: an unreachable host is reported once, with what to do by hand
    if (r.status != 0 || r.out.find("gone") == std::string::npos) {
      clean = false;
      log::error("testbed", "could not stop coinfer on " + h.host.host().name + " (" + h.host.describe() +
                                "): " + (RemoteHost::ssh_failure(r).empty() ? trim_end(r.err) : RemoteHost::ssh_failure(r)) +
                                "; its process group is in " + h.dir + "/pid there: stop it by hand");
    }
    if (h.ssh.pid() > 0) h.ssh.stop(2);
  }
  void unshape(HostRun& h) {
    if (!h.shaped) return;
    const std::string tc = h.host.host().sudo ? "sudo -n tc" : "tc";
    const std::string ip = h.host.host().sudo ? "sudo -n ip" : "ip";
    const std::string dev = shell_quote(iface_of(h));
    const ChildResult r = h.host.run(
        tc + " qdisc del dev " + dev + " root; " + tc + " qdisc del dev " + dev + " ingress; " + ip + " link del " + shell_quote(ifb) + "; true", 20);
    if (!RemoteHost::ssh_failure(r).empty()) {
      clean = false;
      log::error("testbed", "could not remove the tc shaping on " + h.host.host().name + " (" + h.host.describe() +
                                "): " + RemoteHost::ssh_failure(r) + "; remove it by hand: tc qdisc del dev " + iface_of(h) +
                                " root; tc qdisc del dev " + iface_of(h) + " ingress; ip link del " + ifb);
    } else {
      h.shaped = false;
    }
  }
  void remove_dir(HostRun& h) {
    if (!h.has_dir || keep) return;
    const ChildResult r = h.host.run("rm -rf -- " + shell_quote(h.dir), 30);
    h.has_dir = false;
    if (r.status != 0) log::warn("testbed", "could not remove " + h.dir + " on " + h.host.host().name + " (" + h.host.describe() + ")");
  }
  std::string iface_of(const HostRun& h) const { return board_iface.count(h.host.host().name) ? board_iface.at(h.host.host().name) : ""; }
  std::map<std::string, std::string> board_iface;

  ~RemoteSetup() {
    for (auto it = hosts.rbegin(); it != hosts.rend(); ++it) stop_process(*it, 3);
    for (auto& h : hosts) unshape(h);
    for (auto& h : hosts) remove_dir(h);
  }
};

// The files a run reads here that the hosts need too (scenario, LUT files, traces), absolute.
std::vector<std::string> bundle_files(const Scenario& sc, const LutSet& luts) {
  std::vector<std::string> out;
  for (const auto& f : run_data_files(sc, luts)) {
    if (f.role != "scenario" && f.role != "lut" && f.role != "bandwidth trace" && f.role != "arrival trace") continue;
    const std::string p = fs::absolute(f.path).lexically_normal().string();
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

// The deepest folder holding every path.
fs::path common_ancestor(const std::vector<std::string>& paths) {
  fs::path common;
  bool first = true;
  for (const auto& p : paths) {
    const fs::path dir = fs::path(p);
    if (first) {
      common = dir;
      first = false;
      continue;
    }
    fs::path next;
    auto a = common.begin();
    auto b = dir.begin();
    for (; a != common.end() && b != dir.end() && *a == *b; ++a, ++b) next /= *a;
    common = next;
  }
  return common.empty() ? fs::path("/") : common;
}

class SshHosts final : public TestbedHosts {
 public:
  SshHosts(const Scenario& sc, const TestbedOptions& o)
      : sc_(sc), o_(o), inv_(load_inventory(o.inventory)), nd_(static_cast<int>(sc.devices.size())) {
    check_inventory_against(inv_, sc);
    if (sc.servers.size() > 1)
      throw InputError(SourceLocation{o.inventory, 0, 0}, "server",
                       "the scenario has " + std::to_string(sc.servers.size()) +
                           " servers; an inventory names one server host. Several servers run on the namespace and loopback testbed "
                           "(run without --inventory), or as `coinfer serve --server ID --coordinator HOST:PORT` on each host by hand");
    if (o.loopback || o.device_cpu_cores > 0)
      throw InputError(SourceLocation{o.inventory, 0, 0}, o.loopback ? "--loopback" : "--device-cpu",
                       "does not apply to real hosts (--inventory): they run at their own speed on their own network");
    for (const auto& e : sc.events)
      if (e.is<event::Load>())
        throw InputError(e.where, "events",
                         "background load is applied on namespace or loopback testbeds (a cgroup CPU cap on this machine); real boards over "
                         "SSH would need a competing process on each board, which is not built: remove the load events, or run the testbed without "
                         "--inventory");
    for (const auto& d : sc.devices) schedules_.emplace_back(d, sc.events);
    setup_.keep = o.keep_remote;
    setup_.ifb = "cfifb" + std::to_string(::getpid() % 100000);
    setup_.hosts.emplace_back(inv_.server, "server");
    for (const auto& d : sc.devices)
      for (size_t i = 0; i < inv_.boards.size(); ++i)
        if (inv_.boards[i].device == d.id) {
          setup_.hosts.emplace_back(inv_.boards[i], "boards[" + std::to_string(i) + "]");
          setup_.board_iface[d.id] = inv_.boards[i].interface;
          boards_.push_back(&inv_.boards[i]);
        }
  }

  bool prepare(const std::string& work, const std::atomic<bool>& interrupted) override {
    work_ = work;
    const LutSet luts = load_scenario_luts(sc_);
    check_scenario_against(sc_, ModelCatalog::load(data_path("models")), luts, scheduler_traits(sc_.scheduler.name));
    bundle(luts);
    const std::string run_id =
        "coinfer-" + sc_.name.substr(0, 40) + "-" + std::to_string(static_cast<long long>(unix_now())) + "-" + std::to_string(::getpid());
    return check_hosts(interrupted) && send_run_folders(run_id, interrupted) && shape_boards();
  }

  double server_start_s() const override { return 5; }  // ssh's own start on top of the server's

  void start_server(double epoch) override {
    epoch_ = epoch;
    for (const auto& s : o_.sets) common_sets_.insert(common_sets_.end(), {"--set", s});
    HostRun& server = setup_.hosts.front();
    std::vector<std::string> argv = {inv_.server.coinfer,
                                     "serve",
                                     server.dir + "/data/" + rel_scenario_,
                                     "--bind",
                                     "0.0.0.0",
                                     "--port",
                                     std::to_string(inv_.server.service_port),
                                     "--port-file",
                                     server.dir + "/port",
                                     "--decisions-out",
                                     server.dir + "/decisions.jsonl",
                                     "--secret-file",
                                     server.dir + "/secret",
                                     "--threads",
                                     std::to_string(o_.threads),
                                     "--epoch",
                                     epoch_on(server, 0)};
    argv.insert(argv.end(), common_sets_.begin(), common_sets_.end());
    launch(server, argv, work_ + "/logs/server.log", "&1");
  }

  bool server_listening() override {
    HostRun& server = setup_.hosts.front();
    if (!server.ssh.running())
      throw std::runtime_error("the edge server on " + server.host.describe() + " exited (" + describe_exit_status(server.ssh.status()) +
                               ") before listening; see " + work_ + "/logs/server.log:\n" + read_run_file(work_ + "/logs/server.log"));
    if (server.host.run("test -s " + shell_quote(server.dir + "/port"), 15).status == 0) return true;
    std::this_thread::sleep_for(Seconds(0.25));  // each check is an ssh round trip: no need to ask more often
    return false;
  }

  bool start_devices(const std::atomic<bool>&) override {
    for (int i = 0; i < nd_; ++i) {
      HostRun& h = board_of(i);
      const InventoryBoard& b = *boards_[static_cast<size_t>(i)];
      const auto skew = o_.device_clock_skew_s.find(b.device);
      const double skew_s = skew == o_.device_clock_skew_s.end() ? 0 : skew->second;
      std::vector<std::string> argv = {b.coinfer,
                                       "device",
                                       h.dir + "/data/" + rel_scenario_,
                                       "--id",
                                       b.device,
                                       "--host",
                                       inv_.server.service_address,
                                       "--port",
                                       std::to_string(inv_.server.service_port),
                                       "--secret-file",
                                       h.dir + "/secret",
                                       "--epoch",
                                       epoch_on(h, skew_s),
                                       "--records",
                                       h.dir + "/journal.jsonl",
                                       "--records-stdout",
                                       "--threads",
                                       std::to_string(o_.threads)};
      if (skew_s != 0) argv.insert(argv.end(), {"--clock-skew", format_double(skew_s)});
      std::string meter = b.power_command;
      if (auto m = o_.device_power_command.find(b.device); m != o_.device_power_command.end()) meter = m->second;
      if (!meter.empty()) argv.insert(argv.end(), {"--power-command", meter});
      for (const std::string& pd : o_.processor_devices) argv.insert(argv.end(), {"--processor-device", pd});
      argv.insert(argv.end(), common_sets_.begin(), common_sets_.end());
      launch(h, argv, stream_file(i), work_ + "/logs/device-" + b.device + ".log");
    }
    return true;
  }

  std::vector<bool> shaped_devices() const override {
    std::vector<bool> out;
    for (const InventoryBoard* b : boards_) out.push_back(b->shape);
    return out;
  }
  void reshape(int device, double mbps) override {
    if (!board_of(device).lost) shape(device, mbps, false);
  }
  void set_load(int, double) override {}  // refused when made (no load event reaches here)

  ProcessState device_state(int device, double run_time_s) override {
    HostRun& h = board_of(device);
    ProcessState s;
    if (h.ssh.running()) return s;
    if (!h.lost && h.started && h.ssh.status() == 255) {
      // The ssh session broke while the device ran: the board is unreachable (or sshd died).
      h.lost = true;
      h.lost_at_s = run_time_s;
      h.lost_why = trim_end(read_run_file(work_ + "/logs/device-" + boards_[static_cast<size_t>(device)]->device + ".log"));
      const auto nl = h.lost_why.rfind('\n');
      if (nl != std::string::npos) h.lost_why = h.lost_why.substr(nl + 1);
      h.lost_report = strprintf("board %s (%s) at t = %.1f s: %s", boards_[static_cast<size_t>(device)]->device.c_str(), h.host.describe().c_str(),
                                run_time_s, h.lost_why.c_str());
    }
    if (h.lost) {
      s.kind = ProcessState::Kind::lost;
      s.why = h.lost_report;
    } else {
      h.started = false;  // its process ended by itself
      s.kind = ProcessState::Kind::ended;
      s.status = h.ssh.status();
    }
    return s;
  }
  ProcessState server_state(int) override {
    HostRun& server = setup_.hosts.front();
    ProcessState s;
    if (!server.ssh.running()) {
      s.kind = ProcessState::Kind::ended;
      s.status = server.ssh.status();
    }
    return s;
  }
  double poll_interval_s() const override { return 0.05; }
  void stop_devices(double grace_s) override {
    for (int i = 0; i < nd_; ++i) setup_.stop_process(board_of(i), grace_s);
  }
  void stop_server(double grace_s) override { setup_.stop_process(setup_.hosts.front(), grace_s); }

  bool collect(std::vector<std::string>& journals, std::string& decisions) override {
    bool complete = true;
    journals.assign(static_cast<size_t>(nd_), "");
    for (int i = 0; i < nd_; ++i) {
      HostRun& h = board_of(i);
      const std::string& id = boards_[static_cast<size_t>(i)]->device;
      const std::string local = work_ + "/device-" + std::to_string(i) + ".jsonl";
      const ChildResult r = h.lost ? ChildResult{} : h.host.run_to_file("cat " + shell_quote(h.dir + "/journal.jsonl"), local, 120);
      journals[static_cast<size_t>(i)] = local;
      if (!h.lost && r.status == 0) continue;
      // The live copy, cut where the stream broke: its torn last line dropped, and a note saying why
      // its unfinished requests failed (hw/record_journal.hpp).
      const std::string why = h.lost ? strprintf("board %s became unreachable at t = %.1f s (%s); nothing it did after that was collected",
                                                 id.c_str(), h.lost_at_s, h.lost_why.c_str())
                                     : "the journal of board " + id + " could not be copied back (" + RemoteHost::ssh_failure(r) + trim_end(r.err) +
                                           "); its live copy ends here";
      std::ofstream(local) << cut_journal_text(read_run_file(stream_file(i)), why);
      if (!h.lost) log::warn("testbed", why);
      complete = false;
    }
    for (int i = 0; i < nd_; ++i) fs::remove(stream_file(i));
    decisions = work_ + "/decisions.jsonl";
    HostRun& server = setup_.hosts.front();
    const ChildResult r = server.host.run_to_file("cat " + shell_quote(server.dir + "/decisions.jsonl"), decisions, 120);
    if (r.status != 0) {
      log::warn("testbed", "the decisions journal could not be copied from " + server.host.describe() + ": " + trim_end(r.err));
      fs::remove(decisions);
      decisions.clear();
      complete = false;
    }
    return complete;
  }

  bool finish() override {
    for (size_t k = 0; k < setup_.hosts.size(); ++k) {
      const HostRun& h = setup_.hosts[k];
      hosts_info_.push_back({{"name", h.host.host().name},
                             {"address", h.host.describe()},
                             {"arch", h.host.host().arch},
                             {"clock_offset_estimate_s", h.clock_offset_s},
                             {"shaped", k > 0 && boards_[k - 1]->shape},
                             {"lost_at_s", h.lost ? nlohmann::json(h.lost_at_s) : nlohmann::json(nullptr)}});
    }
    for (auto it = setup_.hosts.rbegin(); it != setup_.hosts.rend(); ++it) setup_.stop_process(*it, 3);
    for (auto& h : setup_.hosts) setup_.unshape(h);
    for (auto& h : setup_.hosts) setup_.remove_dir(h);
    return setup_.clean;
  }

  nlohmann::json info() const override {
    return {{"mode", "ssh"},
            {"inventory", fs::absolute(inv_.file).string()},
            {"hosts", hosts_info_},
            {"shaping", shaped_ ? "boards with shape: true: tc tbf on their interface (uplink; downlink through an ifb), rate only"
                                : "none (the hosts' own network)"}};
  }
  std::string summary_mode() const override { return "ssh, " + std::to_string(setup_.hosts.size()) + " hosts"; }
  std::string started_what() const override {
    return "the edge server on " + setup_.hosts.front().host.describe() + " and " + std::to_string(nd_) + " devices";
  }

 private:
  HostRun& board_of(int i) { return setup_.hosts[static_cast<size_t>(i) + 1]; }
  std::string stream_file(int i) const { return work_ + "/stream-" + std::to_string(i) + ".jsonl"; }
  std::string epoch_on(const HostRun& h, double skew) const { return strprintf("%.6f", epoch_ + h.clock_offset_s + skew); }
  void say(const std::string& s) const {
    if (!o_.quiet) log::info("testbed", s);
  }
  void launch(HostRun& h, const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file) {
    const std::string cmd = "cd " + shell_quote(h.cwd) + " && echo $$ > " + shell_quote(h.dir + "/pid") + " && exec " + shell_words(argv);
    h.started = true;
    h.ssh = h.host.start(cmd, out_file, err_file);
  }

  // The run folder's contents: the secret and the data under data/, laid out as here below their
  // common folder (the working directory included, so relative paths resolve the same way).
  void bundle(const LutSet& luts) {
    std::vector<std::string> files = bundle_files(sc_, luts);
    std::vector<std::string> anchor = files;
    for (auto& f : anchor) f = fs::path(f).parent_path().string();
    anchor.push_back(fs::current_path().lexically_normal().string());
    const fs::path root = common_ancestor(anchor);
    rel_cwd_ = fs::current_path().lexically_normal().lexically_relative(root).string();
    rel_scenario_ = fs::absolute(sc_.file).lexically_normal().lexically_relative(root).string();
    fs::create_directories(work_ + "/bundle/data");
    {
      std::ofstream s(work_ + "/bundle/secret");
      s << random_nonce_hex(32) << "\n";
    }
    fs::permissions(work_ + "/bundle/secret", fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
    for (const auto& f : files) {
      const fs::path dest = fs::path(work_ + "/bundle/data") / fs::path(f).lexically_relative(root);
      fs::create_directories(dest.parent_path());
      fs::copy_file(f, dest, fs::copy_options::overwrite_existing);
    }
    ChildSpec tar;
    tar.argv = {"tar", "-c", "-f", work_ + "/bundle.tar", "-C", work_ + "/bundle", "."};
    tar.capture_stderr = true;
    const ChildResult r = run_child(tar, 120);
    if (r.status != 0) throw std::runtime_error("packing the run's files failed: " + trim_end(r.err));
  }

  // Every host: reachable, the same coinfer, the stated architecture.
  bool check_hosts(const std::atomic<bool>& interrupted) {
    const nlohmann::json here = runtime_version();
    say("checking " + std::to_string(setup_.hosts.size()) + " hosts over ssh (" + inv_.file + ")");
    for (auto& h : setup_.hosts) {
      if (interrupted) return false;
      const InventoryHost& ih = h.host.host();
      const double t0 = unix_now();
      const ChildResult r = h.host.run(shell_words({ih.coinfer, "version", "--json"}) + "; echo \"exit=$?\" >&2; uname -m >&2", 30);
      const double t1 = unix_now();
      if (const std::string f = RemoteHost::ssh_failure(r); !f.empty())
        throw InputError(ih.at("address"), h.path + ".address", "cannot reach " + h.host.describe() + " over ssh: " + f);
      const std::string err = r.err;
      const auto ex = err.rfind("exit=");
      const int code = ex == std::string::npos ? -1 : std::atoi(err.c_str() + ex + 5);
      const std::string machine = ex == std::string::npos ? "" : trim_end(err.substr(err.find('\n', ex) + 1));
      if (code == 127)
        throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                         "'" + ih.coinfer + "' is not installed on " + h.host.describe() + " (hw/README.md \"Building on the boards\")");
      if (code == 126 || (code != 0 && err.find("Exec format error") != std::string::npos) ||
          (code != 0 && err.find("cannot execute binary") != std::string::npos))
        throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                         "'" + ih.coinfer + "' cannot run on " + h.host.describe() + " (a " + machine +
                             " machine): it is not executable or was built for another architecture; build coinfer on the host itself "
                             "(hw/README.md \"Building on the boards\")");
      const std::optional<nlohmann::json> parsed = parse_runtime_version(trim_end(r.out));
      if (!parsed)
        throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                         "'" + ih.coinfer + " version --json' on " + h.host.describe() + " did not print coinfer's version (exit " +
                             std::to_string(code) + "): " + printable(trim_end(r.out + " " + err.substr(0, ex)), 200));
      const nlohmann::json& v = *parsed;
      if (!same_runtime(v, here))
        throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                         h.host.describe() + " runs " + describe_runtime(v) + "; this machine runs " + describe_runtime(here) +
                             ": install the same version on every host");
      const std::string host_machine = v.value("machine", machine);
      if (host_machine != ih.arch)
        throw InputError(ih.at("arch"), h.path + ".arch", h.host.describe() + " is a " + host_machine + " machine; the inventory says " + ih.arch);
      if (v.contains("unix_time_s") && v["unix_time_s"].is_number()) h.clock_offset_s = v["unix_time_s"].get<double>() - (t0 + t1) / 2;
      say(h.host.host().name + " (" + h.host.describe() + "): coinfer " + v["coinfer"].get<std::string>() + " on " + host_machine +
          strprintf(", clock %+.3f s from here (+-%.3f)", h.clock_offset_s, (t1 - t0) / 2));
    }
    return true;
  }

  // The run folder on every host, then `coinfer check` there.
  bool send_run_folders(const std::string& run_id, const std::atomic<bool>& interrupted) {
    for (auto& h : setup_.hosts) {
      if (interrupted) return false;
      const InventoryHost& ih = h.host.host();
      h.dir = ih.workdir + "/" + run_id + "-" + h.host.host().name;
      h.cwd = h.dir + "/data" + (rel_cwd_ == "." || rel_cwd_.empty() ? "" : "/" + rel_cwd_);
      const ChildResult r = h.host.run("umask 077 && mkdir -p " + shell_quote(h.dir) + " && tar -x -f - -C " + shell_quote(h.dir) + " && mkdir -p " +
                                           shell_quote(h.cwd) + " && stat -c %a " + shell_quote(h.dir + "/secret"),
                                       120, work_ + "/bundle.tar");
      if (const std::string f = RemoteHost::ssh_failure(r); !f.empty())
        throw InputError(ih.at("address"), h.path + ".address", "cannot reach " + h.host.describe() + " over ssh: " + f);
      h.has_dir = true;
      if (r.status != 0)
        throw InputError(ih.at("workdir"), h.path + ".workdir",
                         "cannot create the run folder " + h.dir + " on " + h.host.describe() + ": " + printable(trim_end(r.err), 300));
      if (trim_end(r.out) != "600")
        throw InputError(ih.at("workdir"), h.path + ".workdir",
                         "the secret in " + h.dir + " on " + h.host.describe() + " has mode " + trim_end(r.out) + ", not 600");
      std::vector<std::string> check = {ih.coinfer, "check", h.dir + "/data/" + rel_scenario_, "--secret-file", h.dir + "/secret"};
      for (const auto& s : o_.sets) check.insert(check.end(), {"--set", s});
      const ChildResult c = h.host.run("cd " + shell_quote(h.cwd) + " && " + shell_words(check), 120);
      if (const std::string f = RemoteHost::ssh_failure(c); !f.empty())
        throw InputError(ih.at("address"), h.path + ".address", "cannot reach " + h.host.describe() + " over ssh: " + f);
      if (c.status != 0)
        throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                         "the scenario cannot run on " + h.host.describe() + ": " + printable(trim_end(c.err + c.out), 600));
    }
    say("every host checked: the same coinfer, the scenario's models and LUTs present, the secret in place (mode 600)");
    return true;
  }

  // Shaping on the boards that allow it (tc on their interface, both directions).
  void shape(int i, double mbps, bool add) {
    HostRun& h = board_of(i);
    const InventoryBoard& b = *boards_[static_cast<size_t>(i)];
    const std::string tc = b.sudo ? "sudo -n tc" : "tc";
    const std::string ip = b.sudo ? "sudo -n ip" : "ip";
    const std::string dev = shell_quote(b.interface), ifb = shell_quote(setup_.ifb);
    std::string cmd;
    if (add)
      cmd = "set -e; " + ip + " link add " + ifb + " type ifb; " + ip + " link set " + ifb + " up; " + tc + " qdisc replace dev " + dev + " root " +
            tbf_args(mbps) + "; " + tc + " qdisc replace dev " + dev + " handle ffff: ingress; " + tc + " filter replace dev " + dev +
            " parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev " + ifb + "; " + tc + " qdisc replace dev " + ifb +
            " root " + tbf_args(mbps);
    else
      cmd = "set -e; " + tc + " qdisc change dev " + dev + " root " + tbf_args(mbps) + "; " + tc + " qdisc change dev " + ifb + " root " +
            tbf_args(mbps);
    if (add) h.shaped = true;  // whatever part of it was applied is removed at the end
    const ChildResult r = h.host.run(cmd, 20);
    if (r.status != 0) {
      const std::string why = RemoteHost::ssh_failure(r).empty() ? trim_end(r.err) : RemoteHost::ssh_failure(r);
      if (add) throw InputError(b.at("shape"), board_of(i).path + ".shape", "cannot shape " + b.interface + " on " + h.host.describe() + ": " + why);
      log::warn("testbed", "could not change the shaping of " + b.device + " to " + format_double(mbps) + " Mbit/s: " + why);
    }
  }
  bool shape_boards() {
    for (int i = 0; i < nd_; ++i)
      if (boards_[static_cast<size_t>(i)]->shape) {
        shape(i, schedules_[static_cast<size_t>(i)].mbps_at(0), true);
        ++shaped_;
      }
    if (shaped_) say("shaping " + std::to_string(shaped_) + " boards' interfaces with tc tbf (uplink and downlink at the scenario's bandwidth)");
    return true;
  }

  const Scenario& sc_;
  const TestbedOptions& o_;
  const Inventory inv_;
  const int nd_;
  std::vector<const InventoryBoard*> boards_;  // scenario device order
  std::vector<BandwidthSchedule> schedules_;
  RemoteSetup setup_;
  std::string work_, rel_cwd_, rel_scenario_;
  std::vector<std::string> common_sets_;
  double epoch_ = 0;
  int shaped_ = 0;
  nlohmann::json hosts_info_ = nlohmann::json::array();
};

}  // namespace

std::unique_ptr<TestbedHosts> make_ssh_hosts(const Scenario& sc, const TestbedOptions& o) { return std::make_unique<SshHosts>(sc, o); }

}  // namespace coinfer::hw
