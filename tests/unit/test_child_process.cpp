// plumbing/child_process: the one way coinfer starts programs. Each test states what a caller relies on.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "plumbing/child_process.hpp"

namespace coinfer {
namespace {

ChildSpec sh(const std::string& script) {
  ChildSpec s;
  s.argv = {"/bin/sh", "-c", script};
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ChildProcess, CapturesBothStreamsAndTheExitCode) {
  ChildSpec s = sh("echo out; echo err >&2; exit 3");
  s.capture_stdout = s.capture_stderr = true;
  const ChildResult r = run_child(s);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
}

TEST(ChildProcess, ArgumentsAreNeverInterpretedByAShell) {
  ChildSpec s;
  s.argv = {"printf", "%s|", "a b", "it's", "$HOME", "; rm -rf /", "\"q\""};  // looked up on PATH
  s.capture_stdout = true;
  EXPECT_EQ(run_child(s).out, "a b|it's|$HOME|; rm -rf /|\"q\"|");
}

TEST(ChildProcess, AProgramThatCannotStartIsAnErrorNamingIt) {
  ChildSpec s;
  s.argv = {"no-such-program-of-coinfer"};
  try {
    run_child(s);
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start no-such-program-of-coinfer: No such file"), std::string::npos) << e.what();
  }
  // A file that exists and is not executable (made here: /etc/hostname, used before, is executable in a
  // debootstrapped root), and a folder: refused, saying why.
  const std::string plain = std::filesystem::temp_directory_path() / ("coinfer-not-executable-" + std::to_string(::getpid()));
  std::ofstream(plain) << "#!/bin/sh\n";
  std::filesystem::permissions(plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  s.argv = {plain};
  try {
    (void)Child::start(s);
    ADD_FAILURE() << "a file without execute permission started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start " + plain + ": Permission denied"), std::string::npos) << e.what();
  }
  std::filesystem::remove(plain);
  s.argv = {"/tmp"};
  EXPECT_THROW(Child::start(s), std::runtime_error);
  ChildSpec f = sh("true");
  f.stdout_file = "/nonexistent-dir/x.log";
  try {
    Child::start(f);
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write /nonexistent-dir/x.log"), std::string::npos) << e.what();
  }
}

TEST(ChildProcess, LargeOutputOnBothStreamsDoesNotDeadlock) {
  // 1 MB on each stream: far beyond a pipe's 64 KiB, written stdout first. A reader that drained
  // stdout to its end before stderr would wait forever on a child blocked writing stderr.
  ChildSpec s = sh("head -c 1000000 /dev/zero | tr '\\0' a >&2; head -c 1000000 /dev/zero | tr '\\0' b");
  s.capture_stdout = s.capture_stderr = true;
  const ChildResult r = run_child(s, 60);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, std::string(1000000, 'b'));
  EXPECT_EQ(r.err, std::string(1000000, 'a'));
}

TEST(ChildProcess, TimeoutStopsTheProgram) {
  ChildSpec s;
  s.argv = {"sleep", "30"};
  const ChildResult r = run_child(s, 0.2);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status, -1);
}

TEST(ChildProcess, SignalsAreReportedAsAShellDoes) {
  EXPECT_EQ(run_child(sh("kill -9 $$")).status, 137);
  EXPECT_EQ(describe_exit_status(137), "killed by signal 9 (Killed)");
  EXPECT_EQ(describe_exit_status(2), "exit 2");
}

TEST(ChildProcess, FilesAppendAndEnvironment) {
  const std::string log = testing::TempDir() + "/coinfer-child.log";
  std::remove(log.c_str());
  ChildSpec s = sh("echo \"$COINFER_TEST_X\"; echo two >&2");
  s.env = {{"COINFER_TEST_X", "one"}};
  s.stdout_file = log;
  s.stderr_file = "&1";
  s.append = true;
  EXPECT_EQ(run_child(s).status, 0);
  EXPECT_EQ(run_child(s).status, 0);
  EXPECT_EQ(slurp(log), "one\ntwo\none\ntwo\n");
  s.append = false;
  EXPECT_EQ(run_child(s).status, 0);
  EXPECT_EQ(slurp(log), "one\ntwo\n");
  std::remove(log.c_str());
}

TEST(ChildProcess, TheChildGetsDefaultSignalsWhateverTheParentIgnores) {
  // A parent that ignores SIGPIPE (servers do) must not hand that on: `yes | head` would never end.
  struct sigaction old {};
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);
  ChildSpec s;
  s.argv = {"grep", "SigIgn", "/proc/self/status"};
  s.capture_stdout = true;
  const std::string line = run_child(s).out;
  sigaction(SIGPIPE, &old, nullptr);
  const unsigned long long mask = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGPIPE - 1)), 0u) << line;
}

TEST(ChildProcess, NoneIsLeftBehind) {
  pid_t pid = 0;
  {
    ChildSpec s;
    s.argv = {"sleep", "30"};
    Child c = Child::start(s);
    pid = c.pid();
    EXPECT_TRUE(c.running());
  }  // destroyed while running: killed and reaped
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);

  // A group leader's stop() reaches what it started.
  ChildSpec g = sh("sleep 30 & echo $! ; wait");
  g.own_process_group = true;
  const std::string pidfile = testing::TempDir() + "/coinfer-grandchild.pid";
  g.stdout_file = pidfile;
  Child c = Child::start(g);
  for (int i = 0; i < 500 && slurp(pidfile).empty(); ++i) ::usleep(10000);
  const pid_t grandchild = std::stoi(slurp(pidfile));
  EXPECT_EQ(c.stop(5), 128 + SIGTERM);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {  // reaped by init, asynchronously
    gone = ::kill(grandchild, 0) == -1 && errno == ESRCH;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone);
  std::remove(pidfile.c_str());
}

TEST(ChildProcess, WaitAnyReturnsTheOneThatEnded) {
  ChildSpec slow, fast = sh("exit 4");
  slow.argv = {"sleep", "30"};
  Child a = Child::start(slow), b = Child::start(fast);
  std::vector<Child*> both = {&a, &b};
  EXPECT_EQ(wait_any(both), 1);
  EXPECT_EQ(b.status(), 4);
  EXPECT_TRUE(a.running());
  a.signal(SIGKILL);
  EXPECT_EQ(wait_any(both), 0);
  EXPECT_EQ(a.status(), 137);
  EXPECT_EQ(wait_any(both), -1);  // none left
}

}  // namespace
}  // namespace coinfer
