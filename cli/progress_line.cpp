#include "cli/progress_line.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace coinfer::cli {

std::string format_duration(double s) {
  char b[64];
  if (!(s >= 0) || std::isinf(s)) return "?";
  const long t = std::lround(s);
  if (t < 60)
    std::snprintf(b, sizeof b, "%ld s", t);
  else if (t < 3600)
    std::snprintf(b, sizeof b, "%ld min %02ld s", t / 60, t % 60);
  else
    std::snprintf(b, sizeof b, "%ld h %02ld min", t / 3600, (t % 3600) / 60);
  return b;
}

ProgressLine::ProgressLine(std::string label, bool quiet, double interval_s)
    : label_(std::move(label)), quiet_(quiet), tty_(::isatty(2) != 0), interval_s_(interval_s), start_(std::chrono::steady_clock::now()) {}

void ProgressLine::update(double done, double total, const std::string& what) {
  if (quiet_ || !(total > 0)) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const bool end = done >= total;
  if (!tty_ && !end && elapsed - last_print_s_ < interval_s_) return;
  last_print_s_ = elapsed;
  const double eta = done > 0 ? elapsed * (total - done) / done : NAN;
  std::fprintf(stderr, "%s[%s] %5.1f %%  %s elapsed, ETA %s  %s%s", tty_ ? "\r" : "", label_.c_str(), 100 * done / total,
               format_duration(elapsed).c_str(), done > 0 ? format_duration(eta).c_str() : "?", what.c_str(), tty_ ? "      " : "\n");
  std::fflush(stderr);
  printed_ = true;
}

void ProgressLine::finish() {
  if (tty_ && printed_ && !quiet_) std::fprintf(stderr, "\n");
}

}  // namespace coinfer::cli
