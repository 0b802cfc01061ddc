// Conformance of the two engines' server adapters (core/server_loop.hpp): a scripted world runs in the
// simulator (sim/server_actors.cpp) with the server loops' trace on; every event each server's loop
// received (uploads with their requests' facts, timers, batches ended, helpers done, helpers and
// batching set) is then replayed, with a fake clock and no transport, through a loop whose actions
// are the real server's: its requests (hw/pending_request.hpp) made from each upload as
// hw/edge_server.cpp makes them from a task header (split, cloud split, creation on the device's
// clock, the bytes received), its facts (hw::request_facts), the server's rules
// (core/server_request_rules.hpp) on the server's timing built as the real server builds it (its
// devices' models as named), a helper's bandwidth from the scenario's schedule (what the real server
// uses before the helper's first heartbeat). Both must take the same actions in the same order: the
// same batches started (token and requests), forwarded to the same helpers, the same requests dropped.
//
// The worlds: batching with a window and open-loop arrivals, late requests dropped with priorities,
// an idle helper taking forwarded batches, a cloud tier with late requests dropped at both ends. The mutation check at the end plants one
// drift on the real side (priorities ignored) and expects the comparison to fail.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/bandwidth_schedule.hpp"
#include "core/server_loop.hpp"
#include "core/server_request_rules.hpp"
#include "core/server_timing.hpp"
#include "core/units.hpp"
#include "hw/pending_request.hpp"
#include "tests/conformance/conformance_world.hpp"

using namespace coinfer;
using namespace coinfer::test;

namespace {

using World = TracedWorld;  // traces per server index

// Runs `yaml` in the simulator with the server loops' trace on.
World simulate(SimSetup& s, const std::string& yaml) { return simulate_traced(s, yaml, ServerLoopTrace::set_sink); }

// The number after a one-letter tag ("d3" -> 3) or "@" ("@0.25" -> 0.25).
double tagged(const std::string& word) { return std::strtod(word.c_str() + 1, nullptr); }

// The actions only, each request named by its id alone ("> start 3 r5 r9"): what both sides must agree
// on (the simulator's trace names each request with its facts too).
Trace actions(const Trace& t) {
  Trace out;
  for (const std::string& line : t) {
    if (line.rfind("> ", 0) != 0) continue;
    std::string kept;
    for (const std::string& w : words(line))
      if (w == ">" || w == "start" || w == "forward" || w == "drop" || std::isdigit(static_cast<unsigned char>(w[0])) ||
          (w.size() > 1 && w[0] == 'r' && std::isdigit(static_cast<unsigned char>(w[1]))))
        kept += (kept.empty() ? "" : " ") + w;
    out.push_back(kept);
  }
  return out;
}

struct Drift {
  bool ignore_priorities = false;  // the real side's batches taken oldest first whatever their priority
};

// The real server's side of one server's loop.
class RealSide : public ServerActions<hw::Pending> {
 public:
  RealSide(const Scenario& sc, int server, const LutSet& luts, Drift drift)
      : timing_(sc, server, luts, ServerTiming::named_models(sc)), rules_(sc, server, timing_), drift_(drift) {
    for (const DeviceSpec& d : sc.devices) schedules_.emplace_back(d, sc.events);
  }
  void set_now(double t) { now_ = t; }

  double expected_seconds(const std::vector<hw::Pending>& b) const override {
    return rules_.expected_seconds(facts(b.front()), static_cast<int>(b.size()));
  }
  double helper_seconds(int helper, const std::vector<hw::Pending>& b) const override {
    double bytes = 0;
    for (const auto& p : b) bytes += static_cast<double>(p.state_bytes.size());
    return rules_.helper_seconds(helper, facts(b.front()), static_cast<int>(b.size()), bytes,
                                 mbps_to_bytes_per_s(schedules_[static_cast<size_t>(helper)].mbps_at(now_)));
  }
  int batch_limit(const hw::Pending& p) const override { return rules_.batch_limit(facts(p)); }
  double drop_after_s(const hw::Pending& p) const override { return rules_.drop_after_s(facts(p)); }
  double seconds_alone(const hw::Pending& p) const override { return rules_.seconds_alone(facts(p)); }
  int priority(const hw::Pending& p) const override { return drift_.ignore_priorities ? 0 : rules_.priority(facts(p)); }
  std::string describe(const hw::Pending& p) const override { return "r" + std::to_string(p.task); }
  void start_batch(std::uint64_t, std::vector<hw::Pending>) override {}
  void forward(int, std::vector<hw::Pending>) override {}
  void drop(hw::Pending, double) override {}

  static constexpr double kEpoch = 1.0;  // Unix time of run time 0 (a creation of 0 reads "not sent")

 private:
  ServerRequestFacts facts(const hw::Pending& p) const { return hw::request_facts(p, kEpoch); }

  ServerTiming timing_;
  ServerRequestRules rules_;
  Drift drift_;
  std::vector<BandwidthSchedule> schedules_;
  double now_ = 0;
};

// Replays server `j`'s recorded events through the real side; returns the trace its loop wrote.
Trace replay(const World& w, int j, const Drift& drift = {}) {
  Trace out;
  RealSide side(w.scenario, j, w.luts, drift);
  const ServerSpec& spec = w.scenario.servers[static_cast<size_t>(j)];
  ServerLoop<hw::Pending> loop(spec.batch, spec.workers, side);
  loop.trace_as(j);
  ServerLoopTrace::set_sink([&out](int, const std::string& line) { out.push_back(line); });
  for (const std::string& line : w.traces.at(j)) {
    const std::vector<std::string> x = words(line);
    if (x.empty() || x[0] == ">") continue;
    const double t = x.back()[0] == '@' ? tagged(x.back()) : 0;
    side.set_now(t);
    if (x[0] == "upload") {  // upload r<id> d<device> s<split> c<cloud split> a<at cloud> t<created> b<bytes> g<group> @t
      hw::Pending p;
      p.task = static_cast<std::uint64_t>(tagged(x[1]));
      p.device = static_cast<int>(tagged(x[2]));
      const int split = static_cast<int>(tagged(x[3])), cloud_split = static_cast<int>(tagged(x[4]));
      p.at_cloud = tagged(x[5]) != 0;
      // As the real server makes them: at a cloud the part's split is m and it has no cloud split
      // (on_cloud_task); at an edge, the device's split and its cloud split (on_task).
      p.split = p.at_cloud ? cloud_split : split;
      p.cloud_split = p.at_cloud ? 0 : cloud_split;
      p.t_created = RealSide::kEpoch + tagged(x[6]);
      p.state_bytes.assign(static_cast<size_t>(tagged(x[7])), '\0');
      loop.on_upload(std::move(p), static_cast<int>(tagged(x[8])), t);
    } else if (x[0] == "timer") {
      loop.on_timer(t);
    } else if (x[0] == "done") {
      loop.on_batch_done(std::stoull(x[1]), t);
    } else if (x[0] == "helper_done") {
      loop.on_helper_done(std::stoi(x[1]), t);
    } else if (x[0] == "helpers") {
      std::vector<int> helpers;
      for (size_t i = 1; i + 1 < x.size(); ++i) helpers.push_back(std::stoi(x[i]));
      loop.set_helpers(helpers, t);
    } else if (x[0] == "batching") {  // "20ms/8"
      BatchSpec b;
      b.window_ms = std::strtod(x[1].c_str(), nullptr);
      b.max_size = std::stoi(x[1].substr(x[1].find('/') + 1));
      loop.set_batching(b, t);
    } else if (x[0] == "failure") {
      loop.on_failure();
    } else {
      ADD_FAILURE() << "unknown trace line: " << line;
    }
  }
  ServerLoopTrace::set_sink(nullptr);
  return out;
}

size_t count(const Trace& t, const std::string& prefix) {
  size_t n = 0;
  for (const std::string& s : t) n += s.rfind(prefix, 0) == 0;
  return n;
}

void expect_conformance(const World& w) {
  ASSERT_FALSE(w.traces.empty());
  for (const auto& [j, trace] : w.traces) {
    const Trace sim = actions(trace), real = actions(replay(w, j));
    EXPECT_GT(count(sim, "> start"), 0u) << "server " << j << " started no batch: the world tests nothing";
    EXPECT_EQ(real, sim) << "server " << j;
  }
}

const std::string kLink = "{bandwidth_mbps: 100, latency_ms: 1}";

}  // namespace

TEST(ServerConformance, BatchingWithAWindowAndOpenLoopArrivals) {
  SimSetup s;
  write_standard_luts(s);
  const World w = simulate(s, scenario(device("a", "offload", "{arrival: poisson, rate_per_s: 40}", kLink) +
                                           device("b", "pp(2)", "{arrival: poisson, rate_per_s: 20}", kLink) +
                                           device("c", "offload", "{arrival: closed_loop, in_flight: 3}", kLink),
                                       "{window_ms: 20, max_size: 4}", 2));
  expect_conformance(w);
}

TEST(ServerConformance, LateRequestsAreDroppedAlikeAndPrioritiesApply) {
  SimSetup s;
  write_standard_luts(s);
  const World w =
      simulate(s, scenario(device("a", "offload", "{arrival: poisson, rate_per_s: 60, deadline_ms: 30, drop_late: true}", kLink) +
                               device("b", "offload", "{arrival: poisson, rate_per_s: 120, deadline_ms: 40, drop_late: true, priority: 2}", kLink),
                           "{window_ms: 0, max_size: 1}", 2));
  EXPECT_GT(count(actions(w.traces.at(0)), "> drop"), 0u) << "no request dropped: the world does not test deadlines";
  expect_conformance(w);
}

TEST(ServerConformance, AnIdleHelperTakesForwardedBatches) {
  SimSetup s;
  write_standard_luts(s);
  s.write_lut("helper", 0.0005);
  const std::string wl = "{arrival: closed_loop, in_flight: 2}";
  const World w =
      simulate(s, scenario(device("a", "offload", wl, kLink) + device("b", "offload", wl, kLink) + device("c", "offload", wl, kLink) +
                               "  - {id: h, type: helper, model: dgcnn, dataset: modelnet40, link: " + kLink + ", workload: {arrival: none}}\n",
                           "{window_ms: 0, max_size: 1}", 1, 0, 1, "scheduler: {name: static, helpers: true}\n"));
  EXPECT_GT(count(actions(w.traces.at(0)), "> forward"), 0u) << "nothing forwarded: the world does not test helpers";
  expect_conformance(w);
}

TEST(ServerConformance, ACloudTierBatchesTheCloudsParts) {
  SimSetup s;
  s.write_lut("testdev", 0.010);
  s.write_lut("testsrv", 0.004);  // stages of 4 ms: where the edge's part ends shows in its time alone
  std::string y = scenario("  - {id: a, server: srv, type: testdev, model: dgcnn, dataset: modelnet40, link: " + kLink +
                               ", strategy: \"pp(2,8)\", workload: {arrival: poisson, rate_per_s: 40, deadline_ms: 160, drop_late: true}}\n" +
                               "  - {id: b, server: srv, type: testdev, model: dgcnn, dataset: modelnet40, link: " + kLink +
                               ", strategy: \"pp(3)\", workload: {arrival: poisson, rate_per_s: 20}}\n",
                           "{window_ms: 5, max_size: 4}", 1);
  const std::string edge = "  - {id: srv, type: testsrv,";
  y.replace(y.find(edge), edge.size(),
            "  - {id: cloud, type: testsrv, batch: {window_ms: 3, max_size: 4}, link: {bandwidth_mbps: 8, latency_ms: 20}}\n"
            "  - {id: srv, type: testsrv, cloud: cloud,");
  const World w = simulate(s, y);
  EXPECT_EQ(w.traces.size(), 2u) << "the cloud's loop saw no upload";
  // Late requests dropped at the edge and at the cloud: what each part takes alone (its end) matters.
  for (const auto& [j, trace] : w.traces) EXPECT_GT(count(actions(trace), "> drop"), 0u) << "server " << j;
  expect_conformance(w);
}

// The mutation check: the real side takes sealed batches oldest first whatever their priority. The
// comparison must fail on the world where priorities reorder the queue.
TEST(ServerConformance, APlantedDriftIsCaught) {
  SimSetup s;
  write_standard_luts(s);
  const World w = simulate(s, scenario(device("a", "offload", "{arrival: poisson, rate_per_s: 150}", kLink) +
                                           device("b", "offload", "{arrival: poisson, rate_per_s: 150, priority: 2}", kLink),
                                       "{window_ms: 0, max_size: 1}", 1));
  const Trace sim = actions(w.traces.at(0));
  EXPECT_EQ(actions(replay(w, 0)), sim);  // without the drift: the same actions
  Drift drift;
  drift.ignore_priorities = true;
  EXPECT_NE(actions(replay(w, 0, drift)), sim);  // with it: other batches first
}
