// The external scheduler (sched/external_scheduler.hpp): plumbing/child_process split_command_line
// (scheduler.command, --power-command): words as a shell would split them, without a shell; and the
// protocol against small Python schedulers written here: the hello, a decision, and each way a
// scheduler can misbehave (a wrong answer, a wrong id, silence, exiting).
#include <gtest/gtest.h>

#include <fstream>

#include "core/input_error.hpp"
#include "core/system_state.hpp"
#include "plumbing/child_process.hpp"
#include "sched/external_scheduler.hpp"

namespace coinfer {
namespace {

std::vector<std::string> words(const std::string& c) { return split_command_line(c, SourceLocation{"s.yaml", 3, 1}, "scheduler.command"); }

TEST(ExternalScheduler, CommandLineWords) {
  using V = std::vector<std::string>;
  EXPECT_EQ(words("python3 my.py --x 1"), (V{"python3", "my.py", "--x", "1"}));
  EXPECT_EQ(words("  python3\t my.py  "), (V{"python3", "my.py"}));
  // Quotes group; they may start inside a word; nothing inside single quotes is special.
  EXPECT_EQ(words("python3 'my scheduler.py' --name=\"a b\""), (V{"python3", "my scheduler.py", "--name=a b"}));
  EXPECT_EQ(words("echo '$HOME \\n' \"it's\""), (V{"echo", "$HOME \\n", "it's"}));
  // Inside double quotes a backslash escapes " and itself only; outside, any character.
  EXPECT_EQ(words("a \"x\\\"y\\\\z\\q\" b\\ c"), (V{"a", "x\"y\\z\\q", "b c"}));
  EXPECT_EQ(words("''"), (V{""}));                             // an empty argument, as a shell gives
  EXPECT_EQ(words("a|b > c; d"), (V{"a|b", ">", "c;", "d"}));  // no shell: these are words
}

TEST(ExternalScheduler, BadCommandLines) {
  for (const std::string c : {"", "   ", "python3 'x", "python3 \"x", "a \"b\\\""}) {
    try {
      words(c);
      FAIL() << c;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "scheduler.command") << c;
      EXPECT_NE(std::string(e.what()).find("s.yaml:3:1"), std::string::npos) << e.what();
    }
  }
}

// A scenario with one device whose external scheduler runs `script` (Python, in a temporary file).
Scenario external(const std::string& script, double timeout_s = 5) {
  const std::string path = testing::TempDir() + "/coinfer_ext_" + std::to_string(std::hash<std::string>{}(script)) + ".py";
  std::ofstream(path) << "import json, sys\n" << script;
  Scenario s;
  s.name = "ext";
  ServerSpec sv;
  sv.id = "s0";
  s.servers = {sv};
  DeviceSpec d;
  d.id = "pi0";
  d.model = "dgcnn";
  d.dataset = "modelnet40";
  d.server = "s0";
  s.devices = {d};
  s.scheduler.name = "external";
  s.scheduler.params["command"] = "python3 " + path;
  s.scheduler.params["timeout_s"] = std::to_string(timeout_s);
  return s;
}

constexpr const char* kHello = R"py(hello = json.loads(sys.stdin.readline())
assert hello["type"] == "hello" and hello["protocol"] == 1 and hello["devices"][0]["id"] == "pi0" and hello["devices"][0]["stages"] == 9
print(json.dumps({"type": "ready", "name": "t"}), flush=True)
)py";

SystemState state_of(const Scenario& s) { return scenario_state(s, 0); }

std::string failure_of(const Scenario& s) {
  auto sched = make_external_scheduler(s, {{"dgcnn/modelnet40", 9}});
  try {
    sched->decide(state_of(s));
  } catch (const SchedulerFailure& e) {
    return e.what();
  }
  return "";
}

TEST(ExternalScheduler, AHelloAndADecisionMakeTheSchemeTheProcessAnswers) {
  // It answers pp(4) for the device it was told about, quoting the decision's id and reading the state.
  const Scenario s = external(std::string(kHello) + R"py(for line in sys.stdin:
    m = json.loads(line)
    assert m["type"] == "decide" and m["state"]["devices"][0]["id"] == "pi0"
    print(json.dumps({"type": "scheme", "id": m["id"], "scheme": {"strategies": {"pi0": "pp(4)"}, "helpers": []}}), flush=True)
)py");
  auto sched = make_external_scheduler(s, {{"dgcnn/modelnet40", 9}});
  for (int k = 0; k < 3; ++k) {
    const Scheme x = sched->decide(state_of(s));
    ASSERT_EQ(x.strategies.count("pi0"), 1u);
    EXPECT_EQ(x.strategies.at("pi0"), Strategy::pp(4)) << k;
  }
}

TEST(ExternalScheduler, EachMisbehaviourIsASchedulerFailureThatSaysWhat) {
  // A wrong id, not JSON, silence past timeout_s, exiting: each a SchedulerFailure naming it; a
  // process that never says ready is refused before the run (InputError on scheduler.command).
  const std::string answer = "for line in sys.stdin:\n    m = json.loads(line)\n    ";
  EXPECT_NE(failure_of(external(std::string(kHello) + answer + R"py(print(json.dumps({"type": "scheme", "id": m["id"] + 1, "scheme": {}}), flush=True)
)py"))
                .find("to decision 1"),
            std::string::npos);
  EXPECT_NE(failure_of(external(std::string(kHello) + answer + "print('hello there', flush=True)\n")).find("not JSON: 'hello there'"),
            std::string::npos);
  EXPECT_NE(failure_of(external(std::string(kHello) + answer + "import time; time.sleep(30)\n", 0.5)).find("0.5"), std::string::npos);
  const std::string exited = failure_of(external(std::string(kHello) + answer + "sys.exit(3)\n"));
  EXPECT_NE(exited.find("exit"), std::string::npos) << exited;
  try {
    make_external_scheduler(external("sys.exit(0)\n"), {{"dgcnn/modelnet40", 9}});
    FAIL() << "a scheduler that never said ready was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "scheduler.command") << e.what();
  }
}

}  // namespace
}  // namespace coinfer
