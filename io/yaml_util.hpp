#pragma once
// Strict, located reading of YAML files: every error names the file, line, column and key path, and an
// unknown key comes with the nearest valid one.
#include <yaml-cpp/yaml.h>

#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "core/input_error.hpp"

namespace coinfer {

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}
  // Parses the file; a syntax error becomes an InputError with its position.
  YAML::Node load_file() const;
  // Parses `text` as this file's content (read by the caller), with the same errors.
  YAML::Node load_text(const std::string& text) const;
  const std::string& file() const { return file_; }

  // Where a node came from: FILE:LINE:COLUMN, or "--set KEY=VALUE" for a node an override put there.
  SourceLocation where(const YAML::Node& node) const;
  // Remembers that `value` and every node inside it came from the override `assignment`.
  void note_override(const YAML::Node& value, const std::string& assignment);
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& what) const;

  // Rejects keys not in `allowed`, suggesting the nearest. `path` prefixes key names in messages.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& path) const;
  void require_map(const YAML::Node& node, const std::string& path) const;

  bool has(const YAML::Node& map, const std::string& key) const { return map.IsMap() && map[key]; }
  std::string get_string(const YAML::Node& map, const std::string& key, const std::string& path) const;
  std::string get_string(const YAML::Node& map, const std::string& key, const std::string& path, const std::string& fallback) const;
  // Numbers: `min_exclusive`/`min_inclusive` bounds are checked and reported with the value.
  double get_double(const YAML::Node& map, const std::string& key, const std::string& path, double fallback, double min_value,
                    bool strictly_greater) const;
  double require_double(const YAML::Node& map, const std::string& key, const std::string& path, double min_value, bool strictly_greater) const;
  // A name or id (get_string, at most limits::kMaxNameBytes bytes, not empty).
  std::string get_name(const YAML::Node& map, const std::string& key, const std::string& path) const;
  // Integers in [min_value, max_value]; `why_max` explains the upper bound in the error.
  long long get_int(const YAML::Node& map, const std::string& key, const std::string& path, long long fallback, long long min_value,
                    long long max_value = LLONG_MAX, const std::string& why_max = "") const;
  bool get_bool(const YAML::Node& map, const std::string& key, const std::string& path, bool fallback) const;
  std::vector<std::string> get_string_list(const YAML::Node& map, const std::string& key, const std::string& path) const;
  // A list of numbers (a single number is a list of one), each in [min_value, max_value] (integers
  // only when `integers`), at most `max_count` of them, none repeated; empty when the key is absent.
  std::vector<double> get_number_list(const YAML::Node& map, const std::string& key, const std::string& path, double min_value, double max_value,
                                      std::size_t max_count, bool integers) const;

 private:
  double to_double(const YAML::Node& value, const std::string& key) const;
  // Text values must be valid UTF-8 without control characters, at most 4 KiB.
  void check_text(const YAML::Node& value, const std::string& key, const std::string& text) const;
  std::string file_;
  // (node, index into override_texts_ of the --set it came from): each --set's text is held once, not
  // once per node (a 114 KB --set of 2,500 events peaked at 3.7 GB).
  std::vector<std::pair<YAML::Node, size_t>> override_nodes_;
  std::vector<std::string> override_texts_;
};

std::string key_path(const std::string& path, const std::string& key);

// Applies a "--set a.b.0.c=value" override to a YAML tree (value parsed as YAML). "*" stands for every
// entry of a list (devices.*.link.bandwidth_mbps=5). Missing maps are created; a list index out of
// range is an InputError naming the override.
// Returns the value node it put in the tree (for YamlReader::note_override).
YAML::Node apply_override(YAML::Node& root, const std::string& assignment);
// Whether a key path (with "*" for every list entry) exists in the tree.
bool yaml_path_exists(const YAML::Node& root, const std::string& path);

}  // namespace coinfer
