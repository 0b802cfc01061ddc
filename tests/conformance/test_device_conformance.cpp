// Conformance of the two engines' device adapters: a scripted world runs in the simulator
// (sim/device.cpp over SimGrid) with the device loop's trace on; every event each device's loop
// received is then replayed, with a fake clock and no transport, through the real runtime's adapter
// (hw/device_requests.hpp, what `coinfer device` drives from its threads), and both must take the same
// actions in the same order: the same requests created, computed, uploaded, helped and finished.
// Request and helper-task ids are compared by order of appearance (the simulator numbers requests
// across devices, the real device per device; the real server names helper tasks itself).
//
// The worlds: every strategy, batching on and off, a helper, a device leaving mid-batch, decisions
// arriving mid-request, open-loop arrivals, deadlines with late requests dropped (on the device and at
// the server) and priorities. The mutation check at the end plants one drift in the
// real runtime's side (a scheduling message applied only once the current computation ended) and
// expects the comparison to fail.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/device_loop.hpp"
#include "core/execution_time.hpp"
#include "hw/device_requests.hpp"
#include "tests/conformance/conformance_world.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {

using World = TracedWorld;  // traces per device index

// Runs `yaml` in the simulator with the device loops' trace on.
World simulate(SimSetup& s, const std::string& yaml) { return simulate_traced(s, yaml, DeviceLoop::set_trace_sink); }

// The text after the first `n` words (a failure reason may hold spaces).
std::string rest(const std::string& line, int n) {
  size_t at = 0;
  for (int i = 0; i < n; ++i) {
    at = line.find(' ', at);
    if (at == std::string::npos) return "";
    ++at;
  }
  return line.substr(at);
}

// Ids renumbered by order of first appearance: requests from "> new", helper tasks from
// "help_arrived"; every line that names one gets its ordinal.
Trace normalised(const Trace& t) {
  std::map<std::string, std::string> req, task;
  Trace out;
  for (const std::string& line : t) {
    std::vector<std::string> w = words(line);
    if (w.size() >= 3 && w[0] == ">" && w[1] == "new") req.emplace(w[2], "r" + std::to_string(req.size()));
    if (w.size() >= 2 && w[0] == "help_arrived") task.emplace(w[1], "t" + std::to_string(task.size()));
    std::string k = w.empty() ? "" : w[0];
    size_t id_at = 1;
    if (k == ">") {
      k = w.size() > 1 ? w[1] : "";
      id_at = 2;
    }
    if (w.size() > id_at) {
      std::map<std::string, std::string>& ids = (k == "help" || k == "help_arrived") ? task : req;
      if (k == "new" || k == "compute" || k == "upload" || k == "finished" || k == "computed" || k == "uploaded" || k == "result" || k == "fail" ||
          k == "help" || k == "help_arrived") {
        auto it = ids.find(w[id_at]);
        if (it != ids.end()) w[id_at] = it->second;
      }
    }
    std::string s;
    for (size_t i = 0; i < w.size(); ++i) s += (i ? " " : "") + w[i];
    out.push_back(s);
  }
  return out;
}

// How the replay may deviate from the recorded events (the mutation check).
struct Drift {
  bool strategy_after_computation = false;  // apply a scheduling message only after the next "computed"
};

// Replays device `d`'s recorded events through the real runtime's adapter; returns its trace. `uploads`
// (if given) gets each upload job the adapter hands its upload thread, as "split K cloud M" in order:
// what the real device puts in its task header.
Trace replay(const World& w, int d, const Drift& drift = {}, std::vector<std::string>* uploads = nullptr) {
  const Scenario& sc = w.scenario;
  const DeviceSpec& spec = sc.devices[static_cast<size_t>(d)];
  const ModelSpec model = w.models.instantiate(spec.model, spec.dataset);
  const int server = sc.server_index(spec.server);
  const LutKey dev_key{spec.type, spec.model, spec.dataset}, srv_key{sc.servers[static_cast<size_t>(server)].type, spec.model, spec.dataset};
  const DataParallelCosts costs = data_parallel_costs(spec, sc.access_point, model, w.luts.contains(dev_key) ? &w.luts.table(dev_key) : nullptr,
                                                      w.luts.contains(srv_key) ? &w.luts.table(srv_key) : nullptr);
  char tmpl[] = "/tmp/coinfer-conformance-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  Trace out;
  {
    hw::JournalWriter journal(dir + "/journal.jsonl");
    const BandwidthSchedule link(spec, sc.events);  // the real device's view of its link
    hw::DeviceRequests rq(spec, d, server, sc.seed, model.num_stages(), sc.duration_s, costs, link, journal);
    DeviceLoop& loop = rq.loop();
    DeviceLoop::set_trace_sink([&out](int, const std::string& line) { out.push_back(line); });
    // Recorded ids -> the adapter's: requests in creation order, helper tasks as the server numbers them.
    std::map<std::string, std::int64_t> req;
    std::int64_t next_req = 0, next_task = 100;
    std::map<std::string, std::int64_t> task;
    auto id_of = [&](const std::string& s) { return req.count(s) ? req.at(s) : std::int64_t{-1}; };
    std::vector<std::string> held;  // scheduling messages held back by the drift
    for (const std::string& line : w.traces.at(d)) {
      while (uploads) {  // what the upload thread would take now
        const std::optional<hw::UploadJob> job = rq.take_upload();
        if (!job) break;
        uploads->push_back("split " + std::to_string(job->split) + " cloud " + std::to_string(job->cloud_split));
      }
      const std::vector<std::string> x = words(line);
      if (x.empty()) continue;
      const std::string& k = x[0];
      if (k == ">") {
        if (x.size() >= 3 && x[1] == "new") req[x[2]] = next_req++;
        continue;  // an action: the adapter must take it by itself
      }
      if (k == "join")
        loop.on_join(std::stod(x[1]));
      else if (k == "wake")
        loop.wake(std::stod(x[1]));
      else if (k == "computed") {
        const std::int64_t id = id_of(x[1]);
        if (x[3] == "ok") rq.keep_state(id, "state");
        loop.on_computed(id, std::stod(x[2]), x[3] == "ok", rest(line, 4));
        for (const std::string& s : held) loop.on_strategy(parse_strategy(s));
        held.clear();
      } else if (k == "uploaded")
        loop.on_uploaded(id_of(x[1]), std::stod(x[2]), x[3] == "ok", rest(line, 4));
      else if (k == "result")
        loop.on_result(id_of(x[1]), std::stod(x[2]), x[3] == "ok", rest(line, 4), x[3] == "dropped");
      else if (k == "fail")
        loop.fail(id_of(x[1]), std::stod(x[2]), rest(line, 3));
      else if (k == "help_arrived") {
        task[x[1]] = next_task++;
        rq.add_helper_batch(task[x[1]], 0, {{1, "forwarded"}});
      } else if (k == "help_done")
        loop.on_help_done();
      else if (k == "strategy") {
        if (drift.strategy_after_computation && loop.processor_busy())
          held.push_back(x[1]);
        else
          loop.on_strategy(parse_strategy(x[1]));
      } else if (k == "pause")
        loop.set_admission_paused(x[1] == "1");
      else if (k == "stop")
        loop.stop();
      else if (k == "abandon")
        loop.abandon([](const DeviceRequest&) { return std::string("abandoned"); });
      else
        ADD_FAILURE() << "unknown trace line: " << line;
    }
    DeviceLoop::set_trace_sink(nullptr);
  }
  std::filesystem::remove_all(dir);
  return out;
}

// Every device of the world: the replay takes exactly the simulator's actions.
void expect_conformance(const World& w) {
  ASSERT_FALSE(w.traces.empty());
  for (const auto& [d, trace] : w.traces) {
    const Trace sim = normalised(trace), real = normalised(replay(w, d));
    ASSERT_GT(sim.size(), 3u) << "device " << d << " did nothing";
    EXPECT_EQ(sim.size(), real.size()) << "device " << d;
    for (size_t i = 0; i < std::min(sim.size(), real.size()); ++i)
      if (sim[i] != real[i]) {
        ADD_FAILURE() << "device " << d << " line " << i << ": simulator '" << sim[i] << "', real runtime '" << real[i] << "'";
        break;
      }
  }
}

Trace actions(const Trace& t) {
  Trace out;
  for (const std::string& s : t)
    if (s.rfind("> ", 0) == 0) out.push_back(s);
  return out;
}

size_t count(const Trace& t, const std::string& prefix) {
  size_t n = 0;
  for (const std::string& s : t) n += s.rfind(prefix, 0) == 0;
  return n;
}

const std::string kLink = "{bandwidth_mbps: 100, latency_ms: 1}";

}  // namespace

TEST(DeviceConformance, EveryStaticStrategyWithoutBatching) {
  SimSetup s;
  write_standard_luts(s);
  const World w = simulate(s, scenario(device("a", "local") + device("b", "offload") + device("c", "pp(4)", "{arrival: closed_loop, in_flight: 2}") +
                                           device("d", "data_parallel", "{arrival: closed_loop}"),
                                       "{window_ms: 0, max_size: 1}", 1));
  EXPECT_EQ(w.traces.size(), 4u);
  expect_conformance(w);
}

TEST(DeviceConformance, BatchingWithAWindowAndOpenLoopArrivals) {
  SimSetup s;
  write_standard_luts(s);
  const World w = simulate(s, scenario(device("a", "offload", "{arrival: poisson, rate_per_s: 40}", kLink) +
                                           device("b", "pp(2)", "{arrival: poisson, rate_per_s: 20}", kLink) +
                                           device("c", "offload", "{arrival: closed_loop, in_flight: 3}", kLink),
                                       "{window_ms: 20, max_size: 4}", 2));
  expect_conformance(w);
}

TEST(DeviceConformance, LateRequestsAreDroppedAlikeAndPrioritiesApply) {
  // Overloaded devices with deadlines and drop_late: requests dropped before a device segment
  // (local, pp) and before an upload (offload) must be the same in both engines; b's priority reorders
  // the server's queue, which the devices see through their results.
  SimSetup s;
  write_standard_luts(s);
  const World w =
      simulate(s, scenario(device("a", "local", "{arrival: poisson, rate_per_s: 30, deadline_ms: 150, drop_late: true}") +
                               device("b", "offload", "{arrival: poisson, rate_per_s: 120, deadline_ms: 40, drop_late: true, priority: 2}", kLink) +
                               device("c", "pp(3)", "{arrival: poisson, rate_per_s: 40, deadline_ms: 60, drop_late: true}", kLink),
                           "{window_ms: 0, max_size: 1}", 2));
  int dropped = 0, dropped_at_server = 0;
  for (const auto& t : w.traces)
    for (const auto& line : t.second) {
      if (line.find(" dropped ") != std::string::npos) ++dropped;
      if (line.rfind("result ", 0) == 0 && line.find(" dropped dropped at server") != std::string::npos) ++dropped_at_server;
    }
  EXPECT_GT(dropped, 0) << "the world must drop requests for the comparison to mean something";
  // b's uploads queue behind each other at the one-worker server: some pass their 40 ms there and the
  // server drops them (core/server_loop.hpp); their devices record them dropped alike.
  EXPECT_GT(dropped_at_server, 0);
  expect_conformance(w);
}

TEST(DeviceConformance, AnIdleHelperRunsForwardedBatches) {
  SimSetup s;
  write_standard_luts(s);
  s.write_lut("helper", 0.0005);
  const std::string wl = "{arrival: closed_loop, in_flight: 2}";
  const World w =
      simulate(s, scenario(device("a", "offload", wl, kLink) + device("b", "offload", wl, kLink) + device("c", "offload", wl, kLink) +
                               "  - {id: h, type: helper, model: dgcnn, dataset: modelnet40, link: " + kLink + ", workload: {arrival: none}}\n",
                           "{window_ms: 0, max_size: 1}", 1, 0, 1, "scheduler: {name: static, helpers: true}\n"));
  ASSERT_TRUE(w.traces.count(3));
  EXPECT_GT(count(w.traces.at(3), "> help"), 0u) << "the helper was never used: the world does not test helpers";
  expect_conformance(w);
}

TEST(DeviceConformance, ADeviceLeavesMidBatchAndAnotherJoins) {
  SimSetup s;
  write_standard_luts(s);
  const World w = simulate(s, scenario(device("a", "offload", "{arrival: closed_loop, in_flight: 2}", kLink) +
                                           device("b", "pp(3)", "{arrival: poisson, rate_per_s: 30}", kLink),
                                       "{window_ms: 30, max_size: 8}", 1.5, 0, 1,
                                       "events:\n  - {at_s: 0.505, device: a, leave: true}\n  - {at_s: 0.3, device: b, join: true}\n"));
  expect_conformance(w);
}

TEST(DeviceConformance, DecisionsArriveMidRequest) {
  SimSetup s;
  write_standard_luts(s);
  const std::string devs =
      device("a", "offload", "{arrival: closed_loop, in_flight: 1}", kLink) + device("b", "pp(5)", "{arrival: closed_loop, in_flight: 2}", kLink);
  const World w =
      simulate(s, scenario(devs, "{window_ms: 5, max_size: 2}", 3, 0, 1,
                           "scheduler: {name: hierarchical, objective: latency}\n"
                           "events:\n  - {at_s: 1.013, device: a, bandwidth_mbps: 0.05}\n  - {at_s: 2.007, device: a, bandwidth_mbps: 100}\n"));
  size_t changes = 0;
  for (const auto& [d, t] : w.traces) changes += count(t, "strategy ");
  EXPECT_GT(changes, 0u) << "no decision reached a device: the world does not test decisions";
  expect_conformance(w);
}

// A cloud tier (core/cloud_handoff.hpp): pp(2,8) on an edge with a cloud, and pp(3) beside it. Both
// engines take the same actions, and each upload the real adapter hands its upload thread names the
// split and the cloud split the simulator's device routed it with ("> upload ID K cloud M"): what the
// real device tells its edge (TaskHeader::cloud_split).
TEST(DeviceConformance, ACloudPartIsRoutedAlike) {
  SimSetup s;
  write_standard_luts(s);
  std::string y = scenario("  - {id: a, server: srv, type: testdev, model: dgcnn, dataset: modelnet40, link: " + kLink +
                               ", strategy: \"pp(2,8)\", workload: {arrival: closed_loop, in_flight: 2}}\n" +
                               "  - {id: b, server: srv, type: testdev, model: dgcnn, dataset: modelnet40, link: " + kLink +
                               ", strategy: \"pp(3)\", workload: {arrival: poisson, rate_per_s: 20}}\n",
                           "{window_ms: 5, max_size: 4}", 1);
  const std::string edge = "  - {id: srv, type: testsrv,";
  y.replace(y.find(edge), edge.size(),
            "  - {id: cloud, type: testsrv, batch: {window_ms: 0, max_size: 1}, link: {bandwidth_mbps: 8, latency_ms: 20}}\n"
            "  - {id: srv, type: testsrv, cloud: cloud,");
  const World w = simulate(s, y);
  expect_conformance(w);
  for (const auto& [d, trace] : w.traces) {
    std::vector<std::string> sim_uploads, real_uploads;
    for (const std::string& line : trace)
      if (line.rfind("> upload ", 0) == 0) {
        const std::vector<std::string> x = words(line);
        sim_uploads.push_back("split " + x[3] + " cloud " + (x.size() >= 6 ? x[5] : "0"));
      }
    replay(w, d, {}, &real_uploads);
    ASSERT_GT(sim_uploads.size(), 3u) << "device " << d;
    // a (index 0) routes every request with its cloud part at 8; b has none.
    EXPECT_EQ(sim_uploads.front(), d == 0 ? "split 2 cloud 8" : "split 3 cloud 0") << "device " << d;
    EXPECT_EQ(real_uploads, sim_uploads) << "device " << d;
  }
}

// The mutation check: the real runtime's side applies a scheduling message only once the computation
// running when it arrived has ended (a drift of one rule in one engine). The comparison must fail.
TEST(DeviceConformance, APlantedDriftIsCaught) {
  SimSetup s;
  write_standard_luts(s);
  const std::string devs = device("a", "pp(4)", "{arrival: closed_loop, in_flight: 2}", kLink);
  const World w = simulate(s, scenario(devs, "{window_ms: 0, max_size: 1}", 3, 0, 1,
                                       "scheduler: {name: hierarchical, objective: latency}\n"
                                       "events:\n  - {at_s: 1.013, device: a, bandwidth_mbps: 0.05}\n"));
  ASSERT_GT(count(w.traces.at(0), "strategy "), 0u);
  const Trace sim = actions(normalised(w.traces.at(0)));
  EXPECT_EQ(sim, actions(normalised(replay(w, 0))));  // without the drift: the same actions
  Drift drift;
  drift.strategy_after_computation = true;
  EXPECT_NE(sim, actions(normalised(replay(w, 0, drift))));  // with it: other actions
}
