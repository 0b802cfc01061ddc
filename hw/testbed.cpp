#include "hw/testbed.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/bandwidth_schedule.hpp"
#include "core/input_error.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/text_util.hpp"
#include "hw/auth.hpp"
#include "hw/cpu_cap.hpp"
#include "hw/protocol.hpp"
#include "hw/journal_merge.hpp"
#include "io/state_json.hpp"
#include "hw/record_journal.hpp"
#include "io/atomic_dir.hpp"
#include "io/child_process.hpp"
#include "io/data_root.hpp"
#include "io/lut_repository.hpp"
#include "io/results_h5.hpp"
#include "io/scenario_loader.hpp"
#include "io/summary_json.hpp"
#include "sched/scheduler_factory.hpp"
#include "core/units.hpp"

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
Child start_logged(const std::vector<std::string>& argv, const std::string& log_path) {
  ChildSpec spec;
  spec.argv = argv;
  spec.stdout_file = log_path;
  spec.stderr_file = "&1";
  spec.own_process_group = true;
  log::debug("testbed", join(argv, " ") + " > " + log_path);
  return Child::start(spec);
}

// Everything the testbed creates, removed by the destructor whatever happened.
struct Setup {
  std::vector<std::string> namespaces;
  std::vector<Child> children;
  std::vector<std::unique_ptr<CpuCap>> caps;
  ~Setup() {
    for (auto& c : children) c.stop(2);
    caps.clear();  // cgroups removed once their processes are gone
    for (auto it = namespaces.rbegin(); it != namespaces.rend(); ++it) run_command({"ip", "netns", "del", *it});
  }
};

std::string read_file(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
    if (ours && run_command({"ip", "netns", "del", name}) == 0) {
      std::cout << "removed namespace " << name << "\n";
      ++removed;
    }
  }
  return removed;
}

RunResults write_testbed_results(const Scenario& sc, const std::vector<std::string>& journal_paths, const std::string& decisions_path,
                                 double end_s, double clock_tolerance_s, const std::string& out, const nlohmann::json& info) {
  // Each journal is moved onto the server's clock first (hw/clock_sync.hpp), then merged into the
  // simulator's schema (hw/journal_merge.hpp).
  std::vector<ClockRecord> clocks;
  std::vector<PowerReadings> power;
  const std::vector<std::vector<RequestRecord>> journals =
      read_journals_server_clock(sc, journal_paths, clocks, clock_tolerance_s, "testbed", &power);
  std::vector<DecisionRecord> decisions;
  if (!decisions_path.empty() && fs::exists(decisions_path)) decisions = read_decisions_jsonl(decisions_path);
  RunResults r = merge_journals(sc, journals, std::move(decisions), end_s, &power);
  r.clocks = clocks;
  r.estimator = estimator_of(sc);
  data_path("models");  // resolved the same way by the server and device processes
  r.data_files = run_data_files(sc, load_scenario_luts(sc));
  fs::create_directories(out);
  write_results_h5(out + "/results.h5", r);
  write_summary_json(out + "/summary.json", r);
  write_text_atomic(out + "/decisions.jsonl", decisions_jsonl_text(r.decisions));
  write_text_atomic(out + "/testbed.json", info.dump(2) + "\n");
  return r;
}

TestbedTimeline::TestbedTimeline(const Scenario& sc, const std::vector<BandwidthSchedule>& schedules, const std::vector<bool>& shaped)
    : schedules_(schedules), duration_s_(sc.duration_s), drain_s_(sc.drain_s), deadline_s_(sc.duration_s + sc.drain_s + 30) {
  for (size_t i = 0; i < schedules.size(); ++i)
    if (shaped[i])
      for (const auto& p : schedules[i].points())
        if (p.t_s > 0) changes_.emplace_back(p.t_s, static_cast<int>(i));
  std::sort(changes_.begin(), changes_.end());
}

std::vector<std::pair<int, double>> TestbedTimeline::due(double t) {
  std::vector<std::pair<int, double>> out;
  for (; next_ < changes_.size() && changes_[next_].first <= t; ++next_) {
    const int i = changes_[next_].second;
    out.emplace_back(i, schedules_[static_cast<size_t>(i)].mbps_at(changes_[next_].first));
  }
  return out;
}

void TestbedTimeline::progress(double t) {
  if (t < 0 || t - last_progress_ < 5) return;
  last_progress_ = t;
  if (t <= duration_s_) log::info("testbed", strprintf("t = %.0f / %.0f s", t, duration_s_));
  else log::info("testbed", strprintf("t = %.0f s: arrivals ended, waiting for unfinished requests (drain %.0f s)", t, drain_s_));
}

void print_testbed_summary(const RunResults& r, const std::string& mode, const std::string& out) {
  const MetricsSummary& total = r.summary.back();
  std::printf("testbed (%s): %lld completed, %lld failed, %.2f req/s, latency mean %.1f ms p95 %.1f ms; wrote %s/results.h5, summary.json\n",
              mode.c_str(), total.completed, total.failed, total.throughput_rps, total.latency.mean_ms, total.latency.p95_ms, out.c_str());
}

int run_testbed(const TestbedOptions& o, const std::atomic<bool>& interrupted) {
  const Scenario sc = load_scenario(o.scenario, o.sets);
  const SourceLocation where{o.scenario, 0, 0};
  const int nd = static_cast<int>(sc.devices.size());
  if (nd > kMaxTestbedDevices)
    throw InputError(where, "devices", "the scenario names " + std::to_string(nd) + " devices; the testbed creates at most " +
                                           std::to_string(kMaxTestbedDevices));
  if (sc.servers.size() != 1)
    throw InputError(where, "servers", "the testbed runs one edge server; the scenario has " + std::to_string(sc.servers.size()));
  auto say = [&](const std::string& s) {
    if (!o.quiet) log::info("testbed", s);
  };

  const std::string work = o.out + ".work";
  fs::remove_all(work);
  fs::create_directories(work + "/logs");
  const std::string secret_file = work + "/secret";
  {
    std::ofstream s(secret_file);
    s << random_nonce_hex(32) << "\n";
  }
  ::chmod(secret_file.c_str(), 0600);

  Setup setup;
  const std::string tag = "cf" + std::to_string(::getpid() % 10000);
  bool netns = !o.loopback;
  std::string why_not;
  if (netns) {
    if (::geteuid() != 0) {
      netns = false;
      why_not = "not root";
    } else if (run_command({"ip", "netns", "add", tag + "s"}, &why_not) != 0) {
      netns = false;
    } else {
      setup.namespaces.push_back(tag + "s");
    }
    if (!netns)
      say("cannot create network namespaces (" + why_not + "): falling back to loopback with shaping inside the middleware");
  }
  const std::string server_ns = tag + "s";
  // The network, as the simulator's platform (sim/platform_builder.cpp) has it:
  //   device i ──(its link, shaped both ways)── access point ──(server link, shaped both ways)── server
  // each device in its own namespace, the access point a namespace that routes between them, where
  // every device's traffic in both directions goes through one intermediate functional block (ifb)
  // shaped at the access point's rate: the shared medium, both directions sharing it as the
  // simulator's single access_point link does. The server has one address, 10.200.0.1.
  const std::string ap_ns = tag + "p";
  const std::string ap_medium = tag + "m";                                 // the ifb in ap_ns
  const std::string veth_server_side = tag + "sv", veth_ap_uplink = tag + "up";  // server link: server ns / ap ns
  std::vector<BandwidthSchedule> schedules;
  for (const auto& d : sc.devices) schedules.emplace_back(d, sc.events);
  auto dev_ns = [&](int i) { return tag + "d" + std::to_string(i); };
  auto veth_ap = [&](int i) { return tag + "a" + std::to_string(i); };
  auto veth_device = [&](int i) { return tag + "b" + std::to_string(i); };
  // tc netem shapes rate and delay; kernels without sch_netem get tbf for the rate and the one-way
  // latency added by the middleware's sender instead (recorded in testbed.json). The whole path's
  // latency (device link + access point + server link, core/scenario.hpp) sits on the device link.
  bool use_netem = true;
  auto tbf = [&](const std::string& ns, const std::string& dev, double mbps, bool add) {
    // Bucket of 1 ms at the rate (at least two full-size frames), queue of up to 1 s.
    const long burst = std::max(3028L, static_cast<long>(mbps_to_bytes_per_s(mbps) * 0.001));
    must({"ip", "netns", "exec", ns, "tc", "qdisc", add ? "add" : "change", "dev", dev, "root", "tbf", "rate", rate_text(mbps),
          "burst", std::to_string(burst), "latency", "1000ms"});
  };
  auto shape = [&](int i, double mbps, bool add) {
    const double lat = one_way_latency_s(sc, static_cast<size_t>(i)) * 1e3;
    for (int side = 0; side < 2; ++side) {
      const std::string ns = side == 0 ? dev_ns(i) : ap_ns;
      const std::string dev = side == 0 ? veth_device(i) : veth_ap(i);
      std::vector<std::string> netem = {"ip", "netns", "exec", ns, "tc", "qdisc", add ? "add" : "change", "dev", dev, "root",
                                        "netem", "rate", rate_text(mbps), "delay", delay_text(lat), "limit", "100000"};
      std::string err;
      if (use_netem && run_command(netem, &err) == 0) continue;
      if (use_netem && add && side == 0 && i == 0 && err.find("unknown") != std::string::npos) {
        use_netem = false;
        say("this kernel has no tc netem: shaping the rate with tbf, adding the link latency in the middleware");
      } else if (use_netem) {
        throw std::runtime_error("'" + join(netem, " ") + "' failed: " + err);
      }
      tbf(ns, dev, mbps, add);
    }
  };
  if (netns) {
    const ServerSpec& sv = sc.servers.front();
    must({"ip", "-n", server_ns, "link", "set", "lo", "up"});
    run_command({"ip", "netns", "add", ap_ns});
    setup.namespaces.push_back(ap_ns);
    must({"ip", "-n", ap_ns, "link", "set", "lo", "up"});
    must({"ip", "netns", "exec", ap_ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"});
    // The server link.
    must({"ip", "link", "add", veth_server_side, "type", "veth", "peer", "name", veth_ap_uplink});
    must({"ip", "link", "set", veth_server_side, "netns", server_ns});
    must({"ip", "link", "set", veth_ap_uplink, "netns", ap_ns});
    must({"ip", "-n", server_ns, "addr", "add", "10.200.0.1/24", "dev", veth_server_side});
    must({"ip", "-n", ap_ns, "addr", "add", "10.200.0.2/24", "dev", veth_ap_uplink});
    must({"ip", "-n", server_ns, "link", "set", veth_server_side, "up"});
    must({"ip", "-n", ap_ns, "link", "set", veth_ap_uplink, "up"});
    must({"ip", "-n", server_ns, "route", "add", "10.201.0.0/16", "via", "10.200.0.2"});
    tbf(server_ns, veth_server_side, sv.link.bandwidth_mbps, true);  // server -> devices
    tbf(ap_ns, veth_ap_uplink, sv.link.bandwidth_mbps, true);        // devices -> server
    // The access point's shared medium.
    must({"ip", "-n", ap_ns, "link", "add", ap_medium, "type", "ifb"});
    must({"ip", "-n", ap_ns, "link", "set", ap_medium, "up"});
    tbf(ap_ns, ap_medium, sc.access_point.bandwidth_mbps, true);
    for (int i = 0; i < nd; ++i) {
      if (interrupted) return 130;
      run_command({"ip", "netns", "add", dev_ns(i)});
      setup.namespaces.push_back(dev_ns(i));
      must({"ip", "link", "add", veth_ap(i), "type", "veth", "peer", "name", veth_device(i)});
      must({"ip", "link", "set", veth_ap(i), "netns", ap_ns});
      must({"ip", "link", "set", veth_device(i), "netns", dev_ns(i)});
      const std::string net = "10.201." + std::to_string(i) + ".";
      must({"ip", "-n", ap_ns, "addr", "add", net + "1/24", "dev", veth_ap(i)});
      must({"ip", "-n", dev_ns(i), "addr", "add", net + "2/24", "dev", veth_device(i)});
      must({"ip", "-n", ap_ns, "link", "set", veth_ap(i), "up"});
      must({"ip", "-n", dev_ns(i), "link", "set", veth_device(i), "up"});
      must({"ip", "-n", dev_ns(i), "link", "set", "lo", "up"});
      must({"ip", "-n", dev_ns(i), "route", "add", "default", "via", net + "1"});
      shape(i, schedules[i].mbps_at(0), true);
      // Both directions of this device through the shared medium: what the device sends (ingress here)
      // and what it receives (egress here, before its own link's qdisc).
      must({"ip", "netns", "exec", ap_ns, "tc", "qdisc", "add", "dev", veth_ap(i), "clsact"});
      for (const char* hook : {"ingress", "egress"})
        must({"ip", "netns", "exec", ap_ns, "tc", "filter", "add", "dev", veth_ap(i), hook, "protocol", "all", "u32", "match", "u32", "0",
              "0", "action", "mirred", "egress", "redirect", "dev", ap_medium});
    }
    say("created " + std::to_string(nd + 2) + " network namespaces (server " + server_ns + ", access point " + ap_ns + ", devices " +
        dev_ns(0) + "..): device links shaped by tc " + (use_netem ? "netem" : "tbf") + ", the access point's shared medium (" +
        format_double(sc.access_point.bandwidth_mbps) + " Mbit/s, both directions) and the server link (" +
        format_double(sv.link.bandwidth_mbps) + " Mbit/s each way) by tbf");
  }

  // The server, then (once it listens) the devices.
  std::vector<std::string> common;
  for (const auto& s : o.sets) common.insert(common.end(), {"--set", s});
  common.insert(common.end(), {"--secret-file", secret_file, "--threads", std::to_string(o.threads)});
  if (!netns) common.push_back("--shape");
  else if (!use_netem) common.push_back("--shape-latency");
  const std::string port_file = work + "/port";
  std::vector<std::string> server_argv;
  if (netns) server_argv = {"ip", "netns", "exec", server_ns};
  server_argv.insert(server_argv.end(), {o.rt_exe, "serve", o.scenario, "--bind", netns ? "0.0.0.0" : "127.0.0.1", "--port",
                                         netns ? "7070" : "0", "--port-file", port_file, "--decisions-out",
                                         work + "/decisions.jsonl"});
  server_argv.insert(server_argv.end(), common.begin(), common.end());
  // The epoch is fixed by the testbed and given to every process, the server included (its decision
  // times, periods and the end of arrivals count from it): time zero of the run, after the server's
  // start-up (kServerStartS) and the devices' (--startup).
  constexpr double kServerStartS = 3;
  const double epoch = unix_now() + kServerStartS + o.startup_s;
  char epoch_text[64];
  std::snprintf(epoch_text, sizeof epoch_text, "%.6f", epoch);
  server_argv.insert(server_argv.end(), {"--epoch", epoch_text});
  setup.children.push_back(start_logged(server_argv, work + "/logs/server.log"));
  Child* server = &setup.children.back();
  const auto wait_start = std::chrono::steady_clock::now();
  while (!fs::exists(port_file)) {
    if (!server->running())
      throw std::runtime_error("the edge server exited (status " + std::to_string(server->status()) + ") before listening; see " +
                               work + "/logs/server.log:\n" + read_file(work + "/logs/server.log"));
    if (interrupted) return 130;
    if (std::chrono::steady_clock::now() - wait_start > Seconds(60)) throw std::runtime_error("the edge server did not start within 60 s");
    std::this_thread::sleep_for(Seconds(0.05));
  }
  const std::string port = read_file(port_file).substr(0, read_file(port_file).find('\n'));
  if (epoch - unix_now() < 1)
    log::warn("testbed", "the edge server took " + std::to_string(static_cast<int>(unix_now() - (epoch - kServerStartS - o.startup_s))) +
        " s to start; the devices have less than 1 s before time zero (raise --startup)");
  // The device cap: on the work threads only where cgroup v1 takes thread ids (hw/cpu_cap.hpp).
  std::string cap_scope = o.device_cpu_scope;
  if (cap_scope == "auto") cap_scope = fs::exists("/sys/fs/cgroup/cpu/tasks") ? "work" : "process";
  auto tids_file = [&](int i) { return work + "/device-" + std::to_string(i) + ".tids"; };
  for (int i = 0; i < nd; ++i) {
    std::vector<std::string> argv;
    if (netns) argv = {"ip", "netns", "exec", dev_ns(i)};
    argv.insert(argv.end(), {o.rt_exe, "device", o.scenario, "--id", sc.devices[i].id, "--host",
                             netns ? "10.200.0.1" : "127.0.0.1", "--port", port, "--epoch", epoch_text,
                             "--records", work + "/device-" + std::to_string(i) + ".jsonl"});
    argv.insert(argv.end(), common.begin(), common.end());
    if (o.device_cpu_cores > 0 && cap_scope == "work") argv.insert(argv.end(), {"--work-threads-file", tids_file(i)});
    if (auto skew = o.device_clock_skew_s.find(sc.devices[i].id); skew != o.device_clock_skew_s.end())
      argv.insert(argv.end(), {"--clock-skew", format_double(skew->second)});
    if (auto meter = o.device_power_command.find(sc.devices[i].id); meter != o.device_power_command.end())
      argv.insert(argv.end(), {"--power-command", meter->second});
    setup.children.push_back(start_logged(argv, work + "/logs/device-" + sc.devices[i].id + ".log"));
    // Capped from here: inside `ip netns exec` the cgroup file system is not mounted.
    if (o.device_cpu_cores > 0 && cap_scope == "process") setup.caps.push_back(CpuCap::apply_to(setup.children.back().pid(), o.device_cpu_cores));
  }
  if (o.device_cpu_cores > 0 && cap_scope == "work") {
    // Each device writes its compute and upload threads' ids when they start (before time zero).
    for (int i = 0; i < nd; ++i) {
      const auto deadline = std::chrono::steady_clock::now() + Seconds(60);
      std::vector<long> tids;
      while (true) {
        tids.clear();
        std::ifstream in(tids_file(i));
        for (long t; in >> t;) tids.push_back(t);
        if (tids.size() >= 2 || interrupted) break;
        if (!setup.children[i + 1].running())
          throw std::runtime_error("device " + sc.devices[i].id + " exited before starting; see " + work + "/logs/device-" + sc.devices[i].id + ".log");
        if (std::chrono::steady_clock::now() > deadline)
          throw std::runtime_error("device " + sc.devices[i].id + " did not start its work threads within 60 s");
        std::this_thread::sleep_for(Seconds(0.02));
      }
      if (interrupted) return 130;
      setup.caps.push_back(CpuCap::for_threads(o.device_cpu_cores, sc.devices[i].id));
      for (long t : tids) setup.caps.back()->add_thread(t);
    }
    if (unix_now() > epoch) log::warn("testbed", "capping the devices' work threads ended after time zero");
  }
  server = &setup.children.front();
  say("started the edge server and " + std::to_string(nd) + " device processes; the run starts in " +
      std::to_string(static_cast<int>(o.startup_s)) + " s and lasts " + std::to_string(static_cast<int>(sc.duration_s)) + " s");

  // The timeline: bandwidth changes (tc in namespaces; the processes pace themselves on loopback).
  TestbedTimeline timeline(sc, schedules, std::vector<bool>(static_cast<size_t>(nd), netns));
  int exit_code = 0;
  bool server_exit_reported = false;
  for (;;) {
    const double t = unix_now() - epoch;
    for (const auto& [i, mbps] : timeline.due(t)) shape(i, mbps, false);
    bool devices_running = false;
    for (size_t k = 1; k < setup.children.size(); ++k) {
      devices_running = devices_running || setup.children[k].running();
    }
    if (!devices_running) break;
    if (interrupted) {
      say("interrupted: stopping processes and removing namespaces");
      return 130;
    }
    if (!server_exit_reported && !server->running() && t < sc.duration_s) {
      log::warn("testbed", "the edge server exited (" + describe_exit_status(server->status()) + ") before the run's end; see " + o.out + "/logs/server.log");
      server_exit_reported = true;
    }
    if (t > timeline.deadline_s()) {
      say("devices still running " + format_double(timeline.deadline_s()) + " s after time zero: stopping them");
      for (size_t k = 1; k < setup.children.size(); ++k) setup.children[k].stop(5);
      exit_code = 1;
      break;
    }
    if (!o.quiet) timeline.progress(t);
    std::this_thread::sleep_for(Seconds(0.01));
  }
  server->stop(10);

  std::vector<std::string> journal_paths(nd);
  for (int i = 0; i < nd; ++i)
    if (fs::exists(work + "/device-" + std::to_string(i) + ".jsonl")) journal_paths[i] = work + "/device-" + std::to_string(i) + ".jsonl";
  for (int i = 0; i < nd; ++i) {
    const int status = setup.children[i + 1].status();
    if (status != 0) {
      log::warn("testbed", "device " + sc.devices[i].id + " ended with " + describe_exit_status(status) + " (see " + o.out + "/logs/device-" +
                               sc.devices[i].id + ".log)");
      exit_code = 1;
    }
  }
  nlohmann::json info{{"mode", netns ? "netns" : "loopback"},
                      {"epoch_unix_s", epoch},
                      {"devices", nd},
                      {"device_cpu_cores", o.device_cpu_cores},
                      {"device_cpu_scope", o.device_cpu_cores > 0 ? cap_scope : std::string("none")},
                      {"threads", o.threads},
                      {"fallback_reason", why_not},
                      {"shaping", !netns ? "middleware (rate and latency per device; no shared access point)"
                                  : use_netem ? "device links: tc netem (rate and latency); access point (shared, both directions) and server link: tc tbf"
                                              : "device links: tc tbf (rate), middleware (latency); access point (shared, both directions) and server link: tc tbf"}};
  const RunResults r = write_testbed_results(sc, journal_paths, work + "/decisions.jsonl", unix_now() - epoch, o.clock_tolerance_s, o.out, info);
  fs::remove_all(o.out + "/logs");
  fs::rename(work + "/logs", o.out + "/logs");
  for (int i = 0; i < nd; ++i)
    if (fs::exists(work + "/device-" + std::to_string(i) + ".jsonl"))
      fs::rename(work + "/device-" + std::to_string(i) + ".jsonl", o.out + "/logs/journal-" + sc.devices[i].id + ".jsonl");
  fs::remove_all(work);
  if (!o.quiet) print_testbed_summary(r, netns ? "network namespaces + tc" : "loopback + middleware shaping", o.out);
  return exit_code;
}

}  // namespace coinfer::hw
