#include "hw/record_journal.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/input_error.hpp"
#include "io/record_json.hpp"

namespace coinfer::hw {

using nlohmann::json;

namespace {
// One key per field of core/request_record.hpp's table (io/record_json.hpp).
json to_json(const RequestRecord& r) { return record_to_json(r, request_fields()); }
RequestRecord from_json(const json& j) { return record_from_json(j, request_fields()); }
}  // namespace

JournalWriter::JournalWriter(const std::string& path) {
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) throw std::runtime_error(path + ": cannot write the records journal");
}

JournalWriter::~JournalWriter() {
  if (f_) std::fclose(f_);
}

void JournalWriter::line(const std::string& text) {
  std::lock_guard<std::mutex> lock(m_);
  std::fputs(text.c_str(), f_);
  std::fputc('\n', f_);
  std::fflush(f_);
  if (stdout_copy_) {
    std::fputs(text.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
}

void JournalWriter::created(const RequestRecord& r) {
  json j = to_json(r);
  j["ev"] = "created";
  line(j.dump());
}

void JournalWriter::done(const RequestRecord& r) {
  json j = to_json(r);
  j["ev"] = "done";
  line(j.dump());
}

void JournalWriter::note(const std::string& key, const std::string& value) { line(json{{"ev", "note"}, {key, value}}.dump()); }
void JournalWriter::epochs(double device_unix_s, double server_unix_s) {
  line(json{{"ev", "epochs"}, {"device_unix_s", device_unix_s}, {"server_unix_s", server_unix_s}}.dump());
}
void JournalWriter::power(double t_s, double watts) { line(json{{"ev", "power"}, {"t", t_s}, {"w", watts}}.dump()); }
void JournalWriter::clock(double offset_s, double uncertainty_s, int samples) {
  line(json{{"ev", "clock"}, {"offset_s", offset_s}, {"uncertainty_s", uncertainty_s}, {"samples", samples}}.dump());
}

std::vector<RequestRecord> read_journal(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "", "cannot read the records journal");
  std::map<std::int64_t, RequestRecord> recs;
  std::string text;
  int line = 0;
  std::vector<std::string> lines;
  while (std::getline(in, text)) lines.push_back(text);
  std::string unfinished = "the device process ended before the request finished";
  for (const auto& l : lines) {
    ++line;
    if (l.empty()) continue;
    json j;
    try {
      j = json::parse(l);
    } catch (const json::exception&) {
      if (line == static_cast<int>(lines.size())) break;  // torn last line of a killed process
      throw InputError(SourceLocation{path, line, 1}, "", "not a JSON line");
    }
    try {
      const std::string ev = j.at("ev").get<std::string>();
      if (ev == "note" && j.contains("cut")) unfinished = j.at("cut").get<std::string>();
      if (ev == "note" || ev == "epochs" || ev == "clock" || ev == "power") continue;
      RequestRecord r = from_json(j);
      if (ev == "created") {
        r.status = RequestRecord::Status::failed;
        recs.emplace(r.id, r);
      } else if (ev == "done") {
        recs[r.id] = r;
      } else {
        throw std::runtime_error("unknown ev '" + ev + "'");
      }
    } catch (const std::exception& e) {
      throw InputError(SourceLocation{path, line, 1}, "", std::string("not a journal entry: ") + e.what());
    }
  }
  std::vector<RequestRecord> out;
  for (auto& [id, r] : recs) {
    if (r.status == RequestRecord::Status::failed && r.failure.empty()) r.failure = unfinished;
    out.push_back(r);
  }
  return out;
}

std::string cut_journal_text(std::string text, const std::string& why) {
  if (!text.empty() && text.back() != '\n') text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  return text + json{{"ev", "note"}, {"cut", why}}.dump() + "\n";
}

std::string journal_device(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  for (int line = 0; line < 16 && std::getline(in, text); ++line) {  // the note comes first
    try {
      const json j = json::parse(text);
      if (j.is_object() && j.value("ev", "") == "note" && j.contains("device") && j["device"].is_string()) return j["device"].get<std::string>();
    } catch (const json::exception&) {
      return "";
    }
  }
  return "";
}

JournalClock read_journal_clock(const std::string& path) {
  JournalClock c;
  std::ifstream in(path);
  std::string text;
  while (std::getline(in, text)) {
    if (text.find("\"epochs\"") == std::string::npos && text.find("\"clock\"") == std::string::npos) continue;
    try {
      const json j = json::parse(text);
      const std::string ev = j.value("ev", "");
      if (ev == "epochs") {
        c.device_epoch_unix_s = j.at("device_unix_s").get<double>();
        c.server_epoch_unix_s = j.at("server_unix_s").get<double>();
      } else if (ev == "clock") {
        c.offset_s = j.at("offset_s").get<double>();
        c.uncertainty_s = j.at("uncertainty_s").get<double>();
        c.samples = static_cast<int>(json_integer_in(j.at("samples"), "samples", 0, std::numeric_limits<std::int32_t>::max()));
      }
    } catch (const std::exception&) {  // json errors and json_integer_in's
      // a torn line: read_journal reports malformed lines where they matter
    }
  }
  return c;
}

std::vector<std::pair<double, double>> read_journal_power(const std::string& path) {
  std::vector<std::pair<double, double>> out;
  std::ifstream in(path);
  std::string text;
  while (std::getline(in, text)) {
    if (text.find("\"power\"") == std::string::npos) continue;
    try {
      const json j = json::parse(text);
      if (j.value("ev", "") == "power") out.emplace_back(j.at("t").get<double>(), j.at("w").get<double>());
    } catch (const json::exception&) {
    }
  }
  return out;
}

std::vector<RequestRecord> read_journal_server_clock(const std::string& path, JournalClock* clock) {
  std::vector<RequestRecord> records = read_journal(path);
  const JournalClock c = read_journal_clock(path);
  correct_to_server_clock(records, c);
  if (clock) *clock = c;
  return records;
}

}  // namespace coinfer::hw
