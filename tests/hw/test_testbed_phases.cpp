// The testbed's run, written once over two host back-ends (hw/testbed.hpp, hw/testbed_hosts.hpp):
// its phases in order, and what it makes of devices that end badly or are lost, of journals that do
// not come back, of an interruption. The back-end here is a scripted one (no processes, no root): the
// real back-ends are exercised by tests/golden/testbed.sh (namespaces, loopback) and ssh_testbed.sh.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hw/testbed.hpp"
#include "hw/testbed_hosts.hpp"
#include "io/scenario_loader.hpp"

using namespace coinfer;
using namespace coinfer::hw;
namespace fs = std::filesystem;

namespace {

// Records every call; each device runs for `polls_before_end` polls, then ends as scripted.
class ScriptedHosts final : public TestbedHosts {
 public:
  explicit ScriptedHosts(int devices) : end(static_cast<size_t>(devices)) {
    for (auto& e : end) e.kind = ProcessState::Kind::ended;
  }
  std::vector<std::string> calls;
  bool prepare_ok = true, collect_ok = true, finish_ok = true;
  int listening_after = 2;  // server_listening is false this many times first
  int polls_before_end = 3;
  std::vector<ProcessState> end;  // how each device ends (default: exit 0)

  bool prepare(const std::string& work, const std::atomic<bool>&) override {
    calls.push_back("prepare");
    work_ = work;
    return prepare_ok;
  }
  double server_start_s() const override { return 0; }
  void start_server(double) override { calls.push_back("start_server"); }
  bool server_listening() override {
    calls.push_back("server_listening");
    return listening_after-- <= 0;
  }
  bool start_devices(const std::atomic<bool>&) override {
    calls.push_back("start_devices");
    return true;
  }
  std::vector<bool> shaped_devices() const override { return std::vector<bool>(end.size(), false); }
  void reshape(int, double) override { calls.push_back("reshape"); }
  void set_load(int, double) override { calls.push_back("set_load"); }
  ProcessState device_state(int device, double) override {
    if (device == 0) ++polls_;
    if (polls_ <= polls_before_end) return ProcessState{};
    return end[static_cast<size_t>(device)];
  }
  ProcessState server_state(int) override { return ProcessState{}; }
  double poll_interval_s() const override { return 0.001; }
  void stop_devices(double) override { calls.push_back("stop_devices"); }
  void stop_server(double) override { calls.push_back("stop_server"); }
  bool can_fail_server() const override { return true; }
  void kill_server(int) override { calls.push_back("kill_server"); }
  void restart_server(int) override { calls.push_back("restart_server"); }
  bool collect(std::vector<std::string>& journals, std::string& decisions) override {
    calls.push_back("collect");
    journals.assign(end.size(), "");
    // Device 0's journal as a device writes it (hw/record_journal.hpp): moved to logs/ at the end.
    std::ofstream(work_ + "/j0.jsonl") << "";
    journals[0] = work_ + "/j0.jsonl";
    decisions.clear();
    return collect_ok;
  }
  bool finish() override {
    calls.push_back("finish");
    return finish_ok;
  }
  nlohmann::json info() const override { return {{"mode", "scripted"}}; }
  std::string summary_mode() const override { return "scripted"; }
  std::string started_what() const override { return "nothing"; }

 private:
  std::string work_;
  int polls_ = 0;
};

struct PhasedRun {
  Scenario sc;
  TestbedOptions o;
  explicit PhasedRun(const std::string& name) {
    o.scenario = std::string(COINFER_SOURCE_DIR) + "/scenarios/quickstart.yaml";
    sc = load_scenario(o.scenario, {});
    o.out = (fs::temp_directory_path() / ("coinfer-phases-" + name + "-" + std::to_string(::getpid()))).string();
    fs::remove_all(o.out);
    o.quiet = true;
    o.startup_s = 0;
  }
  ~PhasedRun() { fs::remove_all(o.out); }
  int go(ScriptedHosts& h) {
    std::atomic<bool> interrupted{false};
    return run_testbed_on(h, sc, o, interrupted);
  }
};

}  // namespace

TEST(TestbedPhases, RunInOrderAndWriteResultsWithTheBackEndsInfo) {
  PhasedRun run("order");
  ScriptedHosts h(static_cast<int>(run.sc.devices.size()));
  EXPECT_EQ(run.go(h), 0);
  // prepare, the server until it listens (false twice, then true), the devices, then (no deadline
  // reached, nothing shaped) the server stopped once every device ended, collect, finish.
  const std::vector<std::string> expected = {
      "prepare", "start_server", "server_listening", "server_listening", "server_listening", "start_devices", "stop_server", "collect", "finish"};
  EXPECT_EQ(h.calls, expected);
  ASSERT_TRUE(fs::exists(run.o.out + "/results.h5"));
  std::ifstream in(run.o.out + "/testbed.json");
  const nlohmann::json tb = nlohmann::json::parse(in);
  EXPECT_EQ(tb["mode"], "scripted");                               // the back-end's fields ...
  EXPECT_EQ(tb["devices"], 3);                                     // ... and the run's
  EXPECT_TRUE(fs::exists(run.o.out + "/logs/journal-pi0.jsonl"));  // journals kept beside the results
  EXPECT_FALSE(fs::exists(run.o.out + ".work"));                   // the scratch folder is gone
}

TEST(TestbedPhases, ADeviceThatEndsBadlyOrIsLostMakesTheRunExitOneWithResults) {
  for (const auto kind : {ProcessState::Kind::ended, ProcessState::Kind::lost}) {
    PhasedRun run("bad");
    ScriptedHosts h(static_cast<int>(run.sc.devices.size()));
    h.end[1].kind = kind;
    h.end[1].status = 3;
    h.end[1].why = "board pi1 (x) at t = 1.0 s: broken pipe";
    EXPECT_EQ(run.go(h), 1);
    EXPECT_TRUE(fs::exists(run.o.out + "/results.h5"));  // what came back is still written
  }
}

TEST(TestbedPhases, JournalsThatDoNotComeBackOrASetUpThatCannotBeUndoneMakeTheRunExitOne) {
  for (int which = 0; which < 2; ++which) {
    PhasedRun run("collect");
    ScriptedHosts h(static_cast<int>(run.sc.devices.size()));
    (which == 0 ? h.collect_ok : h.finish_ok) = false;
    EXPECT_EQ(run.go(h), 1);
    EXPECT_TRUE(fs::exists(run.o.out + "/summary.json"));
  }
}

TEST(TestbedPhases, AnInterruptedSetUpStartsNothingAndWritesNoResults) {
  PhasedRun run("interrupted");
  ScriptedHosts h(static_cast<int>(run.sc.devices.size()));
  h.prepare_ok = false;
  EXPECT_EQ(run.go(h), 130);
  EXPECT_EQ(h.calls, std::vector<std::string>{"prepare"});
  EXPECT_FALSE(fs::exists(run.o.out + "/results.h5"));
}

TEST(TestbedPhases, AServerFailureKillsTheServerAndARecoverStartsItAgainInTime) {
  // The scenario's fail at 20 ms and recover at 50 ms of run time are carried out
  // once each, in order, while the devices run (about 1 ms a poll for 300 polls), and the server
  // that was killed and started again is stopped at the end like any other.
  PhasedRun run("failure");
  EventSpec fail;
  fail.at_s = 0.02;
  fail.what = event::ServerFail{"edge0"};
  EventSpec recover = fail;
  recover.at_s = 0.05;
  recover.what = event::ServerRecover{"edge0"};
  run.sc.events.insert(run.sc.events.begin(), {fail, recover});
  ScriptedHosts h(static_cast<int>(run.sc.devices.size()));
  h.polls_before_end = 300;
  EXPECT_EQ(run.go(h), 0);
  const std::vector<std::string> expected = {"prepare",       "start_server", "server_listening", "server_listening", "server_listening",
                                             "start_devices", "kill_server",  "restart_server",   "stop_server",      "collect",
                                             "finish"};
  EXPECT_EQ(h.calls, expected);
}
