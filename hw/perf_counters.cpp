#include "hw/perf_counters.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace coinfer::hw {

namespace {

struct EventCode {
  std::uint32_t type;
  std::uint64_t config;
};

constexpr std::uint64_t cache_event(std::uint64_t cache, std::uint64_t op, std::uint64_t result) { return cache | (op << 8) | (result << 16); }

EventCode code_of(PerfCounters::Event e) {
  switch (e) {
    case PerfCounters::l1d_access:
      return {PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)};
    case PerfCounters::l1d_miss:
      return {PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)};
    case PerfCounters::llc_access:
      return {PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)};
    case PerfCounters::llc_miss:
      return {PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)};
    case PerfCounters::dtlb_access:
      return {PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)};
    case PerfCounters::dtlb_miss:
      return {PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)};
    case PerfCounters::instructions:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS};
    case PerfCounters::cycles:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES};
    default:
      return {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES};
  }
}

}  // namespace

const char* PerfCounters::event_name(Event e) {
  static const char* names[] = {"l1d_access", "l1d_miss", "llc_access", "llc_miss", "dtlb_access", "dtlb_miss", "instructions", "cycles"};
  return e >= 0 && e < kEvents ? names[e] : "?";
}

PerfCounters::PerfCounters() {
  for (int i = 0; i < kEvents; ++i) {
    count_[i] = -1;
    const EventCode c = code_of(static_cast<Event>(i));
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = c.type;
    attr.config = c.config;
    attr.disabled = 1;
    attr.inherit = 1;  // threads started after opening (LibTorch's intra-op pool) count too
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    fd_[i] = static_cast<int>(fd);
    if (fd < 0)
      why_[i] = errno == ENOENT || errno == EOPNOTSUPP
                    ? "the CPU or the kernel does not expose this event (" + std::string(std::strerror(errno)) + ")"
                : errno == EACCES || errno == EPERM ? "not permitted (kernel.perf_event_paranoid; run as root or lower it)"
                                                    : std::string("perf_event_open: ") + std::strerror(errno);
  }
}

PerfCounters::~PerfCounters() {
  for (int fd : fd_)
    if (fd >= 0) ::close(fd);
}

void PerfCounters::start() {
  for (int i = 0; i < kEvents; ++i) {
    count_[i] = -1;
    if (fd_[i] < 0) continue;
    ::ioctl(fd_[i], PERF_EVENT_IOC_RESET, 0);
    ::ioctl(fd_[i], PERF_EVENT_IOC_ENABLE, 0);
  }
}

void PerfCounters::stop() {
  for (int i = 0; i < kEvents; ++i) {
    if (fd_[i] < 0) continue;
    ::ioctl(fd_[i], PERF_EVENT_IOC_DISABLE, 0);
    std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
    if (::read(fd_[i], v, sizeof v) != static_cast<ssize_t>(sizeof v)) continue;
    if (v[2] == 0) {
      // Never scheduled on the PMU: the event exists on paper only (some hypervisors).
      if (why_[i].empty()) why_[i] = "opened but never counted (the PMU did not schedule it)";
      continue;
    }
    count_[i] = static_cast<double>(v[0]) * static_cast<double>(v[1]) / static_cast<double>(v[2]);
  }
}

double PerfCounters::ratio(Event numerator, Event denominator) const {
  const double a = count_[numerator], b = count_[denominator];
  if (a < 0 || b <= 0) return std::numeric_limits<double>::quiet_NaN();
  return a / b;
}

}  // namespace coinfer::hw
