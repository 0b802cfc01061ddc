#include "hw/load_generator.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace coinfer::hw {

LoadLevel random_load_level(RandomStream& rng, int max_threads, long long max_memory_bytes) {
  LoadLevel l;
  if (rng.next_unit() < 0.3 || max_threads < 1) return l;
  l.threads = 1 + static_cast<int>(rng.next_u64() % static_cast<std::uint64_t>(max_threads));
  l.duty = 0.25 + 0.75 * rng.next_unit();
  l.memory_bytes = static_cast<long long>(rng.next_unit() * static_cast<double>(std::max(0LL, max_memory_bytes)));
  return l;
}

LoadGenerator::LoadGenerator(std::string program) : program_(std::move(program)) {}

LoadGenerator::~LoadGenerator() { stop(); }

void LoadGenerator::stop() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = 0;
  level_ = LoadLevel{};
}

void LoadGenerator::set(const LoadLevel& level) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (level.threads < 0 || level.threads > cores || level.memory_bytes < 0 || (level.threads > 0 && !(level.duty > 0 && level.duty <= 1)))
    throw std::invalid_argument("load level: threads in [0, " + std::to_string(cores) + "], duty in (0, 1], memory >= 0");
  stop();
  if (level.threads == 0 && level.memory_bytes == 0) return;
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("load generator: pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  const std::string t = std::to_string(level.threads), d = std::to_string(level.duty), m = std::to_string(level.memory_bytes);
  std::vector<char*> argv = {const_cast<char*>(program_.c_str()), const_cast<char*>("_load-child"), const_cast<char*>(t.c_str()),
                             const_cast<char*>(d.c_str()),        const_cast<char*>(m.c_str()),     nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program_.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("load generator: cannot start " + program_);
  }
  pid_ = pid;
  level_ = level;
  // Wait for "ready" (the memory is touched) for at most 60 s.
  pollfd p{fds[0], POLLIN, 0};
  char buf[8] = {0};
  const bool ready = poll(&p, 1, 60000) == 1 && read(fds[0], buf, sizeof buf) > 0 && buf[0] == 'r';
  close(fds[0]);
  if (!ready) {
    stop();
    throw std::runtime_error("load generator: the child did not get ready in 60 s (memory " + m + " bytes)");
  }
}

int run_load_child(int threads, double duty, long long memory_bytes) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 2;  // the parent is already gone
  if (threads < 0 || threads > 1024 || memory_bytes < 0 || (threads > 0 && !(duty > 0 && duty <= 1))) return 2;
  unsigned char* mem = nullptr;
  if (memory_bytes > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(memory_bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 2;
    mem = static_cast<unsigned char*>(p);
    const long page = sysconf(_SC_PAGESIZE);
    for (long long i = 0; i < memory_bytes; i += page) mem[i] = 1;  // touched: resident
  }
  if (write(1, "ready\n", 6) != 6) return 2;
  std::atomic<unsigned long long> sink{0};
  auto body = [&](int index) {
    using clock = std::chrono::steady_clock;
    const auto period = std::chrono::microseconds(10000);
    const auto busy = std::chrono::microseconds(static_cast<long long>(duty * 10000));
    const long long share = threads > 0 ? memory_bytes / threads : 0;
    unsigned char* mine = mem ? mem + share * index : nullptr;
    long long pos = 0;
    double x = 1.0 + index;
    for (;;) {
      const auto start = clock::now();
      while (clock::now() - start < busy) {
        if (mine && share > 0) {
          unsigned long long s = 0;
          for (int i = 0; i < 4096; ++i, pos = (pos + 64) % share) s += mine[pos]++;
          sink += s;
        } else {
          for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
        }
      }
      std::this_thread::sleep_until(start + period);
      if (x < 0) sink += 1;
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(body, i);
  for (;;) pause();  // memory only (threads 0), or until killed
}

}  // namespace coinfer::hw
