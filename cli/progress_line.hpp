#pragma once
// Progress of long work on stderr, whether or not stderr is a terminal: on a terminal one line
// rewritten in place; otherwise (Slurm, nohup, a pipe) a full line at most every `interval_s`
// seconds and at the end, so logs stay short. Each line gives the fraction done, the elapsed time and
// an ETA (elapsed * remaining / done; the caller weights units by their expected cost).
#include <chrono>
#include <string>

namespace coinfer::cli {

class ProgressLine {
 public:
  ProgressLine(std::string label, bool quiet, double interval_s = 10);
  // `done` of `total` units, `what` the item just finished.
  void update(double done, double total, const std::string& what);
  // Ends the line on a terminal.
  void finish();

 private:
  std::string label_;
  bool quiet_, tty_;
  double interval_s_;
  std::chrono::steady_clock::time_point start_;
  double last_print_s_ = -1e9;
  bool printed_ = false;
};

// "42 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);

}  // namespace coinfer::cli
