#pragma once
// Small string helpers shared by parsers and printers.
#include <string>
#include <vector>

namespace coinfer {

// Levenshtein distance (insert/delete/substitute cost 1).
int edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `word`, or "" if none is within a distance of max(2, |word|/3).
std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates);
// "a, b, c"
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {}.
std::vector<std::string> split(const std::string& text, char sep);
// Without leading and trailing spaces and tabs.
std::string trim(const std::string& s);
// Without trailing spaces, carriage returns and newlines (a program's output).
std::string trim_end(std::string s);
// ASCII letters lower-cased; other bytes unchanged.
std::string to_lower(std::string s);
// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(const std::string& s);
// `s` for an error message: control characters, NUL and bytes of invalid UTF-8 become \xNN, and
// text beyond `max_bytes` is cut with "...". Safe to print whatever a user or a fuzzer typed.
std::string printable(const std::string& s, size_t max_bytes = 200);
// Shortest decimal text that reads back to the same double ("0.1", "52.1", "1e-05").
std::string format_double(double v);
// printf into a std::string: strprintf("%d points", n).
std::string strprintf(const char* format, ...) __attribute__((format(printf, 1, 2)));
// A fraction as a percentage with one decimal: 0.11259 -> "11.3 %".
std::string format_percent(double fraction);

}  // namespace coinfer
