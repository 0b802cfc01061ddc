#pragma once
// Starting other programs: the one way coinfer does it (sweep points, Slurm's sbatch, the testbed's
// server/device processes and its ip/tc commands, validation runs, the plot scripts).
//
// Always an argument vector, never a shell string, so a path with spaces or quotes is one argument
// and nothing is interpreted. posix_spawn underneath (glibc reports a program that cannot be
// executed as an error of the spawn itself, so "not found" is an exception here, not exit 127 later).
// The child starts with the default disposition of SIGINT, SIGTERM, SIGPIPE and SIGCHLD and an empty
// signal mask, whatever the parent ignores or blocks.
#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/input_error.hpp"

namespace coinfer {

struct ChildSpec {
  // argv[0] is a path, or a program name looked up on PATH.
  std::vector<std::string> argv;
  // Where the child's standard streams go: "" inherits the parent's; otherwise a file, truncated
  // (or appended to, with `append`). `stderr_file` may be "&1": wherever stdout goes. stdin is
  // /dev/null unless `inherit_stdin` or `stdin_file` (a file the child reads as its input).
  std::string stdout_file, stderr_file;
  std::string stdin_file;
  bool append = false;
  bool inherit_stdin = false;
  // Capture stdout / stderr into ChildResult (run_child only; overrides the files above).
  bool capture_stdout = false, capture_stderr = false;
  // The child leads a new process group (signal_group() then reaches everything it starts).
  bool own_process_group = false;
  // Connect the child's stdin and stdout to this process (Child::channel(): one socket, so that
  // writing to a child that has exited is an error, not a SIGPIPE). Child::start only.
  bool connect_stdio = false;
  // The child's working directory ("" = ours).
  std::string cwd;
  // Variables set (or replaced) in the child's environment, on top of this process's.
  std::vector<std::pair<std::string, std::string>> env;
  // The child is told this process's pid (kParentPidVariable): a coinfer program that calls
  // watch_parent_from_environment() stops when this process is gone, whatever killed it (kill -9
  // included), and stop_orphaned_processes() finds it if it did not.
  bool die_with_parent = false;
};

// The environment variable die_with_parent sets: the parent's pid.
constexpr const char* kParentPidVariable = "COINFER_PARENT_PID";
// When this process was started with die_with_parent: removes the variable from the environment (so
// that programs it starts do not inherit it) and watches, on a thread of its own, every 0.25 s, that
// its parent is still that process; when not, calls `on_parent_gone` once (e.g. the SIGTERM path's
// stop flag) and, if the process is still alive `hard_exit_after_s` later, ends it (_exit(1)). Returns
// whether a watch started. Does not block.
bool watch_parent_from_environment(std::function<void()> on_parent_gone, double hard_exit_after_s = 20);
// Processes named `comm` (as /proc/PID/comm says) started with die_with_parent whose parent is gone
// (the pid in their environment is no longer their parent): SIGTERM, then SIGKILL after `grace_s`.
// Returns the pids it stopped. For `coinfer testbed --cleanup`.
std::vector<pid_t> stop_orphaned_processes(const std::string& comm, double grace_s);

// 0..255: the exit code; 128 + N: killed by signal N (as a shell reports it).
int exit_status_of(int wait_status);
// "exit 3", "killed by signal 9 (Killed)".
std::string describe_exit_status(int status);

class Child {
 public:
  // Starts the program. Throws std::runtime_error naming the program and the reason (not found, not
  // executable, an output file that cannot be opened).
  static Child start(const ChildSpec& spec);

  Child() = default;
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // A child still running when its Child is destroyed is killed (SIGKILL, its group if it leads
  // one) and reaped: none is left behind, none becomes a zombie.
  ~Child();

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  // Whether it still runs (reaps it without blocking when it has ended).
  bool running();
  // Waits for the end; exit_status_of() convention. Idempotent.
  int wait();
  // Waits at most `seconds`; true when it has ended (status in *status).
  bool wait_for(double seconds, int* status = nullptr);
  // Sends a signal to the child (to its whole group if it leads one). No-op once reaped.
  void signal(int sig);
  // SIGTERM, then SIGKILL after `grace_s` if it is still running; waits. Returns the status.
  int stop(double grace_s);
  // The status once ended (-1 before).
  int status() const { return status_; }
  // With connect_stdio: our end of the child's stdin and stdout (a stream socket; -1 otherwise).
  // Owned by the Child; close_channel() ends the child's input.
  int channel() const { return channel_; }
  void close_channel();

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  int channel_ = -1;
  bool group_ = false;
  std::string name_;
  friend struct ChildResult run_child(const ChildSpec& spec, double timeout_s);
};

// Waits for any of `children` to end (those already reaped are skipped); returns its index, or -1
// when none is running. Blocks.
int wait_any(std::vector<Child*>& children);

struct ChildResult {
  int status = -1;  // exit_status_of() convention; -1 when it was stopped at the timeout
  bool timed_out = false;
  std::string out, err;  // captured output (when asked for)
};

// Starts the program and waits for it, reading captured output as it comes (no deadlock on large
// outputs). `timeout_s` > 0 stops it (SIGTERM, then SIGKILL after 2 s) when it runs longer.
ChildResult run_child(const ChildSpec& spec, double timeout_s = 0);

// A command line as words: spaces separate, '...' and "..." group (no escapes inside '...'; inside
// "..." a backslash escapes " and itself), a backslash outside quotes takes the next character.
// InputError (naming `key`) on an unterminated quote or an empty command.
std::vector<std::string> split_command_line(const std::string& command, const SourceLocation& where, const std::string& key);

// Replaces this process with the program (the companion programs, the plot scripts). Flushes stdio
// first. Returns only on failure, by throwing std::runtime_error naming the program and the reason.
[[noreturn]] void exec_replace(const std::vector<std::string>& argv);

}  // namespace coinfer
