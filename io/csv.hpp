#pragma once
// CSV as RFC 4180 defines it, for every CSV file coinfer reads or writes (LUT imports, bandwidth and
// arrival traces, sweep tables): fields separated by commas, records by CRLF or LF; a field may be
// enclosed in double quotes, and then holds commas, line breaks and quotes written twice (""). Two
// extensions that our files have always allowed: lines starting with '#' (outside a quoted field) and
// empty lines are skipped, and spaces around an unquoted field are trimmed.
#include <string>
#include <vector>

namespace coinfer {

struct CsvRecord {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
  std::vector<bool> quoted;  // per field: it was enclosed in quotes (kept exactly, not trimmed)
};

// Parses `text` (the contents of `file`, named in errors). Throws InputError naming the file and line
// for an unterminated quoted field or characters between a closing quote and the next separator.
std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file);

// One field as RFC 4180 writes it: quoted (quotes doubled) when it holds a comma, a quote, a line
// break or leading/trailing spaces, or starts with '#'; as it is otherwise.
std::string csv_field(const std::string& value);
// A record: fields joined by commas, ended by "\n".
std::string csv_record(const std::vector<std::string>& fields);

}  // namespace coinfer
