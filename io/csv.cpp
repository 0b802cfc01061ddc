#include "io/csv.hpp"

#include "core/input_error.hpp"
#include "core/text_util.hpp"

namespace coinfer {

std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file) {
  std::vector<CsvRecord> out;
  const size_t n = text.size();
  size_t i = 0;
  int line = 1;
  while (i < n) {
    // At the start of a record: skip empty and comment lines.
    if (text[i] == '\n' || text[i] == '\r') {
      if (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
      ++i;
      ++line;
      continue;
    }
    if (text[i] == '#') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    CsvRecord rec;
    rec.line = line;
    bool end_of_record = false;
    while (!end_of_record) {
      std::string field;
      bool quoted = false;
      // Spaces before an opening quote are allowed (and dropped).
      size_t j = i;
      while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
      if (j < n && text[j] == '"') {
        quoted = true;
        i = j + 1;
        const int opened = line;
        while (true) {
          if (i >= n) throw InputError(SourceLocation{file, opened, 0}, "", "a quoted field is not closed (a '\"' is missing)");
          const char c = text[i];
          if (c == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (c == '\n') ++line;
          field += c;
          ++i;
        }
        while (i < n && (text[i] == ' ' || text[i] == '\t')) ++i;
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          throw InputError(SourceLocation{file, line, 0}, "",
                           std::string("unexpected '") + text[i] + "' after a closing quote (write a quote inside a quoted field as \"\")");
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          if (text[i] == '"')
            throw InputError(SourceLocation{file, line, 0}, "", "a '\"' inside an unquoted field (quote the whole field and double the quote)");
          field += text[i++];
        }
        field = trim(field);
      }
      rec.fields.push_back(std::move(field));
      rec.quoted.push_back(quoted);
      if (i >= n) {
        end_of_record = true;
      } else if (text[i] == ',') {
        ++i;
        if (i >= n) {  // a trailing comma: one more, empty field
          rec.fields.emplace_back();
          rec.quoted.push_back(false);
          end_of_record = true;
        }
      } else {  // a line break ends the record
        if (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
        ++i;
        ++line;
        end_of_record = true;
      }
    }
    out.push_back(std::move(rec));
  }
  return out;
}

std::string csv_field(const std::string& v) {
  const bool quote = v.find_first_of(",\"\r\n") != std::string::npos || (!v.empty() && (v.front() == ' ' || v.back() == ' ' || v.front() == '#'));
  if (!quote) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_record(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t k = 0; k < fields.size(); ++k) out += (k ? "," : "") + csv_field(fields[k]);
  return out + "\n";
}

}  // namespace coinfer
