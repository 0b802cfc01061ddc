#pragma once
// What the machine offers a computation right now (the MEDN paper's measurable parameters, Sec. 2.1):
// the memory available (/proc/meminfo MemAvailable) and the share of the CPUs used by other work
// (/proc/stat's busy time less this process's own CPU time, over the interval between two readings).
// Linux only. The parsers are separate so that they can be checked on given text.
#include <string>

namespace coinfer::hw {

// All CPUs' time from /proc/stat's first ("cpu ") line, in clock ticks: busy = user + nice + system +
// irq + softirq + steal; total = busy + idle + iowait. Throws std::invalid_argument when the text has no
// such line or it has fewer than 4 numbers.
struct CpuTicks {
  unsigned long long busy = 0, total = 0;
};
CpuTicks parse_proc_stat(const std::string& text);

// MemAvailable from /proc/meminfo's text, in bytes (the file says kB = 1024 bytes). Throws
// std::invalid_argument when absent.
long long parse_mem_available(const std::string& meminfo);

// The share of the CPUs busy with work other than this process's, between two readings:
// (delta busy - own CPU time in ticks) / delta total, clamped to [0, 1]; 0 when no tick passed.
double others_utilisation(const CpuTicks& before, const CpuTicks& after, double own_cpu_seconds, double ticks_per_second);

// Readings of this machine. Each reading blocks only to read two /proc files (microseconds).
class SystemMeter {
 public:
  SystemMeter();  // the first interval starts here
  long long available_memory_bytes() const;
  // Starts an interval (construction starts the first).
  void mark();
  // Utilisation by other work since the last mark(). The kernel counts in ticks of 1 / ticks_per_second
  // per CPU: an interval of a few hundred ms keeps the share from being coarse.
  double utilisation_since_mark() const;

 private:
  struct Reading {
    CpuTicks ticks;
    double own_cpu_s = 0;
  };
  Reading read_now() const;
  Reading mark_;
  double ticks_per_second_ = 100;
};

// The CPU's model name (/proc/cpuinfo "model name", or "Model" on ARM boards), "unknown" when absent.
std::string cpu_model_name();

// This process's CPU time so far (all threads, user + system), seconds.
double own_cpu_seconds();

}  // namespace coinfer::hw
