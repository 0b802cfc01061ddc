#include "hw/ssh_testbed.hpp"

#include <sys/utsname.h>
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
#include "hw/frame.hpp"
#include "hw/protocol.hpp"
#include "hw/record_journal.hpp"
#include "hw/remote_host.hpp"
#include "io/data_root.hpp"
#include "io/inventory.hpp"
#include "io/lut_repository.hpp"
#include "io/scenario_loader.hpp"

#ifndef COINFER_VERSION_STRING
#define COINFER_VERSION_STRING "unknown"
#endif

namespace fs = std::filesystem;

namespace coinfer::hw {

nlohmann::json runtime_version() {
#if defined(__x86_64__)
  const char* built_for = "x86_64";
#elif defined(__aarch64__)
  const char* built_for = "aarch64";
#elif defined(__arm__)
  const char* built_for = "armv7l";
#else
  const char* built_for = "unknown";
#endif
  struct utsname u {};
  ::uname(&u);
  return {{"coinfer", COINFER_VERSION_STRING},
          {"protocol", static_cast<int>(kProtocolVersion)},
          {"built_for", built_for},
          {"machine", std::string(u.machine)},
          {"unix_time_s", unix_now()}};
}

namespace {

using Seconds = std::chrono::duration<double>;

// One host's part of the run.
struct HostRun {
  RemoteHost host;
  std::string path;          // "server" or "boards[i]": the inventory's key for messages
  std::string dir;           // its run folder on the host
  std::string cwd;           // where its processes run (inside dir/data: relative paths as here)
  bool has_dir = false;      // dir exists there (removed at the end)
  bool started = false;      // a process of ours may run there (dir/pid names its process group)
  bool shaped = false;       // tc shaping applied on its interface
  double clock_offset_s = 0;  // its clock minus ours, from the check (a coarse estimate: start times only)
  Child ssh;                 // the local ssh client of its process
  bool lost = false;         // its ssh session broke (255) before its process ended
  double lost_at_s = NAN;    // run time when that was seen
  std::string lost_why;
  explicit HostRun(const InventoryHost& h, std::string p) : host(h), path(std::move(p)) {}
};

std::string trim_text(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string read_text(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The remote shell command that stops the process group named by DIR/pid: SIGTERM, up to `grace_s`
// for it to end, then SIGKILL; prints "gone" when nothing of it is left.
std::string stop_command(const std::string& dir, double grace_s) {
  const std::string pid = shell_quote(dir + "/pid");
  const int tenths = static_cast<int>(std::ceil(grace_s * 10));
  return "p=$(cat " + pid + " 2>/dev/null) || { echo gone; exit 0; }; "
         "kill -s TERM -- -$p 2>/dev/null; i=0; "
         "while kill -s 0 -- -$p 2>/dev/null && [ $i -lt " + std::to_string(tenths) + " ]; do sleep 0.1; i=$((i+1)); done; "
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
  bool clean = true;           // every undo step succeeded

  void stop_process(HostRun& h, double grace_s) {
    if (!h.started) return;
    const ChildResult r = h.host.run(stop_command(h.dir, grace_s), grace_s + 15);
    h.started = false;  // one attempt: an unreachable host is reported once, with what to do by hand
    if (r.status != 0 || r.out.find("gone") == std::string::npos) {
      clean = false;
      log::error("testbed", "could not stop coinfer on " + h.host.host().name + " (" + h.host.describe() + "): " +
                                (RemoteHost::ssh_failure(r).empty() ? trim_text(r.err) : RemoteHost::ssh_failure(r)) +
                                "; its process group is in " + h.dir + "/pid there: stop it by hand");
    }
    if (h.ssh.pid() > 0) h.ssh.stop(2);
  }
  void unshape(HostRun& h) {
    if (!h.shaped) return;
    const std::string tc = h.host.host().sudo ? "sudo -n tc" : "tc";
    const std::string ip = h.host.host().sudo ? "sudo -n ip" : "ip";
    const std::string dev = shell_quote(iface_of(h));
    const ChildResult r = h.host.run(tc + " qdisc del dev " + dev + " root; " + tc + " qdisc del dev " + dev + " ingress; " + ip +
                                         " link del " + shell_quote(ifb) + "; true",
                                     20);
    if (!RemoteHost::ssh_failure(r).empty()) {
      clean = false;
      log::error("testbed", "could not remove the tc shaping on " + h.host.host().name + " (" + h.host.describe() + "): " +
                                RemoteHost::ssh_failure(r) + "; remove it by hand: tc qdisc del dev " + iface_of(h) + " root; tc qdisc del dev " +
                                iface_of(h) + " ingress; ip link del " + ifb);
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

}  // namespace

int run_ssh_testbed(const TestbedOptions& o, const std::atomic<bool>& interrupted) {
  const Scenario sc = load_scenario(o.scenario, o.sets);
  const Inventory inv = load_inventory(o.inventory);
  check_inventory_against(inv, sc);
  const SourceLocation where{o.scenario, 0, 0};
  if (sc.servers.size() != 1)
    throw InputError(where, "servers", "a testbed runs one edge server; the scenario has " + std::to_string(sc.servers.size()));
  if (o.loopback || o.device_cpu_cores > 0)
    throw InputError(SourceLocation{o.inventory, 0, 0}, o.loopback ? "--loopback" : "--device-cpu",
                     "does not apply to real hosts (--inventory): they run at their own speed on their own network");
  const int nd = static_cast<int>(sc.devices.size());
  auto say = [&](const std::string& s) {
    if (!o.quiet) log::info("testbed", s);
  };

  const std::string work = o.out + ".work";
  fs::remove_all(work);
  fs::create_directories(work + "/logs");
  const LutSet luts = load_scenario_luts(sc);
  check_scenario_against(sc, ModelCatalog::load(data_path("models")), luts);

  // The run folder's contents: the secret and the data under data/, laid out as here below their
  // common folder (the working directory included, so relative paths resolve the same way).
  std::vector<std::string> files = bundle_files(sc, luts);
  std::vector<std::string> anchor = files;
  for (auto& f : anchor) f = fs::path(f).parent_path().string();
  anchor.push_back(fs::current_path().lexically_normal().string());
  const fs::path root = common_ancestor(anchor);
  const std::string rel_cwd = fs::current_path().lexically_normal().lexically_relative(root).string();
  const std::string rel_scenario = fs::absolute(sc.file).lexically_normal().lexically_relative(root).string();
  fs::create_directories(work + "/bundle/data");
  {
    std::ofstream s(work + "/bundle/secret");
    s << random_nonce_hex(32) << "\n";
  }
  fs::permissions(work + "/bundle/secret", fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  for (const auto& f : files) {
    const fs::path dest = fs::path(work + "/bundle/data") / fs::path(f).lexically_relative(root);
    fs::create_directories(dest.parent_path());
    fs::copy_file(f, dest, fs::copy_options::overwrite_existing);
  }
  {
    ChildSpec tar;
    tar.argv = {"tar", "-c", "-f", work + "/bundle.tar", "-C", work + "/bundle", "."};
    tar.capture_stderr = true;
    const ChildResult r = run_child(tar, 120);
    if (r.status != 0) throw std::runtime_error("packing the run's files failed: " + trim_text(r.err));
  }

  RemoteSetup setup;
  setup.keep = o.keep_remote;
  setup.ifb = "cfifb" + std::to_string(::getpid() % 100000);
  setup.hosts.emplace_back(inv.server, "server");
  for (const auto& d : sc.devices)
    for (size_t i = 0; i < inv.boards.size(); ++i)
      if (inv.boards[i].device == d.id) {
        setup.hosts.emplace_back(inv.boards[i], "boards[" + std::to_string(i) + "]");
        setup.board_iface[d.id] = inv.boards[i].interface;
      }
  char host_name[256] = "host";
  ::gethostname(host_name, sizeof host_name - 1);
  const std::string run_id = "coinfer-" + sc.name.substr(0, 40) + "-" + std::to_string(static_cast<long long>(unix_now())) + "-" +
                             std::to_string(::getpid());

  // 1. Check every host: reachable, the same coinfer, the stated architecture.
  const nlohmann::json here = runtime_version();
  say("checking " + std::to_string(setup.hosts.size()) + " hosts over ssh (" + inv.file + ")");
  for (auto& h : setup.hosts) {
    if (interrupted) return 130;
    const InventoryHost& ih = h.host.host();
    const double t0 = unix_now();
    const ChildResult r = h.host.run(shell_words({ih.coinfer, "version", "--json"}) + "; echo \"exit=$?\" >&2; uname -m >&2", 30);
    const double t1 = unix_now();
    if (const std::string f = RemoteHost::ssh_failure(r); !f.empty())
      throw InputError(ih.at("address"), h.path + ".address", "cannot reach " + h.host.describe() + " over ssh: " + f);
    const std::string err = r.err;
    const auto ex = err.rfind("exit=");
    const int code = ex == std::string::npos ? -1 : std::atoi(err.c_str() + ex + 5);
    const std::string machine = ex == std::string::npos ? "" : trim_text(err.substr(err.find('\n', ex) + 1));
    if (code == 127)
      throw InputError(ih.at("coinfer"), h.path + ".coinfer", "'" + ih.coinfer + "' is not installed on " + h.host.describe() +
                                                                 " (hw/README.md \"Building on the boards\")");
    if (code == 126 || (code != 0 && err.find("Exec format error") != std::string::npos) ||
        (code != 0 && err.find("cannot execute binary") != std::string::npos))
      throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                       "'" + ih.coinfer + "' cannot run on " + h.host.describe() + " (a " + machine +
                           " machine): it is not executable or was built for another architecture; build coinfer on the host itself "
                           "(hw/README.md \"Building on the boards\")");
    nlohmann::json v;
    try {
      v = nlohmann::json::parse(trim_text(r.out));
      (void)v.at("coinfer").get<std::string>();
      (void)v.at("protocol").get<int>();
    } catch (const std::exception&) {
      throw InputError(ih.at("coinfer"), h.path + ".coinfer", "'" + ih.coinfer + " version --json' on " + h.host.describe() +
                                                                 " did not print coinfer's version (exit " + std::to_string(code) +
                                                                 "): " + printable(trim_text(r.out + " " + err.substr(0, ex)), 200));
    }
    if (v["coinfer"] != here["coinfer"] || v["protocol"] != here["protocol"])
      throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                       h.host.describe() + " runs coinfer " + v["coinfer"].get<std::string>() + " (wire protocol " +
                           std::to_string(v["protocol"].get<int>()) + "); this machine runs coinfer " + here["coinfer"].get<std::string>() +
                           " (wire protocol " + std::to_string(here["protocol"].get<int>()) + "): install the same version on every host");
    const std::string host_machine = v.value("machine", machine);
    if (host_machine != ih.arch)
      throw InputError(ih.at("arch"), h.path + ".arch", h.host.describe() + " is a " + host_machine + " machine; the inventory says " + ih.arch);
    if (v.contains("unix_time_s") && v["unix_time_s"].is_number()) h.clock_offset_s = v["unix_time_s"].get<double>() - (t0 + t1) / 2;
    say(h.host.host().name + " (" + h.host.describe() + "): coinfer " + v["coinfer"].get<std::string>() + " on " + host_machine +
        strprintf(", clock %+.3f s from here (+-%.3f)", h.clock_offset_s, (t1 - t0) / 2));
  }

  // 2. The run folder on every host, then `coinfer check` there.
  for (auto& h : setup.hosts) {
    if (interrupted) return 130;
    const InventoryHost& ih = h.host.host();
    h.dir = ih.workdir + "/" + run_id + "-" + h.host.host().name;
    h.cwd = h.dir + "/data" + (rel_cwd == "." || rel_cwd.empty() ? "" : "/" + rel_cwd);
    const ChildResult r = h.host.run("umask 077 && mkdir -p " + shell_quote(h.dir) + " && tar -x -f - -C " + shell_quote(h.dir) +
                                         " && mkdir -p " + shell_quote(h.cwd) + " && stat -c %a " + shell_quote(h.dir + "/secret"),
                                     120, work + "/bundle.tar");
    if (const std::string f = RemoteHost::ssh_failure(r); !f.empty())
      throw InputError(ih.at("address"), h.path + ".address", "cannot reach " + h.host.describe() + " over ssh: " + f);
    h.has_dir = true;
    if (r.status != 0)
      throw InputError(ih.at("workdir"), h.path + ".workdir",
                       "cannot create the run folder " + h.dir + " on " + h.host.describe() + ": " + printable(trim_text(r.err), 300));
    if (trim_text(r.out) != "600")
      throw InputError(ih.at("workdir"), h.path + ".workdir",
                       "the secret in " + h.dir + " on " + h.host.describe() + " has mode " + trim_text(r.out) + ", not 600");
    std::vector<std::string> check = {ih.coinfer, "check", h.dir + "/data/" + rel_scenario, "--secret-file", h.dir + "/secret"};
    for (const auto& s : o.sets) check.insert(check.end(), {"--set", s});
    const ChildResult c = h.host.run("cd " + shell_quote(h.cwd) + " && " + shell_words(check), 120);
    if (const std::string f = RemoteHost::ssh_failure(c); !f.empty())
      throw InputError(ih.at("address"), h.path + ".address", "cannot reach " + h.host.describe() + " over ssh: " + f);
    if (c.status != 0)
      throw InputError(ih.at("coinfer"), h.path + ".coinfer",
                       "the scenario cannot run on " + h.host.describe() + ": " + printable(trim_text(c.err + c.out), 600));
  }
  say("every host checked: the same coinfer, the scenario's models and LUTs present, the secret in place (mode 600)");

  // 3. Shaping on the boards that allow it (tc on their interface, both directions).
  std::vector<BandwidthSchedule> schedules;
  for (const auto& d : sc.devices) schedules.emplace_back(d, sc.events);
  auto board_of = [&](int i) -> HostRun& { return setup.hosts[static_cast<size_t>(i) + 1]; };
  auto board_spec = [&](int i) -> const InventoryBoard& {
    for (const auto& b : inv.boards)
      if (b.device == sc.devices[static_cast<size_t>(i)].id) return b;
    throw std::logic_error("board");
  };
  auto shape = [&](int i, double mbps, bool add) {
    HostRun& h = board_of(i);
    const InventoryBoard& b = board_spec(i);
    const std::string tc = b.sudo ? "sudo -n tc" : "tc";
    const std::string ip = b.sudo ? "sudo -n ip" : "ip";
    const std::string dev = shell_quote(b.interface), ifb = shell_quote(setup.ifb);
    std::string cmd;
    if (add)
      cmd = "set -e; " + ip + " link add " + ifb + " type ifb; " + ip + " link set " + ifb + " up; " + tc + " qdisc replace dev " + dev +
            " root " + tbf_args(mbps) + "; " + tc + " qdisc replace dev " + dev + " handle ffff: ingress; " + tc + " filter replace dev " +
            dev + " parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev " + ifb + "; " + tc + " qdisc replace dev " +
            ifb + " root " + tbf_args(mbps);
    else
      cmd = "set -e; " + tc + " qdisc change dev " + dev + " root " + tbf_args(mbps) + "; " + tc + " qdisc change dev " + ifb + " root " +
            tbf_args(mbps);
    if (add) h.shaped = true;  // whatever part of it was applied is removed at the end
    const ChildResult r = h.host.run(cmd, 20);
    if (r.status != 0) {
      const std::string why = RemoteHost::ssh_failure(r).empty() ? trim_text(r.err) : RemoteHost::ssh_failure(r);
      if (add) throw InputError(b.at("shape"), board_of(i).path + ".shape", "cannot shape " + b.interface + " on " + h.host.describe() + ": " + why);
      log::warn("testbed", "could not change the shaping of " + b.device + " to " + format_double(mbps) + " Mbit/s: " + why);
    }
  };
  int shaped = 0;
  for (int i = 0; i < nd; ++i)
    if (board_spec(i).shape) {
      shape(i, schedules[static_cast<size_t>(i)].mbps_at(0), true);
      ++shaped;
    }
  if (shaped) say("shaping " + std::to_string(shaped) + " boards' interfaces with tc tbf (uplink and downlink at the scenario's bandwidth)");

  // 4. The server, then the devices.
  std::vector<std::string> common_sets;
  for (const auto& s : o.sets) common_sets.insert(common_sets.end(), {"--set", s});
  HostRun& server = setup.hosts.front();
  auto launch = [&](HostRun& h, std::vector<std::string> argv, const std::string& out_file, const std::string& err_file) {
    const std::string cmd = "cd " + shell_quote(h.cwd) + " && echo $$ > " + shell_quote(h.dir + "/pid") + " && exec " + shell_words(argv);
    h.started = true;
    h.ssh = h.host.start(cmd, out_file, err_file);
  };
  constexpr double kServerStartS = 3;
  const double epoch = unix_now() + kServerStartS + 2 + o.startup_s;  // ours; each host gets it on its own clock
  auto epoch_on = [&](const HostRun& h, double skew) { return strprintf("%.6f", epoch + h.clock_offset_s + skew); };
  {
    std::vector<std::string> argv = {inv.server.coinfer, "serve", server.dir + "/data/" + rel_scenario, "--bind", "0.0.0.0", "--port",
                                     std::to_string(inv.server.service_port), "--port-file", server.dir + "/port", "--decisions-out",
                                     server.dir + "/decisions.jsonl", "--secret-file", server.dir + "/secret", "--threads",
                                     std::to_string(o.threads), "--epoch", epoch_on(server, 0)};
    argv.insert(argv.end(), common_sets.begin(), common_sets.end());
    launch(server, argv, work + "/logs/server.log", "&1");
  }
  const auto wait_start = std::chrono::steady_clock::now();
  for (;;) {
    if (interrupted) return 130;
    if (!server.ssh.running())
      throw std::runtime_error("the edge server on " + server.host.describe() + " exited (" + describe_exit_status(server.ssh.status()) +
                               ") before listening; see " + work + "/logs/server.log:\n" + read_text(work + "/logs/server.log"));
    const ChildResult r = server.host.run("test -s " + shell_quote(server.dir + "/port"), 15);
    if (r.status == 0) break;
    if (std::chrono::steady_clock::now() - wait_start > Seconds(60))
      throw std::runtime_error("the edge server on " + server.host.describe() + " did not listen within 60 s; see " + work + "/logs/server.log");
    std::this_thread::sleep_for(Seconds(0.3));
  }
  if (epoch - unix_now() < 1) log::warn("testbed", "the edge server took long to start: the devices have less than 1 s before time zero (raise --startup)");
  for (int i = 0; i < nd; ++i) {
    HostRun& h = board_of(i);
    const InventoryBoard& b = board_spec(i);
    const auto skew = o.device_clock_skew_s.find(b.device);
    const double skew_s = skew == o.device_clock_skew_s.end() ? 0 : skew->second;
    std::vector<std::string> argv = {b.coinfer, "device", h.dir + "/data/" + rel_scenario, "--id", b.device, "--host",
                                     inv.server.service_address, "--port", std::to_string(inv.server.service_port), "--secret-file",
                                     h.dir + "/secret", "--epoch", epoch_on(h, skew_s), "--records", h.dir + "/journal.jsonl",
                                     "--records-stdout", "--threads", std::to_string(o.threads)};
    if (skew_s != 0) argv.insert(argv.end(), {"--clock-skew", format_double(skew_s)});
    std::string meter = b.power_command;
    if (auto m = o.device_power_command.find(b.device); m != o.device_power_command.end()) meter = m->second;
    if (!meter.empty()) argv.insert(argv.end(), {"--power-command", meter});
    argv.insert(argv.end(), common_sets.begin(), common_sets.end());
    launch(h, argv, work + "/stream-" + std::to_string(i) + ".jsonl", work + "/logs/device-" + b.device + ".log");
  }
  say("started the edge server on " + server.host.describe() + " and " + std::to_string(nd) + " devices; the run starts in " +
      std::to_string(static_cast<int>(epoch - unix_now())) + " s and lasts " + format_double(sc.duration_s) + " s");

  // 5. The timeline: bandwidth changes on shaped boards, lost boards, progress, the end.
  std::vector<bool> shaped_devices(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) shaped_devices[static_cast<size_t>(i)] = board_spec(i).shape;
  TestbedTimeline timeline(sc, schedules, shaped_devices);
  int exit_code = 0;
  bool server_exit_reported = false;
  for (;;) {
    const double t = unix_now() - epoch;
    for (const auto& [i, mbps] : timeline.due(t))
      if (!board_of(i).lost) shape(i, mbps, false);
    bool running = false;
    for (int i = 0; i < nd; ++i) {
      HostRun& h = board_of(i);
      if (h.ssh.running()) {
        running = true;
      } else if (h.started && !h.lost && h.ssh.status() == 255) {
        // The ssh session broke while the device ran: the board is unreachable (or sshd died).
        h.lost = true;
        h.lost_at_s = t;
        h.lost_why = trim_text(read_text(work + "/logs/device-" + board_spec(i).device + ".log"));
        const auto nl = h.lost_why.rfind('\n');
        if (nl != std::string::npos) h.lost_why = h.lost_why.substr(nl + 1);
        log::warn("testbed", strprintf("lost board %s (%s) at t = %.1f s: %s; its requests from then on are reported failed",
                                       board_spec(i).device.c_str(), h.host.describe().c_str(), t, h.lost_why.c_str()));
        exit_code = 1;
      } else if (h.started && !h.lost) {
        h.started = false;  // its process ended by itself
        if (h.ssh.status() != 0) {
          log::warn("testbed", "device " + board_spec(i).device + " ended with " + describe_exit_status(h.ssh.status()) + " (see " + o.out +
                                   "/logs/device-" + board_spec(i).device + ".log)");
          exit_code = 1;
        }
      }
    }
    if (!running) break;
    if (interrupted) {
      say("interrupted: stopping every remote process, removing shaping and run folders");
      return 130;
    }
    if (!server_exit_reported && !server.ssh.running() && t < sc.duration_s) {
      log::warn("testbed", "the edge server exited (" + describe_exit_status(server.ssh.status()) + ") before the run's end; see " + o.out +
                               "/logs/server.log");
      server_exit_reported = true;
    }
    if (t > timeline.deadline_s()) {
      say("devices still running " + format_double(timeline.deadline_s()) + " s after time zero: stopping them");
      for (int i = 0; i < nd; ++i) setup.stop_process(board_of(i), 5);
      exit_code = 1;
      break;
    }
    if (!o.quiet) timeline.progress(t);
    std::this_thread::sleep_for(Seconds(0.05));
  }
  const double end_s = unix_now() - epoch;
  setup.stop_process(server, 10);

  // 6. Journals and decisions back.
  std::vector<std::string> journal_paths(static_cast<size_t>(nd));
  nlohmann::json hosts_info = nlohmann::json::array();
  for (int i = 0; i < nd; ++i) {
    HostRun& h = board_of(i);
    const std::string& id = board_spec(i).device;
    const std::string local = work + "/device-" + std::to_string(i) + ".jsonl";
    const ChildResult r = h.lost ? ChildResult{} : h.host.run_to_file("cat " + shell_quote(h.dir + "/journal.jsonl"), local, 120);
    if (!h.lost && r.status == 0) {
      journal_paths[static_cast<size_t>(i)] = local;
      continue;
    }
    // The live copy, cut where the stream broke: its torn last line dropped, and a note saying why
    // its unfinished requests failed (hw/record_journal.hpp).
    const std::string stream = work + "/stream-" + std::to_string(i) + ".jsonl";
    std::string text = read_text(stream);
    if (!text.empty() && text.back() != '\n') text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    const std::string why = h.lost ? strprintf("board %s became unreachable at t = %.1f s (%s); nothing it did after that was collected", id.c_str(),
                                               h.lost_at_s, h.lost_why.c_str())
                                   : "the journal of board " + id + " could not be copied back (" + RemoteHost::ssh_failure(r) + trim_text(r.err) +
                                         "); its live copy ends here";
    text += nlohmann::json{{"ev", "note"}, {"cut", why}}.dump() + "\n";
    std::ofstream(local) << text;
    journal_paths[static_cast<size_t>(i)] = local;
    if (!h.lost) log::warn("testbed", why);
    exit_code = 1;
  }
  for (int i = 0; i < nd; ++i) fs::remove(work + "/stream-" + std::to_string(i) + ".jsonl");
  const std::string decisions = work + "/decisions.jsonl";
  {
    const ChildResult r = server.host.run_to_file("cat " + shell_quote(server.dir + "/decisions.jsonl"), decisions, 120);
    if (r.status != 0) {
      log::warn("testbed", "the decisions journal could not be copied from " + server.host.describe() + ": " + trim_text(r.err));
      fs::remove(decisions);
      exit_code = 1;
    }
  }
  for (size_t k = 0; k < setup.hosts.size(); ++k) {
    const HostRun& h = setup.hosts[k];
    hosts_info.push_back({{"name", h.host.host().name},
                          {"address", h.host.describe()},
                          {"arch", h.host.host().arch},
                          {"clock_offset_estimate_s", h.clock_offset_s},
                          {"shaped", k > 0 && board_spec(static_cast<int>(k) - 1).shape},
                          {"lost_at_s", h.lost ? nlohmann::json(h.lost_at_s) : nlohmann::json(nullptr)}});
  }
  // Undo on the hosts before writing (what could not be undone is an error above).
  for (auto it = setup.hosts.rbegin(); it != setup.hosts.rend(); ++it) setup.stop_process(*it, 3);
  for (auto& h : setup.hosts) setup.unshape(h);
  for (auto& h : setup.hosts) setup.remove_dir(h);
  if (!setup.clean) exit_code = 1;

  nlohmann::json info{{"mode", "ssh"},
                      {"inventory", fs::absolute(inv.file).string()},
                      {"epoch_unix_s", epoch},
                      {"devices", nd},
                      {"threads", o.threads},
                      {"hosts", hosts_info},
                      {"shaping", shaped ? "boards with shape: true: tc tbf on their interface (uplink; downlink through an ifb), rate only"
                                         : "none (the hosts' own network)"}};
  const RunResults r = write_testbed_results(sc, journal_paths, fs::exists(decisions) ? decisions : "", end_s, o.clock_tolerance_s, o.out, info);
  fs::remove_all(o.out + "/logs");
  fs::rename(work + "/logs", o.out + "/logs");
  for (int i = 0; i < nd; ++i)
    if (fs::exists(journal_paths[static_cast<size_t>(i)]))
      fs::rename(journal_paths[static_cast<size_t>(i)], o.out + "/logs/journal-" + sc.devices[static_cast<size_t>(i)].id + ".jsonl");
  fs::remove_all(work);
  if (!o.quiet) print_testbed_summary(r, "ssh, " + std::to_string(setup.hosts.size()) + " hosts", o.out);
  return exit_code;
}

}  // namespace coinfer::hw
