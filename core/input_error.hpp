#pragma once
// Errors about user input (files, command-line values). The CLI maps them to exit code 2.
#include <stdexcept>
#include <string>

namespace coinfer {

// Where in a file a bad value sits. line/column are 1-based; 0 = unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string to_string() const;  // "file:line:col", "file" or "" when unknown
};

// Bad input: a file that does not parse, a key that does not exist, a value out of range, a LUT entry
// a scenario needs but no file provides. The message names file, line and key when they are known.
class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key, const std::string& what);
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }

 private:
  SourceLocation where_;
  std::string key_;
};

}  // namespace coinfer
