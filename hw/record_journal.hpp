#pragma once
// The device runtime's journal of requests (JSON lines, hw/README.md "Journal"): a "created" line when
// a request is created, a "done" line with the whole record when it completes or fails. Reading a
// journal gives every request: one created but never done (the device died) comes back failed.
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/request_record.hpp"
#include "hw/clock_sync.hpp"

namespace coinfer::hw {

class JournalWriter {
 public:
  explicit JournalWriter(const std::string& path);  // truncates; throws std::runtime_error if it cannot
  ~JournalWriter();
  // Every line also goes to standard output (a testbed over SSH streams it back live, so a board that
  // becomes unreachable still leaves what it journaled until then). Write errors there are ignored.
  void also_to_stdout() { stdout_copy_ = true; }
  void created(const RequestRecord& r);
  void done(const RequestRecord& r);
  void note(const std::string& key, const std::string& value);  // {"ev":"note", key: value}
  // {"ev":"epochs","device_unix_s":..,"server_unix_s":..}: both time zeros, each on its own clock.
  void epochs(double device_unix_s, double server_unix_s);
  // {"ev":"clock","offset_s":..,"uncertainty_s":..,"samples":..}: a better clock offset estimate.
  void clock(double offset_s, double uncertainty_s, int samples);
  // {"ev":"power","t":..,"w":..}: the board's power draw (W) at t (s since its time zero, its clock).
  void power(double t_s, double watts);

 private:
  void line(const std::string& text);
  std::mutex m_;
  std::FILE* f_ = nullptr;
  bool stdout_copy_ = false;
};

// Records of a journal, ordered by id. A request created but never done fails with "the device process
// ended before the request finished", or with the text of the journal's last {"ev":"note","cut":..}
// line: a copy cut short (a testbed's live copy of a board that became unreachable) says why. Throws InputError (a std::runtime_error) naming the file and line when a line
// is not a journal entry (a torn last line, written when the process was killed, is ignored).
std::vector<RequestRecord> read_journal(const std::string& path);
// A journal's text cut where its process stopped writing: a torn last line dropped, then a note
// saying why its unfinished requests failed (read_journal gives them that reason).
std::string cut_journal_text(std::string text, const std::string& why);

// What the journal says about clocks: its last "epochs" and "clock" lines (NaN where absent).
JournalClock read_journal_clock(const std::string& path);

// The power readings of a journal, (t, W) in the device's time, in order; empty without a meter.
std::vector<std::pair<double, double>> read_journal_power(const std::string& path);

// read_journal, moved onto the server's clock and time zero by what the journal says
// (correct_to_server_clock); `clock`, if given, receives it.
std::vector<RequestRecord> read_journal_server_clock(const std::string& path, JournalClock* clock = nullptr);

// The scenario device a journal belongs to: the value of its first {"ev":"note","device":ID} line
// (the device runtime writes it first). "" when there is none (not a device journal).
std::string journal_device(const std::string& path);

}  // namespace coinfer::hw
