#include "hw/system_meter.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace coinfer::hw {

namespace {
std::string read_all(const char* path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error(std::string("cannot read ") + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

CpuTicks parse_proc_stat(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 4, "cpu ") != 0) continue;
    std::istringstream l(line.substr(4));
    std::vector<unsigned long long> v;
    unsigned long long x;
    while (l >> x) v.push_back(x);
    if (v.size() < 4) throw std::invalid_argument("/proc/stat: the cpu line has fewer than 4 fields");
    v.resize(std::max<size_t>(v.size(), 8), 0);
    // user nice system idle iowait irq softirq steal (guest time is already inside user)
    CpuTicks t;
    t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    t.total = t.busy + v[3] + v[4];
    return t;
  }
  throw std::invalid_argument("/proc/stat: no 'cpu ' line");
}

long long parse_mem_available(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string key;
  long long kb = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    if (l >> key >> kb && key == "MemAvailable:") return kb * 1024;
  }
  throw std::invalid_argument("/proc/meminfo: no MemAvailable line");
}

double others_utilisation(const CpuTicks& before, const CpuTicks& after, double own_cpu_seconds, double ticks_per_second) {
  if (after.total <= before.total) return 0;
  const double busy = static_cast<double>(after.busy - std::min(after.busy, before.busy));
  const double total = static_cast<double>(after.total - before.total);
  return std::clamp((busy - own_cpu_seconds * ticks_per_second) / total, 0.0, 1.0);
}

double own_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

SystemMeter::SystemMeter() {
  const long hz = sysconf(_SC_CLK_TCK);
  if (hz > 0) ticks_per_second_ = static_cast<double>(hz);
  mark();
}

SystemMeter::Reading SystemMeter::read_now() const {
  Reading r;
  r.ticks = parse_proc_stat(read_all("/proc/stat"));
  r.own_cpu_s = own_cpu_seconds();
  return r;
}

long long SystemMeter::available_memory_bytes() const { return parse_mem_available(read_all("/proc/meminfo")); }

void SystemMeter::mark() { mark_ = read_now(); }

double SystemMeter::utilisation_since_mark() const {
  const Reading now = read_now();
  return others_utilisation(mark_.ticks, now.ticks, now.own_cpu_s - mark_.own_cpu_s, ticks_per_second_);
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto c = line.find(':');
      if (c != std::string::npos && c + 2 <= line.size()) return line.substr(c + 2);
    }
  return "unknown";
}

}  // namespace coinfer::hw
