#pragma once
// Hardware event counters of the calling thread and the threads it starts afterwards (Linux
// perf_event_open, inherited), for the cache and TLB miss rates and the IPC of a code region (the
// feature decomposition paper's Tables I and III). Counted events: L1 data-cache read accesses and
// misses, last-level-cache read accesses and misses, data-TLB read accesses and misses, instructions
// and cycles. Events the CPU or the kernel does not expose (virtual machines often expose none) are
// reported as unavailable with the kernel's reason, never as zero.
// Blocking: system calls only. Not thread-safe: one region at a time per object.
#include <array>
#include <string>

namespace coinfer::hw {

class PerfCounters {
 public:
  enum Event { l1d_access, l1d_miss, llc_access, llc_miss, dtlb_access, dtlb_miss, instructions, cycles, kEvents };
  static const char* event_name(Event e);

  PerfCounters();  // opens what it can; never throws
  ~PerfCounters();
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;

  bool available(Event e) const { return fd_[e] >= 0; }
  // Why an event is not counted ("" when it is).
  const std::string& why_not(Event e) const { return why_[e]; }
  void start();  // resets and enables every open counter
  void stop();   // disables them and reads the counts
  // The count of the last start()..stop() region; -1 when the event is unavailable. Scaled for
  // multiplexing (count * enabled / running) when the kernel time-shared the counters.
  double count(Event e) const { return count_[e]; }
  // misses / accesses, IPC = instructions / cycles; NaN when either count is unavailable or zero.
  double ratio(Event numerator, Event denominator) const;

 private:
  std::array<int, kEvents> fd_{};
  std::array<std::string, kEvents> why_;
  std::array<double, kEvents> count_{};
};

}  // namespace coinfer::hw
