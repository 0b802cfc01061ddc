#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/random_stream.hpp"
#include "core/scenario_checks.hpp"
#include "io/lut_repository.hpp"
#include "io/model_spec_loader.hpp"
#include "io/scenario_loader.hpp"
#include "sched/scheduler_factory.hpp"
#include "tests/unit/test_support.hpp"

using namespace coinfer;
namespace fs = std::filesystem;

namespace {

const std::string kBase = R"(name: t
seed: 3
duration_s: 10
luts: [LUTDIR]
servers:
  - {id: edge0, type: gtx1060, workers: 2, batch: {window_ms: 10, max_size: 5}}
devices:
  - id: pi
    count: 2
    type: rpi4b
    model: dgcnn
    dataset: modelnet40
    link: {bandwidth_mbps: 40, latency_ms: 2}
    strategy: pp(2)
)";

std::string write(const std::string& text) {
  const std::string dir = coinfer::test::temp_dir("scn");
  std::string t = text;
  auto pos = t.find("LUTDIR");
  if (pos != std::string::npos) t.replace(pos, 6, std::string(COINFER_SOURCE_DIR) + "/traces/lut");
  std::ofstream(dir + "/s.yaml") << t;
  return dir + "/s.yaml";
}

std::string replaced(const std::string& from, const std::string& to) {
  std::string t = kBase;
  auto pos = t.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  t.replace(pos, from.size(), to);
  return t;
}

// Loads and checks the scenario; returns the InputError (fails the test if none).
InputError error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  std::string file = write(text);
  try {
    Scenario s = load_scenario(file, sets);
    static ModelCatalog models = ModelCatalog::load(std::string(COINFER_SOURCE_DIR) + "/models");
    LutSet luts = load_luts(s.luts);
    check_scenario_against(s, models, luts, scheduler_traits(s.scheduler.name));
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return InputError("none");
}

}  // namespace

TEST(ScenarioLoader, ValidScenarioExpandsCountsAndAppliesDefaults) {
  Scenario s = load_scenario(write(kBase));
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[0].id, "pi0");
  EXPECT_EQ(s.devices[1].id, "pi1");
  EXPECT_EQ(s.devices[1].server, "edge0");  // the only server
  EXPECT_EQ(s.devices[0].strategy, Strategy::pp(2));
  EXPECT_EQ(s.network_model, "cm02");
  EXPECT_DOUBLE_EQ(s.warmup_s, 0);
  EXPECT_DOUBLE_EQ(s.servers[0].batch.window_ms, 10);
  EXPECT_EQ(s.seed, 3u);
}

TEST(ScenarioLoader, SetOverridesAnyKey) {
  Scenario s = load_scenario(write(kBase), {"duration_s=20", "devices.0.link.bandwidth_mbps=5", "servers.0.batch.max_size=3"});
  EXPECT_DOUBLE_EQ(s.duration_s, 20);
  EXPECT_DOUBLE_EQ(s.devices[0].link.bandwidth_mbps, 5);
  EXPECT_EQ(s.servers[0].batch.max_size, 3);
  EXPECT_THROW(load_scenario(write(kBase), {"devices.7.type=x"}), InputError);
  EXPECT_THROW(load_scenario(write(kBase), {"novalue"}), InputError);
  InputError e = error_of(kBase, {"duraton_s=4"});
  EXPECT_NE(std::string(e.what()).find("did you mean 'duration_s'"), std::string::npos) << e.what();
}

TEST(ScenarioLoader, SetCreatesMissingMaps) {
  // kBase has no scheduler key: scheduler.name=greedy creates the mapping (coinfer validate sets the
  // scheduler this way, and must not fail with "'name' is inside a value that is not a mapping").
  Scenario s = load_scenario(write(kBase), {"scheduler.name=greedy", "scheduler.period_s=2"});
  EXPECT_EQ(s.scheduler.name, "greedy");
  EXPECT_DOUBLE_EQ(s.scheduler.period_s, 2);
  // Inside a value that is a text, not a mapping: still refused.
  InputError e = error_of(kBase, {"duration_s.x=1"});
  EXPECT_NE(std::string(e.what()).find("not a mapping"), std::string::npos) << e.what();
}

TEST(ScenarioLoader, BatchCandidatesAreListsWithinTheServersSizes) {
  // kBase's edge0 batches at most 5: sizes up to 5 may be chosen, 8 is refused naming edge0 and the
  // key; a single number is a list of one; windows are numbers >= 0, each listed once.
  Scenario s = load_scenario(write(kBase), {"scheduler.name=greedy", "scheduler.batch_windows_ms=[0, 5, 20]", "scheduler.batch_sizes=4"});
  EXPECT_EQ(s.scheduler.batch_windows_ms, (std::vector<double>{0, 5, 20}));
  EXPECT_EQ(s.scheduler.batch_sizes, (std::vector<int>{4}));
  EXPECT_TRUE(s.scheduler.params.empty());  // not scheduler-specific parameters
  const std::string big = error_of(kBase, {"scheduler.batch_sizes=[2, 8]"}).what();
  EXPECT_NE(big.find("--set scheduler.batch_sizes=[2, 8]"), std::string::npos) << big;
  EXPECT_NE(big.find("edge0's batch.max_size 5"), std::string::npos) << big;
  const std::string negative = error_of(kBase, {"scheduler.batch_windows_ms=[-1]"}).what();
  EXPECT_NE(negative.find("scheduler.batch_windows_ms"), std::string::npos) << negative;
  const std::string twice = error_of(kBase, {"scheduler.batch_windows_ms=[5, 5]"}).what();
  EXPECT_NE(twice.find("listed twice"), std::string::npos) << twice;
  const std::string fraction = error_of(kBase, {"scheduler.batch_sizes=[2.5]"}).what();
  EXPECT_NE(fraction.find("not an integer"), std::string::npos) << fraction;
  const std::string map = error_of(kBase, {"scheduler.batch_sizes={a: 1}"}).what();
  EXPECT_NE(map.find("expected a list of numbers"), std::string::npos) << map;
}

TEST(ScenarioLoader, SparoasDynamicBatchingIsAServerBatchPolicy) {
  Scenario s = load_scenario(write(kBase), {"servers.0.batch={window_ms: 10, max_size: 5, policy: sparoa, real_time_ms: 40, memory_gb: 2}"});
  ASSERT_TRUE(s.servers[0].dynamic_batching.has_value());
  EXPECT_DOUBLE_EQ(s.servers[0].dynamic_batching->real_time_s, 0.040);
  EXPECT_DOUBLE_EQ(s.servers[0].dynamic_batching->memory_bytes, 2e9);
  EXPECT_TRUE(std::isnan(s.servers[0].dynamic_batching->sparsity_threshold));  // off unless given
  EXPECT_FALSE(load_scenario(write(kBase)).servers[0].dynamic_batching.has_value());
  const std::string unknown = error_of(kBase, {"servers.0.batch.policy=adaptive"}).what();
  EXPECT_NE(unknown.find("'adaptive' is not a batching policy (fixed, sparoa)"), std::string::npos) << unknown;
  const std::string without = error_of(kBase, {"servers.0.batch.real_time_ms=40"}).what();
  EXPECT_NE(without.find("servers[0].batch.real_time_ms"), std::string::npos) << without;
  EXPECT_NE(without.find("only with policy: sparoa"), std::string::npos) << without;
  const std::string fraction = error_of(kBase, {"servers.0.batch={policy: sparoa, sparsity_threshold: 2}"}).what();
  EXPECT_NE(fraction.find("0..1"), std::string::npos) << fraction;
}

TEST(ScenarioLoader, LoadEventsAreSharesOfAProcessorTheDeviceHas) {
  Scenario s = load_scenario(write(kBase), {"events=[{at_s: 2, device: pi0, load: 0.5}]"});
  ASSERT_EQ(s.events.size(), 1u);
  ASSERT_TRUE(s.events[0].is<event::Load>());
  EXPECT_DOUBLE_EQ(s.events[0].as<event::Load>()->share, 0.5);
  const std::string full = error_of(kBase, {"events=[{at_s: 2, device: pi0, load: 1}]"}).what();
  EXPECT_NE(full.find("events[0].load"), std::string::npos) << full;
  EXPECT_NE(full.find("<= 0.99"), std::string::npos) << full;
  const std::string proc = error_of(kBase, {"events=[{at_s: 2, device: pi0, load: 0.2, processor: npu}]"}).what();
  EXPECT_NE(proc.find("device pi0 has no processor 'npu'"), std::string::npos) << proc;
  const std::string two = error_of(kBase, {"events=[{at_s: 2, device: pi0, load: 0.2, bandwidth_mbps: 5}]"}).what();
  EXPECT_NE(two.find("exactly one of bandwidth_mbps, leave: true, join: true, load"), std::string::npos) << two;
  const std::string stray = error_of(kBase, {"events=[{at_s: 2, device: pi0, bandwidth_mbps: 5, processor: cpu}]"}).what();
  EXPECT_NE(stray.find("processor of a load event only"), std::string::npos) << stray;
}

TEST(ScenarioLoader, SchedulerWithoutNameIsStatic) {
  // scenarios/README.md: scheduler.name defaults to static, also when the section names only its
  // triggers (such a section was refused for its missing name).
  Scenario s = load_scenario(write(kBase), {"scheduler.period_s=2"});
  EXPECT_EQ(s.scheduler.name, "static");
  EXPECT_DOUBLE_EQ(s.scheduler.period_s, 2);
}

TEST(ScenarioLoader, IntegersBeyondRangeAreNamedAsSuch) {
  // 2^64 - 1 is an integer, only beyond int64's range: the error says which bound, not "not an integer";
  // a word is still "not an integer".
  const std::string big = error_of(kBase, {"seed=18446744073709551615"}).what();
  EXPECT_NE(big.find("must be <= 9223372036854775807"), std::string::npos) << big;
  const std::string low = error_of(kBase, {"seed=-99999999999999999999"}).what();
  EXPECT_NE(low.find("must be >= 0"), std::string::npos) << low;
  const std::string word = error_of(kBase, {"seed=seven"}).what();
  EXPECT_NE(word.find("is not an integer"), std::string::npos) << word;
}

TEST(ScenarioLoader, SetValueErrorsNameTheSet) {
  // A bad value given by --set is located at that --set, not at line 1 of the file;
  // a bad value inside a mapping given by --set too; a bad value in the file keeps its line.
  const std::string scalar = error_of(kBase, {"seed=seven"}).what();
  EXPECT_EQ(scalar.rfind("--set seed=seven: ", 0), 0u) << scalar;
  const std::string inside = error_of(kBase, {"scheduler={name: greedy, period_s: -1}"}).what();
  EXPECT_EQ(inside.rfind("--set scheduler={name: greedy, period_s: -1}: ", 0), 0u) << inside;
  const std::string later = error_of(kBase, {"seed=seven", "seed=eight"}).what();
  EXPECT_NE(later.find("--set seed=eight"), std::string::npos) << later;
  std::string text = kBase;
  text.replace(text.find("seed: "), 6, "seed: nine\n# ");
  const std::string in_file = error_of(text).what();
  EXPECT_EQ(in_file.find("--set"), std::string::npos) << in_file;
}

// yaml-cpp keeps both entries of a repeated key and node[key] answers the first, so the second value
// was ignored without a word. A mapping now names each key once, in the file (the second one's line,
// the first one's in the message, the key's path) and in a --set value; a key must be text.
TEST(ScenarioLoader, RepeatedKeysAreRefusedWhereTheyRepeat) {
  // kBase: line 3 is "duration_s: 10"; the repeat is inserted as line 4.
  InputError top = error_of(replaced("duration_s: 10\n", "duration_s: 10\nduration_s: 20\n"));
  EXPECT_EQ(top.where().line, 4) << top.what();
  EXPECT_EQ(top.key(), "duration_s") << top.what();
  EXPECT_NE(std::string(top.what()).find("first at line 3"), std::string::npos) << top.what();
  // Inside a flow mapping of the first device (kBase line 13): bandwidth_mbps twice.
  InputError inner = error_of(replaced("{bandwidth_mbps: 40, latency_ms: 2}", "{bandwidth_mbps: 40, latency_ms: 2, bandwidth_mbps: 5}"));
  EXPECT_EQ(inner.where().line, 13) << inner.what();
  EXPECT_EQ(inner.key(), "devices[0].link.bandwidth_mbps") << inner.what();
  const std::string set = error_of(kBase, {"devices.0.link={bandwidth_mbps: 5, bandwidth_mbps: 6}"}).what();
  EXPECT_EQ(set.rfind("--set devices.0.link={bandwidth_mbps: 5, bandwidth_mbps: 6}: ", 0), 0u) << set;
  EXPECT_NE(set.find("devices.0.link.bandwidth_mbps"), std::string::npos) << set;
  const std::string complex_key = error_of(replaced("seed: 3\n", "seed: 3\n? [a, b]\n: 1\n")).what();
  EXPECT_NE(complex_key.find("a key must be a plain text value"), std::string::npos) << complex_key;
}

// Aliases share their node: a 40-level doubling (each list holds the previous one twice) has 2^40
// paths through it. The key walk visits each container once, so the load ends (here on the first
// unknown key) instead of walking 2^40 nodes.
TEST(ScenarioLoader, AliasesDoNotMultiplyTheKeyWalk) {
  std::string text = kBase + "x0: &x0 [1, 1]\n";
  for (int i = 1; i <= 40; ++i)
    text += "x" + std::to_string(i) + ": &x" + std::to_string(i) + " [*x" + std::to_string(i - 1) + ", *x" + std::to_string(i - 1) + "]\n";
  const std::string e = error_of(text).what();
  EXPECT_NE(e.find("x0"), std::string::npos) << e;
}

TEST(ScenarioLoader, MalformedYamlNamesTheLine) {
  InputError e = error_of(replaced("seed: 3", "seed: [3"));
  EXPECT_GT(e.where().line, 0) << e.what();
  EXPECT_NE(std::string(e.what()).find("YAML syntax error"), std::string::npos);
}

TEST(ScenarioLoader, UnknownKeySuggestsTheNearestOne) {
  InputError e = error_of(replaced("duration_s: 10", "duration: 10"));
  EXPECT_EQ(e.where().line, 3);
  EXPECT_EQ(e.key(), "duration");
  EXPECT_NE(std::string(e.what()).find("did you mean 'duration_s'"), std::string::npos) << e.what();
  InputError e2 = error_of(replaced("latency_ms: 2", "latncy_ms: 2"));
  EXPECT_EQ(e2.key(), "devices[0].link.latncy_ms");
  EXPECT_EQ(e2.where().line, 13);
}

TEST(ScenarioLoader, NonPositiveBandwidthIsRejected) {
  for (const char* v : {"-5", "0"}) {
    InputError e = error_of(replaced("bandwidth_mbps: 40", std::string("bandwidth_mbps: ") + v));
    EXPECT_EQ(e.key(), "devices[0].link.bandwidth_mbps") << e.what();
    EXPECT_EQ(e.where().line, 13);
    EXPECT_NE(std::string(e.what()).find("must be > 0"), std::string::npos);
  }
  InputError e = error_of(replaced("bandwidth_mbps: 40", "bandwidth_mbps: fast"));
  EXPECT_NE(std::string(e.what()).find("not a number"), std::string::npos);
}

TEST(ScenarioLoader, SplitOutsideTheModelIsRejected) {
  InputError e = error_of(replaced("strategy: pp(2)", "strategy: pp(12)"));
  EXPECT_NE(std::string(e.what()).find("outside 0..9"), std::string::npos) << e.what();
  EXPECT_EQ(e.where().line, 8);  // the device entry
  InputError e2 = error_of(replaced("strategy: pp(2)", "strategy: dp"));
  EXPECT_NE(std::string(e2.what()).find("data_parallel"), std::string::npos) << e2.what();
}

TEST(ScenarioLoader, UnknownServerTypeModelOrDatasetIsRejected) {
  InputError e = error_of(replaced("    strategy: pp(2)", "    strategy: pp(2)\n    server: edge9"));
  EXPECT_EQ(e.key(), "devices[0].server");
  EXPECT_NE(std::string(e.what()).find("edge0"), std::string::npos);
  InputError t = error_of(replaced("type: rpi4b", "type: rpi5"));
  EXPECT_NE(std::string(t.what()).find("no LUT for device type 'rpi5'"), std::string::npos) << t.what();
  InputError m = error_of(replaced("model: dgcnn", "model: pointnet"));
  EXPECT_NE(std::string(m.what()).find("unknown model 'pointnet'"), std::string::npos) << m.what();
  InputError d = error_of(replaced("dataset: modelnet40", "dataset: nosuchset"));
  EXPECT_NE(std::string(d.what()).find("unknown dataset 'nosuchset'"), std::string::npos) << d.what();
}

TEST(ScenarioLoader, LutWithoutNeededEntriesIsRejected) {
  // The shipped LUTs cover batch sizes 1..16: a max batch of 32 needs entries that do not exist.
  InputError e = error_of(replaced("max_size: 5", "max_size: 32"));
  EXPECT_NE(std::string(e.what()).find("batch size 17"), std::string::npos) << e.what();
  // The server's table is short, not the device's: the server's batch size is blamed, at the server's
  // line (line 6 of kBase), not the device's type.
  EXPECT_EQ(e.key(), "servers (id edge0).batch.max_size") << e.what();
  EXPECT_EQ(e.where().line, 6);
}

TEST(ScenarioLoader, ServerTypeWithoutLutBlamesTheServer) {
  // A server type with no LUT names the server's type at the server's line, and the
  // device it was looked up for.
  InputError e = error_of(replaced("type: gtx1060", "type: rtx4090"));
  EXPECT_EQ(e.key(), "servers (id edge0).type") << e.what();
  EXPECT_EQ(e.where().line, 6);
  EXPECT_NE(std::string(e.what()).find("no LUT for device type 'rtx4090'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("for device pi"), std::string::npos) << e.what();
}

TEST(ScenarioLoader, EventsAndWorkloadsAreChecked) {
  InputError e = error_of(kBase + "events:\n  - {at_s: 3, device: pi7, leave: true}\n");
  EXPECT_EQ(e.key(), "events[0].device");
  InputError both = error_of(kBase + "events:\n  - {at_s: 3, device: pi1, leave: true, bandwidth_mbps: 3}\n");
  EXPECT_NE(std::string(both.what()).find("exactly one"), std::string::npos);
  InputError w = error_of(replaced("    strategy: pp(2)", "    strategy: pp(2)\n    workload: {arrival: posson, rate_per_s: 3}"));
  EXPECT_NE(std::string(w.what()).find("did you mean 'poisson'"), std::string::npos) << w.what();
  InputError r = error_of(replaced("    strategy: pp(2)", "    strategy: pp(2)\n    workload: {arrival: poisson}"));
  EXPECT_EQ(r.key(), "devices[0].workload.rate_per_s");
  Scenario ok = load_scenario(write(kBase + "events:\n  - {at_s: 3, device: pi1, leave: true}\n  - {at_s: 1, device: pi0, bandwidth_mbps: 2}\n"));
  EXPECT_DOUBLE_EQ(ok.devices[1].leave_at_s, 3);
  EXPECT_DOUBLE_EQ(ok.events[0].at_s, 1);  // sorted by time
}

TEST(ScenarioLoader, BandwidthTraceErrorsNameFileAndLine) {
  char tmpl[] = "/tmp/coinfer-trace-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/t.csv") << "# source: test\ntime_s,bandwidth_mbps\n0,40\n5,-1\n";
  try {
    load_bandwidth_trace(dir + "/t.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 4);
    EXPECT_EQ(e.key(), "bandwidth_mbps");
  }
  std::ofstream(dir + "/u.csv") << "0,40\n5,20\n2,10\n";
  EXPECT_THROW(load_bandwidth_trace(dir + "/u.csv"), InputError);
  std::ofstream(dir + "/v.csv") << "0,40\n5,20\n";
  auto pts = load_bandwidth_trace(dir + "/v.csv");
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_DOUBLE_EQ(pts[1].mbps, 20);
  fs::remove_all(dir);
}

// Scenario::device_index / server_index answer large lists from a per-thread index; whatever happens to
// the lists between lookups (ids renamed, entries added and erased, the vector reallocated or replaced by
// another of the same size), they agree with a linear search. A random search over such edits (ids stay
// unique, as in every loaded scenario; with a duplicate, the answer is one of the positions holding it).
TEST(ScenarioIndex, LookupsAgreeWithALinearSearchWhateverTheListsBecome) {
  std::mt19937_64 rng(7);
  auto linear = [](const std::vector<DeviceSpec>& v, const std::string& id) {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].id == id) return static_cast<int>(i);
    return -1;
  };
  std::vector<Scenario> scenarios(3);
  int fresh = 0;  // ids d0, d1, ... never reused
  for (auto& s : scenarios)
    for (int i = 0; i < 40; ++i) s.devices.emplace_back().id = "d" + std::to_string(fresh++);
  long long checked = 0;
  for (int step = 0; step < 4000; ++step) {
    Scenario& s = scenarios[rng() % scenarios.size()];
    auto& v = s.devices;
    switch (rng() % 6) {
      case 0:
        v.emplace_back().id = "d" + std::to_string(fresh++);
        break;
      case 1:
        if (!v.empty()) v.erase(v.begin() + static_cast<long>(rng() % v.size()));
        break;
      case 2:
        if (!v.empty()) v[rng() % v.size()].id = "d" + std::to_string(fresh++);
        break;  // renamed in place
      case 3:
        std::swap(v, scenarios[rng() % scenarios.size()].devices);
        break;
      case 4:
        if (!v.empty()) std::swap(v[rng() % v.size()].id, v[rng() % v.size()].id);
        break;
      default:
        break;
    }
    for (int q = 0; q < 5; ++q) {
      const std::string id = "d" + std::to_string(rng() % (fresh + 10));
      ASSERT_EQ(s.device_index(id), linear(v, id)) << "step " << step << " id " << id << " size " << v.size();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20000);
  // A duplicate made after the index was built: the answer holds the id.
  Scenario s;
  for (int i = 0; i < 40; ++i) s.devices.emplace_back().id = "x" + std::to_string(i);
  const std::string id = s.devices[35].id;
  ASSERT_EQ(s.device_index(id), 35);
  s.devices[3].id = id;
  const int at = s.device_index(id);
  EXPECT_TRUE(at == 3 || at == 35) << at;
}

TEST(ScenarioLoader, PowerComesFromTheTypeProfileWithItsSourceAndRadiosByName) {
  // kBase states no power: the Pi 4B's and the GTX 1060's board_power of traces/devices.yaml, with
  // their sources; no radio (the flat rate, 0).
  Scenario s = load_scenario(write(kBase));
  ASSERT_FALSE(s.devices.empty());
  EXPECT_EQ(s.devices[0].power.idle_w, 2.7);
  EXPECT_EQ(s.devices[0].power.busy_w, 6.4);
  EXPECT_NE(s.devices[0].power.source.find("raspi-tv"), std::string::npos) << s.devices[0].power.source;
  EXPECT_FALSE(s.devices[0].power.radio.stated());
  EXPECT_EQ(s.servers[0].busy_w, 120);
  EXPECT_NE(s.servers[0].power_source.find("gtx1060"), std::string::npos) << s.servers[0].power_source;
  // A scenario's own figures win, and say so.
  Scenario own = load_scenario(write(kBase), {"devices.0.power={idle_w: 1, busy_w: 2}"});
  EXPECT_EQ(own.devices[0].power.busy_w, 2);
  EXPECT_EQ(own.devices[0].power.source, "scenario");
  // A radio by name: the file's wifi entry (Huang et al.'s beta = 132.86 mW) and its source.
  Scenario wifi = load_scenario(write(kBase), {"devices.0.power={radio: wifi}"});
  EXPECT_EQ(wifi.devices[0].power.radio.name, "wifi");
  EXPECT_EQ(wifi.devices[0].power.radio.base_w, 0.13286);
  EXPECT_EQ(wifi.devices[0].power.radio.tail_s, 0.2381);
  EXPECT_NE(wifi.devices[0].power.radio.source.find("huang12"), std::string::npos);
  EXPECT_EQ(wifi.devices[0].power.idle_w, 2.7);  // the board's power still from the profile
  // Inline.
  Scenario inline_radio = load_scenario(write(kBase), {"devices.0.power={radio: {base_w: 1, tail_w: 0.5, tail_s: 3}}"});
  EXPECT_EQ(inline_radio.devices[0].power.radio.tail_s, 3);
  EXPECT_EQ(inline_radio.devices[0].power.radio.name, "");
  // Errors name the key, the file and the nearest name.
  const std::string unknown = error_of(kBase, {"devices.0.power={radio: wify}"}).what();
  EXPECT_NE(unknown.find("devices[0].power.radio"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean 'wifi'"), std::string::npos) << unknown;
  const std::string both = error_of(kBase, {"devices.0.power={radio: wifi, radio_j_per_mb: 0.1}"}).what();
  EXPECT_NE(both.find("not both"), std::string::npos) << both;
  const std::string zero = error_of(kBase, {"devices.0.power={radio: {base_w: 0}}"}).what();
  EXPECT_NE(zero.find("every power is 0"), std::string::npos) << zero;
  const std::string bad_key = error_of(kBase, {"devices.0.power={radio: {base_w: 1, tail: 2}}"}).what();
  EXPECT_NE(bad_key.find("tail"), std::string::npos) << bad_key;
}

TEST(ScenarioLoader, ServerEventsNameAServerAndAlternate) {
  Scenario s = load_scenario(write(kBase), {"events=[{at_s: 5, server: edge0, recover: true}, {at_s: 2, server: edge0, fail: true}]"});
  ASSERT_EQ(s.events.size(), 2u);  // sorted by time
  EXPECT_TRUE(s.events[0].is<event::ServerFail>());
  EXPECT_EQ(s.events[0].server(), "edge0");
  EXPECT_EQ(s.events[0].device(), "");
  EXPECT_TRUE(s.events[1].is<event::ServerRecover>());
  const std::string unknown = error_of(kBase, {"events=[{at_s: 2, server: edge9, fail: true}]"}).what();
  EXPECT_NE(unknown.find("unknown server 'edge9'; did you mean 'edge0'?"), std::string::npos) << unknown;
  const std::string dev = error_of(kBase, {"events=[{at_s: 2, device: pi0, server: edge0, fail: true}]"}).what();
  EXPECT_NE(dev.find("names a server, not a device"), std::string::npos) << dev;
  const std::string both = error_of(kBase, {"events=[{at_s: 2, server: edge0, fail: true, recover: true}]"}).what();
  EXPECT_NE(both.find("exactly one of fail: true, recover: true"), std::string::npos) << both;
  const std::string no = error_of(kBase, {"events=[{at_s: 2, server: edge0, fail: false}]"}).what();
  EXPECT_NE(no.find("only 'fail: true' is meaningful"), std::string::npos) << no;
  const std::string orphan = error_of(kBase, {"events=[{at_s: 2, fail: true}]"}).what();
  EXPECT_NE(orphan.find("name the server"), std::string::npos) << orphan;
  const std::string up = error_of(kBase, {"events=[{at_s: 2, server: edge0, recover: true}]"}).what();
  EXPECT_NE(up.find("recovers at 2 s while it is already up"), std::string::npos) << up;
  const std::string twice = error_of(kBase, {"events=[{at_s: 2, server: edge0, fail: true}, {at_s: 3, server: edge0, fail: true}]"}).what();
  EXPECT_NE(twice.find("fails at 3 s while it is already down"), std::string::npos) << twice;
}

TEST(ScenarioLoader, AFailureModelDrawsUpAndDownTimesOfItsMeans) {
  // 100,000 s with mtbf 10 s and mttr 5 s: about 6,667 cycles. The mean up time (fail - previous
  // recover) is 10 s and the mean down time 5 s to within 3 % (the standard errors are 1.2 %); the
  // events alternate fail, recover, from a first fail after 0; the same seed gives the same events,
  // another seed others.
  const std::vector<std::string> sets = {"duration_s=100000", "drain_s=0", "servers.0.failures={mtbf_s: 10, mttr_s: 5}"};
  const Scenario s = load_scenario(write(kBase), sets);
  ASSERT_GT(s.events.size(), 10000u);
  double up = 0, down = 0, last = 0;
  int fails = 0, recovers = 0;
  for (size_t i = 0; i < s.events.size(); ++i) {
    const EventSpec& e = s.events[i];
    ASSERT_TRUE(i % 2 == 0 ? e.is<event::ServerFail>() : e.is<event::ServerRecover>()) << i;
    ASSERT_GT(e.at_s, last) << i;
    (i % 2 == 0 ? up : down) += e.at_s - last;
    (i % 2 == 0 ? fails : recovers) += 1;
    last = e.at_s;
  }
  EXPECT_NEAR(up / fails, 10, 0.3);
  EXPECT_NEAR(down / recovers, 5, 0.15);
  const Scenario again = load_scenario(write(kBase), sets);
  ASSERT_EQ(again.events.size(), s.events.size());
  EXPECT_DOUBLE_EQ(again.events[7].at_s, s.events[7].at_s);
  std::vector<std::string> other = sets;
  other.push_back("seed=4");
  EXPECT_NE(load_scenario(write(kBase), other).events[0].at_s, s.events[0].at_s);
  // With a model, no hand-written events for that server; a model that would exceed the event bound is refused.
  std::vector<std::string> with_events = sets;
  with_events.push_back("events=[{at_s: 2, server: edge0, fail: true}]");
  const std::string mixed = error_of(kBase, with_events).what();
  EXPECT_NE(mixed.find("has a failure model"), std::string::npos) << mixed;
  const std::string many = error_of(kBase, {"duration_s=100000", "servers.0.failures={mtbf_s: 0.1, mttr_s: 0.1}"}).what();
  EXPECT_NE(many.find("raise mtbf_s"), std::string::npos) << many;
}

// core/scenario_checks.hpp on a scenario built by hand (no loader): each rule refuses at the position
// of the entry at fault, and a scenario that keeps every rule passes.
TEST(ScenarioChecks, EachRuleNamesTheEntryAtFault) {
  Scenario s;
  ServerSpec sv;
  sv.id = "edge0";
  sv.batch.max_size = 4;
  sv.where = {"s.yaml", 3, 5};
  s.servers = {sv};
  DeviceSpec d;
  d.id = "pi0";
  d.server = "edge0";
  d.where = {"s.yaml", 7, 5};
  s.devices = {d};
  s.scheduler.batch_sizes = {2, 4};
  s.scheduler.batch_sizes_where = {"s.yaml", 12, 16};
  EXPECT_NO_THROW(check_scenario(s));
  auto refused_at = [&](const Scenario& bad, const std::string& where, const std::string& what) {
    try {
      check_scenario(bad);
      ADD_FAILURE() << "not refused: " << what;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  // A candidate batch size above the server's max_size: at the batch_sizes key.
  Scenario big = s;
  big.scheduler.batch_sizes = {2, 8};
  refused_at(big, "s.yaml:12:16", "size 8 is larger than server edge0's batch.max_size 4");
  // A device that leaves at or before it joins: at the device.
  Scenario early = s;
  early.devices[0].join_at_s = 5;
  early.devices[0].leave_at_s = 5;
  refused_at(early, "s.yaml:7:5", "device 'pi0' leaves at 5 s, not after it joins at 5 s");
  // A hand-written fail for a server with a failure model: at the event.
  Scenario modelled = s;
  modelled.servers[0].failures = ServerSpec::FailureModel{100, 10};
  EventSpec fail;
  fail.at_s = 1;
  fail.what = event::ServerFail{"edge0"};
  fail.where = {"s.yaml", 20, 5};
  modelled.events = {fail};
  refused_at(modelled, "s.yaml:20:5", "has a failure model");
  // Two fails in a row: at the second.
  Scenario twice = s;
  EventSpec again = fail;
  again.at_s = 2;
  again.where = {"s.yaml", 21, 5};
  twice.events = {fail, again};
  refused_at(twice, "s.yaml:21:5", "fails at 2 s while it is already down");
}

TEST(ScenarioLoader, AMovingDevicesLinkCapCanBeSetAndCapsItsRate) {
  // A moving device's link schedule comes from its positions (core/mobility.hpp) and bandwidth_mbps is
  // its radio's cap: a --set of it takes effect (it is not refused as overridden by "its link
  // trace", the one its movement gives). 10 m from the access point the radio gives ~133 Mbit/s, so the
  // cap is the rate: 40 as written, 5 as set.
  const std::string text = replaced("    strategy: pp(2)\n", "    strategy: pp(2)\n    movement: {x_m: 10, y_m: 0}\n") +
                           "mobility: {access_points: [{id: a, x_m: 0, y_m: 0, range_m: 150}]}\n";
  const Scenario s = load_scenario(write(text), {"devices.0.link.bandwidth_mbps=5"});
  ASSERT_EQ(s.devices.size(), 2u);
  ASSERT_FALSE(s.devices[0].link.trace.empty());
  EXPECT_DOUBLE_EQ(s.devices[0].link.trace.front().mbps, 5);
}

// Device populations (io/device_population.hpp): keys drawn per device from the scenario's seed.
// The contract the test states: device c of entry e reads six uniforms from RandomStream(seed,
// device_population, e * 2^32 + c), one per drawable key in the order type, join_at_s,
// link.bandwidth_mbps, link.latency_ms, workload.rate_per_s, workload.in_flight; a uniform [lo, hi]
// gives lo + u (hi - lo).
static std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

TEST(DevicePopulation, EachDeviceDrawsItsKeysFromItsOwnStream) {
  const std::string text = replaced("count: 2", "count: 400") + "    join_at_s: {uniform: [0, 8]}\n";
  const Scenario s = load_scenario(write(text));
  ASSERT_EQ(s.devices.size(), 400u);
  for (int c : {0, 1, 399}) {
    RandomStream rng(3, StreamPurpose::device_population, static_cast<std::uint64_t>(c));  // entry 0, seed 3
    (void)rng.next_unit();                                                                 // type's uniform
    EXPECT_DOUBLE_EQ(s.devices[static_cast<size_t>(c)].join_at_s, 8 * rng.next_unit()) << c;
    EXPECT_EQ(s.devices[static_cast<size_t>(c)].id, "pi" + std::to_string(c));
    EXPECT_EQ(s.devices[static_cast<size_t>(c)].entry, 0);
  }
  // Another key drawn too: join_at_s's draws do not move; the link's lie in its range.
  const Scenario both = load_scenario(write(with(text, "bandwidth_mbps: 40", "bandwidth_mbps: {uniform: [10, 20]}")));
  double lo = 1e9, hi = 0;
  for (size_t c = 0; c < 400; ++c) {
    EXPECT_EQ(both.devices[c].join_at_s, s.devices[c].join_at_s);
    lo = std::min(lo, both.devices[c].link.bandwidth_mbps), hi = std::max(hi, both.devices[c].link.bandwidth_mbps);
  }
  EXPECT_GE(lo, 10);
  EXPECT_LE(hi, 20);
  EXPECT_LT(lo, 11);  // 400 draws cover the range (each end missed with probability 0.9^400)
  EXPECT_GT(hi, 19);
  // Another seed, another population.
  const Scenario other = load_scenario(write(text), {"seed=4"});
  EXPECT_NE(other.devices[0].join_at_s, s.devices[0].join_at_s);
}

// Choices: weights 3:1 over 4,000 devices give 3,000 +- 3 standard deviations (sqrt(4000 * 0.75 * 0.25)
// = 27.4) of the first; a weight of 0 is never drawn; whole-number ranges give every whole number.
TEST(DevicePopulation, ChoicesFollowTheirWeightsAndRangesOfWholeNumbersGiveWholeNumbers) {
  const std::string base = replaced("count: 2", "count: 4000");
  const Scenario s = load_scenario(write(with(base, "type: rpi4b", "type: {choice: [rpi4b, rpi3b], weights: [3, 1]}")));
  int first = 0;
  for (const DeviceSpec& d : s.devices) first += d.type == "rpi4b";
  EXPECT_GT(first, 3000 - 83);
  EXPECT_LT(first, 3000 + 83);
  const Scenario never = load_scenario(write(base), {"devices.0.type={choice: [rpi4b, rpi3b], weights: [0, 2]}"});
  for (const DeviceSpec& d : never.devices) ASSERT_EQ(d.type, "rpi3b");
  const Scenario w = load_scenario(write(base), {"devices.0.workload={arrival: closed_loop, in_flight: {uniform: [1, 3]}}"});
  std::set<int> seen;
  for (const DeviceSpec& d : w.devices) seen.insert(d.workload.in_flight);
  EXPECT_EQ(seen, (std::set<int>{1, 2, 3}));
}

// Every value a distribution can give is checked where it is written: a range's end out of bounds is
// reported at that end's line and column; a bad distribution names its key.
TEST(DevicePopulation, BadDistributionsAreRefusedAtTheirPlace) {
  const std::string text = with(replaced("count: 2", "count: 5"), "bandwidth_mbps: 40", "bandwidth_mbps: {uniform: [10, 4e12]}");
  const InputError e = error_of(text);
  EXPECT_EQ(e.where().line, 13);  // the link line of kBase
  EXPECT_EQ(e.key(), "devices[0].link.bandwidth_mbps");
  EXPECT_NE(std::string(e.what()).find("1 Tbit/s"), std::string::npos) << e.what();
  EXPECT_EQ(error_of(kBase, {"devices.0.join_at_s={uniform: [3, 1]}"}).key(), "devices[0].join_at_s.uniform");
  EXPECT_EQ(error_of(kBase, {"devices.0.type={choice: [rpi4b], weights: [1, 2]}"}).key(), "devices[0].type.weights");
  EXPECT_EQ(error_of(kBase, {"devices.0.type={uniform: [1, 2]}"}).key(), "devices[0].type.uniform");
  EXPECT_EQ(error_of(kBase, {"devices.0.link.latency_ms={choice: [1, -2]}"}).key(), "devices[0].link.latency_ms");
}

// The access point carries every device's traffic, so its bound is every device link at its 1 Tbit/s
// bound, up and down, for a million devices (2e12 Mbit/s): a population's never-binding access point can
// be written (100,000 devices at 40 Mbit/s up and down: 8e6 Mbit/s), while one link stays at 1 Tbit/s.
TEST(ScenarioBounds, TheAccessPointMayCarryEveryDeviceLink) {
  EXPECT_DOUBLE_EQ(load_scenario(write(kBase), {"access_point.bandwidth_mbps=8e6"}).access_point.bandwidth_mbps, 8e6);
  EXPECT_DOUBLE_EQ(load_scenario(write(kBase), {"access_point.bandwidth_mbps=2e12"}).access_point.bandwidth_mbps, 2e12);
  const InputError ap = error_of(kBase, {"access_point.bandwidth_mbps=2.1e12"});
  EXPECT_EQ(ap.key(), "access_point.bandwidth_mbps");
  EXPECT_NE(std::string(ap.what()).find("a million devices"), std::string::npos) << ap.what();
  const InputError link = error_of(kBase, {"devices.0.link.bandwidth_mbps=8e6"});
  EXPECT_EQ(link.key(), "devices[0].link.bandwidth_mbps");
  EXPECT_NE(std::string(link.what()).find("1 Tbit/s"), std::string::npos) << link.what();
}
