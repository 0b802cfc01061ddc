#include "hw/testbed.hpp"

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
#include "hw/journal_merge.hpp"
#include "hw/protocol.hpp"
#include "hw/record_journal.hpp"
#include "hw/runtime_scope.hpp"
#include "hw/testbed_hosts.hpp"
#include "plumbing/atomic_dir.hpp"
#include "plumbing/child_process.hpp"
#include "io/decisions_jsonl.hpp"
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
}  // namespace

RunResults write_testbed_results(const Scenario& sc, const std::vector<std::string>& journal_paths, const std::string& decisions_path, double end_s,
                                 double clock_tolerance_s, const std::string& out, const nlohmann::json& info) {
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
  for (size_t i = 0; i < sc.devices.size(); ++i) {
    loads_.emplace_back(sc.devices[i], sc.events);
    processors_.push_back(sc.devices[i].processor);
    for (const auto& p : loads_.back().points()) load_changes_.emplace_back(p.t_s, static_cast<int>(i));
  }
  std::sort(load_changes_.begin(), load_changes_.end());
  for (const EventSpec& e : sc.events)  // in time order (the loader sorts them)
    if (e.about_server()) server_changes_.push_back({e.at_s, {sc.server_index(e.server()), e.is<event::ServerFail>()}});
}

std::vector<std::pair<int, bool>> TestbedTimeline::due_server_changes(double t) {
  std::vector<std::pair<int, bool>> out;
  for (; next_server_ < server_changes_.size() && server_changes_[next_server_].first <= t; ++next_server_)
    out.push_back(server_changes_[next_server_].second);
  return out;
}

std::vector<std::pair<int, double>> TestbedTimeline::due_loads(double t) {
  std::vector<std::pair<int, double>> out;
  for (; next_load_ < load_changes_.size() && load_changes_[next_load_].first <= t; ++next_load_) {
    const int i = load_changes_[next_load_].second;
    out.emplace_back(i, loads_[static_cast<size_t>(i)].share_at(load_changes_[next_load_].first, processors_[static_cast<size_t>(i)]));
  }
  return out;
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
  if (t <= duration_s_)
    log::info("testbed", strprintf("t = %.0f / %.0f s", t, duration_s_));
  else
    log::info("testbed", strprintf("t = %.0f s: arrivals ended, waiting for unfinished requests (drain %.0f s)", t, drain_s_));
}

std::string read_run_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string server_log_name(const Scenario& sc, int server) {
  return server == 0 ? "server.log" : "server-" + sc.servers[static_cast<size_t>(server)].id + ".log";
}

void print_testbed_summary(const RunResults& r, const std::string& mode, const std::string& out) {
  const MetricsSummary& total = r.summary.back();
  std::printf(
      "testbed (%s): %lld completed, %lld failed, %.2f req/s delivered in the window, latency mean %.1f ms p95 %.1f ms%s; wrote "
      "%s/results.h5, summary.json\n",
      mode.c_str(), total.completed, total.failed, total.throughput_rps, total.latency.mean_ms, total.latency.p95_ms,
      total.saturated ? "; SATURATED: queues grew over the window (summary.json total.saturation)" : "", out.c_str());
}

namespace {

void say(const TestbedOptions& o, const std::string& s) {
  if (!o.quiet) log::info("testbed", s);
}

// Phase 2: the server, started and listening.
void start_server(TestbedHosts& hosts, double epoch, const std::string& work, const std::atomic<bool>& interrupted) {
  hosts.start_server(epoch);
  const auto wait_start = std::chrono::steady_clock::now();
  while (!hosts.server_listening()) {
    if (interrupted) return;
    if (std::chrono::steady_clock::now() - wait_start > Seconds(60))
      throw std::runtime_error("the edge servers did not listen within 60 s; see " + work + "/logs/server*.log");
    std::this_thread::sleep_for(Seconds(0.05));
  }
}

// Phase 4: the run's clock until every device has ended (or the deadline): bandwidth changes, devices
// that end badly or are lost, the server ending early, progress. Returns 0, 1 (a device ended badly,
// was lost or had to be stopped) or 130 (interrupted).
int follow_run(TestbedHosts& hosts, const Scenario& sc, const TestbedOptions& o, double epoch, const std::atomic<bool>& interrupted) {
  const int nd = static_cast<int>(sc.devices.size());
  std::vector<BandwidthSchedule> schedules;
  for (const auto& d : sc.devices) schedules.emplace_back(d, sc.events);
  TestbedTimeline timeline(sc, schedules, hosts.shaped_devices());
  std::vector<bool> reported(static_cast<size_t>(nd), false);
  int exit_code = 0;
  const size_t ns = sc.servers.size();
  std::vector<bool> server_exit_reported(ns, false);
  std::vector<bool> server_down(ns, false);  // killed by a fail event, not yet started again
  for (;;) {
    const double t = unix_now() - epoch;
    for (const auto& [i, mbps] : timeline.due(t)) hosts.reshape(i, mbps);
    for (const auto& [i, share] : timeline.due_loads(t)) hosts.set_load(i, share);
    for (const auto& [j, fails] : timeline.due_server_changes(t)) {  // a real kill, a real restart
      const std::string& id = sc.servers[static_cast<size_t>(j)].id;
      if (fails && !server_down[static_cast<size_t>(j)]) {
        hosts.kill_server(j);
        say(o, strprintf("t = %.2f s: killed the edge server (%s; a fail event)", t, id.c_str()));
      } else if (!fails && server_down[static_cast<size_t>(j)]) {
        hosts.restart_server(j);
        say(o, strprintf("t = %.2f s: started the edge server again (%s; a recover event); its devices reconnect", t, id.c_str()));
      }
      server_down[static_cast<size_t>(j)] = fails;
    }
    bool running = false;
    for (int i = 0; i < nd; ++i) {
      const ProcessState st = hosts.device_state(i, t);
      if (st.running()) {
        running = true;
        continue;
      }
      if (reported[static_cast<size_t>(i)]) continue;
      reported[static_cast<size_t>(i)] = true;
      const std::string& id = sc.devices[static_cast<size_t>(i)].id;
      if (st.kind == ProcessState::Kind::lost) {
        log::warn("testbed", "lost " + st.why + "; its requests from then on are reported failed");
        exit_code = 1;
      } else if (st.status != 0) {
        log::warn("testbed", "device " + id + " ended with " + describe_exit_status(st.status) + (st.why.empty() ? "" : ": " + st.why) + " (see " +
                                 o.out + "/logs/device-" + id + ".log)");
        exit_code = 1;
      }
    }
    if (!running) break;
    if (interrupted) return 130;
    for (size_t j = 0; j < ns; ++j)
      if (const ProcessState server = hosts.server_state(static_cast<int>(j));
          !server_down[j] && !server_exit_reported[j] && !server.running() && t < sc.duration_s) {
        log::warn("testbed", "edge server " + sc.servers[j].id + " exited (" + describe_exit_status(server.status) + ") before the run's end; see " +
                                 o.out + "/logs/" + server_log_name(sc, static_cast<int>(j)));
        server_exit_reported[j] = true;
      }
    if (t > timeline.deadline_s()) {
      say(o, "devices still running " + format_double(timeline.deadline_s()) + " s after time zero: stopping them");
      hosts.stop_devices(5);
      return 1;
    }
    if (!o.quiet) timeline.progress(t);
    std::this_thread::sleep_for(Seconds(hosts.poll_interval_s()));
  }
  return exit_code;
}

}  // namespace

int run_testbed(const TestbedOptions& o, const std::atomic<bool>& interrupted) {
  // What can be refused is refused before anything exists.
  const Scenario sc = load_scenario(o.scenario, o.sets);
  check_real_runtime_scope(sc);
  const std::unique_ptr<TestbedHosts> hosts = o.inventory.empty() ? make_netns_hosts(sc, o) : make_ssh_hosts(sc, o);
  if (!hosts->can_fail_server())
    for (const EventSpec& e : sc.events)
      if (e.is<event::ServerFail>())
        throw InputError(e.where, "events",
                         "server failures are emulated on the namespace and loopback testbed (the server process is killed and "
                         "started again); the SSH testbed cannot do that yet: remove the fail/recover events or run without --inventory");
  return run_testbed_on(*hosts, sc, o, interrupted);
}

// The run's phases, whatever hosts it runs on.
int run_testbed_on(TestbedHosts& hosts, const Scenario& sc, const TestbedOptions& o, const std::atomic<bool>& interrupted) {
  const int nd = static_cast<int>(sc.devices.size());
  const std::string work = o.out + ".work";
  fs::remove_all(work);
  fs::create_directories(work + "/logs");

  // 1. The network and the hosts.
  if (!hosts.prepare(work, interrupted)) return 130;
  // 2. The server. Time zero (the epoch, given to every process, the server included: its decision
  // times, periods and the end of arrivals count from it) comes after the server's start-up and the
  // devices' (--startup).
  const double epoch = unix_now() + hosts.server_start_s() + o.startup_s;
  start_server(hosts, epoch, work, interrupted);
  if (interrupted) return 130;
  if (epoch - unix_now() < 1)
    log::warn("testbed", "the edge server took long to start: the devices have less than 1 s before time zero (raise --startup)");
  // 3. The devices.
  try {
    if (!hosts.start_devices(interrupted)) return 130;
  } catch (const InputError&) {  // a device refused its input, saying why: nothing to look at in the logs
    fs::remove_all(work);
    throw;
  }
  if (unix_now() > epoch)
    log::warn("testbed", "the devices were started " + format_double(unix_now() - epoch) +
                             " s after time zero: their first inputs meet a scheme that is not yet in place (raise --startup)");
  say(o, "started " + hosts.started_what() + "; the run starts in " + std::to_string(static_cast<int>(std::max(0.0, epoch - unix_now()))) +
             " s and lasts " + format_double(sc.duration_s) + " s");
  // 4. The run.
  int exit_code = follow_run(hosts, sc, o, epoch, interrupted);
  if (exit_code == 130) {
    say(o, "interrupted: stopping every process and undoing the set-up");
    return 130;
  }
  const double end_s = unix_now() - epoch;
  hosts.stop_server(10);
  // 5. Journals and decisions back; the set-up undone before anything is written.
  std::vector<std::string> journals;
  std::string decisions;
  if (!hosts.collect(journals, decisions)) exit_code = 1;
  journals.resize(static_cast<size_t>(nd));
  if (!hosts.finish()) exit_code = 1;
  // 6. Results in the simulator's schema; logs and journals beside them.
  nlohmann::json info = hosts.info();
  info["epoch_unix_s"] = epoch;
  info["devices"] = nd;
  info["threads"] = o.threads;
  const RunResults r = write_testbed_results(sc, journals, decisions, end_s, o.clock_tolerance_s, o.out, info);
  fs::remove_all(o.out + "/logs");
  fs::rename(work + "/logs", o.out + "/logs");
  for (int i = 0; i < nd; ++i)
    if (const std::string& j = journals[static_cast<size_t>(i)]; !j.empty() && fs::exists(j))
      fs::rename(j, o.out + "/logs/journal-" + sc.devices[static_cast<size_t>(i)].id + ".jsonl");
  fs::remove_all(work);
  if (!o.quiet) print_testbed_summary(r, hosts.summary_mode(), o.out);
  return exit_code;
}

}  // namespace coinfer::hw
