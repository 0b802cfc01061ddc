#include "plumbing/isolated_reader.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>

#include "core/input_error.hpp"
#include "core/limits.hpp"

namespace coinfer {

#if defined(__SANITIZE_ADDRESS__)
#define COINFER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COINFER_ASAN 1
#endif
#endif
#ifndef COINFER_ASAN
#define COINFER_ASAN 0
#endif
#if COINFER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

void write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The child: parse, then send 'T' + the payload, or 'E' + key + '\0' + message. Never returns.
[[noreturn]] void reader_child(const std::function<std::string()>& parse, int fd) {
  // A crash here must end this child by its signal, for the parent to report: handlers inherited
  // from the parent (a sanitizer's, a fuzzer's, the CLI's) belong to the parent and must not run.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(sig, &dfl, nullptr);
  }
#if COINFER_ASAN
  // libhdf5's own memory errors on corrupt files (found by tests/fuzz: heap overflows and uses after
  // free inside libhdf5) end this child under AddressSanitizer: not the parent's callbacks.
  __sanitizer_set_death_callback(nullptr);
#endif
#if !COINFER_ASAN  // AddressSanitizer reserves terabytes of shadow address space: no cap under it
  struct rlimit cap {
    static_cast<rlim_t>(limits::kLutReaderMemoryBytes), static_cast<rlim_t>(limits::kLutReaderMemoryBytes)
  };
  ::setrlimit(RLIMIT_AS, &cap);
#endif
  std::string reply;
  try {
    reply = "T" + parse();
  } catch (const InputError& e) {
    reply = "E" + e.key() + std::string(1, '\0') + e.what();
  } catch (const std::bad_alloc&) {
    reply = std::string("E") + std::string(1, '\0') + "needs more than the reader's memory bound (corrupt sizes?)";
  } catch (const std::exception& e) {
    reply = std::string("E") + std::string(1, '\0') + "cannot be read (corrupt?): " + e.what();
  }
  write_all(fd, reply);
  ::close(fd);
  ::_exit(0);  // no atexit handlers: they belong to the parent
}

// The fuzz build shortens the deadline (tests/fuzz/run_fuzz.sh: -DCOINFER_READER_TIMEOUT_S=2): libhdf5
// loops on some corrupt files, and each such input would otherwise hold the fuzzer for the full 60 s
// (the file-level targets ran at 2 inputs/s). The outcome is the same InputError either way.
#ifdef COINFER_READER_TIMEOUT_S
constexpr int kReaderTimeoutS = COINFER_READER_TIMEOUT_S;
#else
constexpr int kReaderTimeoutS = limits::kLutReaderTimeoutS;
#endif

}  // namespace

std::string read_isolated(const std::string& path, const std::string& what_file, const std::function<std::string()>& parse) {
  auto fail = [&](const std::string& key, const std::string& what) -> std::string { throw InputError(SourceLocation{path, 0, 0}, key, what); };
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("", "cannot start the " + what_file + " reader: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    fail("", "cannot start the " + what_file + " reader: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    reader_child(parse, fds[1]);
  }
  ::close(fds[1]);
  std::string reply;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kReaderTimeoutS);
  bool timed_out = false;
  char buf[65536];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p {
      fds[0], POLLIN, 0
    };
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) fail("", "reading took longer than " + std::to_string(kReaderTimeoutS) + " s (corrupt file?)");
  if (WIFSIGNALED(status)) fail("", "corrupt " + what_file + ": the HDF5 library crashed reading it (" + strsignal(WTERMSIG(status)) + ")");
  if (reply.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("", "corrupt " + what_file + ": the reader ended without an answer");
  if (reply[0] == 'E') {
    const size_t nul = reply.find('\0');
    if (nul == std::string::npos) fail("", "corrupt " + what_file);
    const std::string key = reply.substr(1, nul - 1);
    std::string what = reply.substr(nul + 1);
    // The child's message already starts with "file: key: " (InputError formats it); keep only the reason.
    const std::string prefix = InputError(SourceLocation{path, 0, 0}, key, "").what();
    if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    fail(key, what);
  }
  return reply.substr(1);
}

}  // namespace coinfer
