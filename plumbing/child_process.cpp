#include "plumbing/child_process.hpp"

#include <cstdlib>

#include <filesystem>

#include <sstream>

#include <fstream>

#include "core/input_error.hpp"
#include "core/text_util.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace coinfer {

namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int e) { return std::strerror(e); }

// 0 when `program` can be executed as posix_spawn(p) would find it (a path: as it is, from `cwd` when
// relative and `cwd` is given; a name: on this process's PATH), else the errno why not. Checked before
// the spawn because posix_spawn's report of a failed exec is lost under qemu-user emulation (the exec
// fails in a child that no longer shares the parent's memory, and only exit 127 is seen).
int cannot_execute(const std::string& program, const std::string& cwd) {
  auto check = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EACCES;
    return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
  };
  if (program.empty()) return ENOENT;
  if (program.find('/') != std::string::npos) return check(program[0] != '/' && !cwd.empty() ? cwd + "/" + program : program);
  const char* path = std::getenv("PATH");
  int first = ENOENT;
  for (const std::string& dir : split(path ? path : "/bin:/usr/bin", ':')) {
    const int e = check((dir.empty() ? std::string(".") : dir) + "/" + program);
    if (e == 0) return 0;
    if (e != ENOENT && e != ENOTDIR && first == ENOENT) first = e;  // as execvp: EACCES wins over "not found"
  }
  return first;
}

// Owns the posix_spawn structures for one start.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

// The environment of the child: ours with `env` set on top.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& [k, v] : env) replaced = replaced || k == key;
    if (!replaced) out.push_back(kv);
  }
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

// Starts the child. `out_pipe`/`err_pipe` (write ends, -1 for none) replace the files of the spec;
// `stdio` (-1 for none) becomes its stdin and stdout.
pid_t spawn(const ChildSpec& spec, int out_pipe, int err_pipe, int stdio = -1) {
  if (spec.argv.empty() || spec.argv[0].empty()) throw std::runtime_error("cannot start a program: no program named");
  const std::string& program = spec.argv[0];
  auto check_writable = [&](const std::string& file) {
    // posix_spawn reports a failed open in the child only as a failed spawn; open it here first so
    // the error names the file.
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | (spec.append ? O_APPEND : 0), 0644);
    if (fd < 0) throw std::runtime_error("cannot start " + program + ": cannot write " + file + ": " + errno_text(errno));
    ::close(fd);
  };
  SpawnSetup s;
  const int flags = O_WRONLY | O_CREAT | (spec.append ? O_APPEND : O_TRUNC);
  if (stdio >= 0) {
    posix_spawn_file_actions_adddup2(&s.actions, stdio, 0);
  } else if (!spec.stdin_file.empty()) {
    if (::access(spec.stdin_file.c_str(), R_OK) != 0)
      throw std::runtime_error("cannot start " + program + ": cannot read " + spec.stdin_file + ": " + errno_text(errno));
    posix_spawn_file_actions_addopen(&s.actions, 0, spec.stdin_file.c_str(), O_RDONLY, 0);
  } else if (!spec.inherit_stdin)
    posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdio >= 0) {
    posix_spawn_file_actions_adddup2(&s.actions, stdio, 1);
  } else if (out_pipe >= 0) {
    posix_spawn_file_actions_adddup2(&s.actions, out_pipe, 1);
  } else if (!spec.stdout_file.empty()) {
    check_writable(spec.stdout_file);
    posix_spawn_file_actions_addopen(&s.actions, 1, spec.stdout_file.c_str(), flags, 0644);
  }
  if (err_pipe >= 0) {
    posix_spawn_file_actions_adddup2(&s.actions, err_pipe, 2);
  } else if (spec.stderr_file == "&1") {
    posix_spawn_file_actions_adddup2(&s.actions, 1, 2);
  } else if (!spec.stderr_file.empty()) {
    check_writable(spec.stderr_file);
    posix_spawn_file_actions_addopen(&s.actions, 2, spec.stderr_file.c_str(), flags, 0644);
  }
  if (!spec.cwd.empty()) {
    if (::access(spec.cwd.c_str(), X_OK) != 0) throw std::runtime_error("cannot start " + program + " in " + spec.cwd + ": " + errno_text(errno));
    posix_spawn_file_actions_addchdir_np(&s.actions, spec.cwd.c_str());
  }
  short attr_flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);
  if (spec.own_process_group) {
    attr_flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&s.attr, 0);
  }
  posix_spawnattr_setflags(&s.attr, attr_flags);

  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::pair<std::string, std::string>> vars = spec.env;
  if (spec.die_with_parent) vars.emplace_back(kParentPidVariable, std::to_string(::getpid()));
  std::vector<std::string> env = child_environment(vars);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  if (const int e = cannot_execute(program, spec.cwd); e != 0) throw std::runtime_error("cannot start " + program + ": " + errno_text(e));
  std::fflush(nullptr);  // nothing buffered here is written twice or out of order
  pid_t pid = -1;
  const int rc = program.find('/') == std::string::npos ? posix_spawnp(&pid, program.c_str(), &s.actions, &s.attr, argv.data(), envp.data())
                                                        : posix_spawn(&pid, program.c_str(), &s.actions, &s.attr, argv.data(), envp.data());
  if (rc != 0) throw std::runtime_error("cannot start " + program + ": " + errno_text(rc));
  return pid;
}

}  // namespace

int exit_status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 128;
}

std::string describe_exit_status(int status) {
  if (status < 0) return "still running";
  if (status <= 128) return "exit " + std::to_string(status);
  return "killed by signal " + std::to_string(status - 128) + " (" + strsignal(status - 128) + ")";
}

Child Child::start(const ChildSpec& spec) {
  Child c;
  int pair[2] = {-1, -1};
  if (spec.connect_stdio && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw std::runtime_error("cannot start " + spec.argv.at(0) + ": socketpair: " + errno_text(errno));
  try {
    c.pid_ = spawn(spec, -1, -1, pair[1]);
  } catch (...) {
    if (pair[0] >= 0) ::close(pair[0]), ::close(pair[1]);
    throw;
  }
  if (pair[1] >= 0) ::close(pair[1]);
  c.channel_ = pair[0];
  c.group_ = spec.own_process_group;
  c.name_ = spec.argv[0];
  return c;
}

void Child::close_channel() {
  if (channel_ >= 0) ::close(channel_);
  channel_ = -1;
}

Child::Child(Child&& o) noexcept { *this = std::move(o); }

Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && status_ < 0) {
      signal(SIGKILL);
      wait();
    }
    close_channel();
    pid_ = o.pid_;
    status_ = o.status_;
    channel_ = o.channel_;
    o.channel_ = -1;
    group_ = o.group_;
    name_ = std::move(o.name_);
    o.pid_ = -1;
    o.status_ = -1;
  }
  return *this;
}

Child::~Child() {
  close_channel();
  if (pid_ > 0 && status_ < 0) {
    signal(SIGKILL);
    wait();
  }
}

bool Child::running() {
  if (pid_ <= 0 || status_ >= 0) return false;
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = exit_status_of(st);
    return false;
  }
  if (r < 0 && errno == ECHILD) {  // reaped elsewhere: its status is lost
    status_ = 128;
    return false;
  }
  return true;
}

int Child::wait() {
  if (pid_ <= 0) return status_;
  while (status_ < 0) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, 0);
    if (r == pid_)
      status_ = exit_status_of(st);
    else if (r < 0 && errno != EINTR)
      status_ = 128;
  }
  return status_;
}

bool Child::wait_for(double seconds, int* status) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  auto pause = std::chrono::milliseconds(1);
  while (running()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  if (status) *status = status_;
  return true;
}

void Child::signal(int sig) {
  if (pid_ <= 0 || status_ >= 0) return;
  if (group_) ::kill(-pid_, sig);
  ::kill(pid_, sig);
}

int Child::stop(double grace_s) {
  if (!running()) return status_;
  signal(SIGTERM);
  if (!wait_for(grace_s)) signal(SIGKILL);
  return wait();
}

int wait_any(std::vector<Child*>& children) {
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    bool any = false;
    for (size_t i = 0; i < children.size(); ++i) {
      Child* c = children[i];
      if (!c || c->pid() <= 0 || c->status() >= 0) continue;
      any = true;
      if (!c->running()) return static_cast<int>(i);
    }
    if (!any) return -1;
    // Sleep until some child of ours changes state (without reaping it: it may not be one of these),
    // bounded so that a child ending between the scan and the wait is seen soon.
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) {
      bool ours = false;
      for (Child* c : children) ours = ours || (c && c->pid() == info.si_pid);
      if (ours) continue;  // the scan reaps it
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

ChildResult run_child(const ChildSpec& spec, double timeout_s) {
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  auto close_fd = [](int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  };
  if (spec.capture_stdout && ::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("cannot start " + spec.argv.at(0) + ": pipe");
  if (spec.capture_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    close_fd(out_pipe[0]);
    close_fd(out_pipe[1]);
    throw std::runtime_error("cannot start " + spec.argv.at(0) + ": pipe");
  }
  Child c;
  try {
    c.pid_ = spawn(spec, out_pipe[1], err_pipe[1]);
    c.group_ = spec.own_process_group;
    c.name_ = spec.argv[0];
  } catch (...) {
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) close_fd(*fd);
    throw;
  }
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  ChildResult r;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::vector<std::pair<int*, std::string*>> streams;
  if (out_pipe[0] >= 0) streams.push_back({&out_pipe[0], &r.out});
  if (err_pipe[0] >= 0) streams.push_back({&err_pipe[0], &r.err});
  char buf[65536];
  for (;;) {
    std::vector<pollfd> fds;
    for (auto& [fd, text] : streams)
      if (*fd >= 0) fds.push_back({*fd, POLLIN, 0});
    if (fds.empty()) break;
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        r.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
    for (auto& [fd, text] : streams) {
      if (*fd < 0) continue;
      pollfd probe{*fd, POLLIN, 0};
      if (::poll(&probe, 1, 0) <= 0) continue;
      const ssize_t n = ::read(*fd, buf, sizeof buf);
      if (n > 0)
        text->append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EINTR)
        close_fd(*fd);
    }
  }
  if (!r.timed_out && timeout_s > 0) {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (!c.wait_for(std::max(0.0, left))) r.timed_out = true;
  }
  if (r.timed_out) {
    c.stop(2);
    r.status = -1;
  } else {
    r.status = c.wait();
  }
  close_fd(out_pipe[0]);
  close_fd(err_pipe[0]);
  return r;
}

void exec_replace(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::runtime_error("cannot run a program: no program named");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  if (argv[0].find('/') == std::string::npos)
    ::execvp(args[0], args.data());
  else
    ::execv(args[0], args.data());
  throw std::runtime_error("cannot run " + argv[0] + ": " + errno_text(errno));
}

std::vector<std::string> split_command_line(const std::string& command, const SourceLocation& where, const std::string& key) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(cur), cur.clear(), in_word = false;
    } else if (c == '\'' || c == '"') {
      const size_t end = command.find(c, i + 1);
      in_word = true;
      if (c == '\'') {
        if (end == std::string::npos) throw InputError(where, key, "unterminated ' in '" + printable(command, 200) + "'");
        cur += command.substr(i + 1, end - i - 1);
        i = end;
      } else {
        size_t j = i + 1;
        for (; j < command.size() && command[j] != '"'; ++j) {
          if (command[j] == '\\' && j + 1 < command.size() && (command[j + 1] == '"' || command[j + 1] == '\\')) ++j;
          cur += command[j];
        }
        if (j >= command.size()) throw InputError(where, key, "unterminated \" in '" + printable(command, 200) + "'");
        i = j;
      }
    } else if (c == '\\' && i + 1 < command.size()) {
      cur += command[++i];
      in_word = true;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  if (words.empty()) throw InputError(where, key, "the command is empty");
  return words;
}

namespace {

// The parent pid a process was started with (its /proc/PID/environ keeps the variable even after
// unsetenv), or -1.
pid_t parent_in_environ(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string entry;
  const std::string key = std::string(kParentPidVariable) + "=";
  while (std::getline(in, entry, '\0'))
    if (entry.rfind(key, 0) == 0) {
      try {
        return static_cast<pid_t>(std::stol(entry.substr(key.size())));
      } catch (const std::exception&) {
        return -1;
      }
    }
  return -1;
}

pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const size_t close = line.rfind(')');  // comm may hold spaces and parentheses: fields follow the last ')'
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  long ppid = -1;
  rest >> state >> ppid;
  return static_cast<pid_t>(ppid);
}

}  // namespace

bool watch_parent_from_environment(std::function<void()> on_parent_gone, double hard_exit_after_s) {
  const char* v = std::getenv(kParentPidVariable);
  if (!v) return false;
  pid_t parent = -1;
  try {
    parent = static_cast<pid_t>(std::stol(v));
  } catch (const std::exception&) {
    parent = -1;
  }
  ::unsetenv(kParentPidVariable);
  if (parent <= 1) return false;
  std::thread([parent, on_parent_gone = std::move(on_parent_gone), hard_exit_after_s] {
    while (::getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (on_parent_gone) on_parent_gone();
    std::this_thread::sleep_for(std::chrono::duration<double>(hard_exit_after_s));
    ::_exit(1);
  }).detach();
  return true;
}

std::vector<pid_t> stop_orphaned_processes(const std::string& comm, double grace_s) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    std::ifstream c(it->path() / "comm");
    std::string its;
    std::getline(c, its);
    if (its != comm) continue;
    const pid_t want = parent_in_environ(pid);
    if (want <= 0 || parent_of(pid) == want) continue;  // not ours, or its parent still runs it
    ::kill(pid, SIGTERM);
    found.push_back(pid);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  for (pid_t pid : found) {
    while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
  }
  return found;
}

}  // namespace coinfer
