#include <algorithm>
#include "io/yaml_util.hpp"

#include <cmath>
#include <cstddef>
#include <map>
#include <set>

#include "core/limits.hpp"
#include "core/text_util.hpp"
#include "io/input_file.hpp"

namespace coinfer {

std::string key_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

namespace {

// Every mapping below `n` names each key once, as text. yaml-cpp keeps a repeated key's entries and
// node[key] answers the first, so a second value would be ignored without a word (and a loader that
// iterates a mapping, then looks an entry up by its name, would find the other one). `refuse(key node,
// key path, what)` throws. A container reached again through an alias (`*name`) is not walked again:
// containers are told apart by where they start in the text, so aliases cannot make the walk
// exponential.
template <class Refuse>
void check_mapping_keys(const YAML::Node& n, const std::string& path, std::set<std::size_t>& walked, const Refuse& refuse) {
  if (!n.IsMap() && !n.IsSequence()) return;
  if (!n.Mark().is_null() && !walked.insert(static_cast<std::size_t>(n.Mark().pos)).second) return;
  if (n.IsSequence()) {
    std::size_t i = 0;
    for (const auto& c : n) check_mapping_keys(c, path + "[" + std::to_string(i++) + "]", walked, refuse);
    return;
  }
  std::map<std::string, int> first_line;  // key -> its line (1-based)
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) refuse(it->first, path, "a key must be a plain text value");
    const std::string kp = key_path(path, it->first.Scalar());
    const auto [at, fresh] = first_line.emplace(it->first.Scalar(), it->first.Mark().line + 1);
    if (!fresh) refuse(it->first, kp, "repeated key (first at line " + std::to_string(at->second) + "): a mapping names each key once");
    check_mapping_keys(it->second, kp, walked, refuse);
  }
}

}  // namespace

YAML::Node YamlReader::load_file() const { return load_text(read_input_file(file_, "YAML file")); }

YAML::Node YamlReader::load_text(const std::string& text) const {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(SourceLocation{file_, e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax error: " + e.msg);
  }
  std::set<std::size_t> walked;
  check_mapping_keys(root, "", walked, [&](const YAML::Node& key, const std::string& kp, const std::string& what) { fail(key, kp, what); });
  return root;
}

namespace {
void collect_nodes(const YAML::Node& n, size_t assignment, std::vector<std::pair<YAML::Node, size_t>>& out) {
  out.emplace_back(n, assignment);
  if (n.IsMap())
    for (auto it = n.begin(); it != n.end(); ++it) {
      collect_nodes(it->first, assignment, out);
      collect_nodes(it->second, assignment, out);
    }
  else if (n.IsSequence())
    for (const auto& c : n) collect_nodes(c, assignment, out);
}
}  // namespace

void YamlReader::note_override(const YAML::Node& value, const std::string& assignment) {
  override_texts_.push_back(printable(assignment, 200));  // what an error names: its first 200 characters
  collect_nodes(value, override_texts_.size() - 1, override_nodes_);
}

SourceLocation YamlReader::where(const YAML::Node& node) const {
  // The latest override first: a later --set replaces what an earlier one put there.
  for (auto it = override_nodes_.rbegin(); it != override_nodes_.rend(); ++it)
    if (it->first.is(node)) return SourceLocation{"--set " + override_texts_[it->second], 0, 0};
  if (!node.IsDefined()) return SourceLocation{file_, 0, 0};  // a key that is not there: the file, no line
  YAML::Mark m = node.Mark();
  if (m.is_null()) return SourceLocation{file_ + " (--set)", 0, 0};
  return SourceLocation{file_, m.line + 1, m.column + 1};
}

void YamlReader::fail(const YAML::Node& node, const std::string& key, const std::string& what) const { throw InputError(where(node), key, what); }

void YamlReader::require_map(const YAML::Node& node, const std::string& path) const {
  if (!node.IsMap()) fail(node, path, "expected a mapping of keys to values");
}

void YamlReader::check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& path) const {
  require_map(map, path);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) fail(it->first, path, "a key must be a plain text value");
    std::string k = it->first.as<std::string>();
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == k;
    if (ok) continue;
    std::string near = nearest_word(k, allowed);
    fail(it->first, key_path(path, printable(k, 80)),
         "unknown key" + (near.empty() ? std::string() : "; did you mean '" + near + "'?") + " (allowed: " + join(allowed) + ")");
  }
}

std::string YamlReader::get_string(const YAML::Node& map, const std::string& key, const std::string& path) const {
  YAML::Node v = map[key];
  if (!v) fail(map, key_path(path, key), "missing required key");
  if (!v.IsScalar()) fail(v, key_path(path, key), "expected a text value");
  std::string text = v.as<std::string>();
  check_text(v, key_path(path, key), text);
  return text;
}

std::string YamlReader::get_name(const YAML::Node& map, const std::string& key, const std::string& path) const {
  std::string name = get_string(map, key, path);
  if (name.empty()) fail(map[key], key_path(path, key), "must not be empty");
  if (name.size() > limits::kMaxNameBytes)
    fail(map[key], key_path(path, key),
         "a name of " + std::to_string(name.size()) + " bytes is too long (at most " + std::to_string(limits::kMaxNameBytes) + ")");
  return name;
}

void YamlReader::check_text(const YAML::Node& v, const std::string& key, const std::string& text) const {
  if (!valid_utf8(text)) fail(v, key, "'" + printable(text) + "' is not valid UTF-8");
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7F) fail(v, key, "'" + printable(text) + "' contains a control character");
  if (text.size() > limits::kMaxTextValueBytes)
    fail(v, key, "text of " + std::to_string(text.size()) + " bytes is too long (at most " + std::to_string(limits::kMaxTextValueBytes) + ")");
}

std::string YamlReader::get_string(const YAML::Node& map, const std::string& key, const std::string& path, const std::string& fallback) const {
  if (!map[key]) return fallback;
  return get_string(map, key, path);
}

double YamlReader::to_double(const YAML::Node& v, const std::string& key) const {
  if (!v.IsScalar()) fail(v, key, "expected a number");
  std::string text = v.as<std::string>();
  try {
    size_t used = 0;
    double d = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(d)) throw std::invalid_argument(text);
    return d;
  } catch (const std::exception&) {
    fail(v, key, "'" + text + "' is not a number");
  }
}

double YamlReader::get_double(const YAML::Node& map, const std::string& key, const std::string& path, double fallback, double min_value,
                              bool strictly_greater) const {
  if (!map[key]) return fallback;
  return require_double(map, key, path, min_value, strictly_greater);
}

double YamlReader::require_double(const YAML::Node& map, const std::string& key, const std::string& path, double min_value,
                                  bool strictly_greater) const {
  YAML::Node v = map[key];
  const std::string kp = key_path(path, key);
  if (!v) fail(map, kp, "missing required key");
  double d = to_double(v, kp);
  if (strictly_greater ? !(d > min_value) : !(d >= min_value))
    fail(v, kp, "value " + format_double(d) + " must be " + (strictly_greater ? "> " : ">= ") + format_double(min_value));
  return d;
}

long long YamlReader::get_int(const YAML::Node& map, const std::string& key, const std::string& path, long long fallback, long long min_value,
                              long long max_value, const std::string& why_max) const {
  YAML::Node v = map[key];
  const std::string kp = key_path(path, key);
  if (!v) return fallback;
  if (!v.IsScalar()) fail(v, kp, "expected an integer");
  std::string text = v.as<std::string>();
  long long x = 0;
  try {
    size_t used = 0;
    x = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::out_of_range&) {  // an integer all the same: say which bound it passes
    const bool negative = !text.empty() && text[0] == '-';
    fail(v, kp,
         "value " + printable(text, 40) + " must be " +
             (negative ? ">= " + std::to_string(min_value) : "<= " + std::to_string(max_value) + (why_max.empty() ? "" : " (" + why_max + ")")));
  } catch (const std::exception&) {
    fail(v, kp, "'" + text + "' is not an integer");
  }
  if (x < min_value) fail(v, kp, "value " + std::to_string(x) + " must be >= " + std::to_string(min_value));
  if (x > max_value)
    fail(v, kp, "value " + std::to_string(x) + " must be <= " + std::to_string(max_value) + (why_max.empty() ? "" : " (" + why_max + ")"));
  return x;
}

bool YamlReader::get_bool(const YAML::Node& map, const std::string& key, const std::string& path, bool fallback) const {
  YAML::Node v = map[key];
  if (!v) return fallback;
  std::string t = v.IsScalar() ? v.as<std::string>() : "";
  if (t == "true" || t == "yes") return true;
  if (t == "false" || t == "no") return false;
  fail(v, key_path(path, key), "expected true or false");
}

std::vector<std::string> YamlReader::get_string_list(const YAML::Node& map, const std::string& key, const std::string& path) const {
  std::vector<std::string> out;
  YAML::Node v = map[key];
  if (!v) return out;
  if (v.IsScalar()) {
    check_text(v, key_path(path, key), v.as<std::string>());
    return {v.as<std::string>()};
  }
  if (!v.IsSequence()) fail(v, key_path(path, key), "expected a list");
  for (const auto& e : v) {
    if (!e.IsScalar()) fail(e, key_path(path, key), "expected a list of text values");
    out.push_back(e.as<std::string>());
    check_text(e, key_path(path, key), out.back());
  }
  return out;
}

std::vector<double> YamlReader::get_number_list(const YAML::Node& map, const std::string& key, const std::string& path, double min_value,
                                                double max_value, std::size_t max_count, bool integers) const {
  std::vector<double> out;
  YAML::Node v = map[key];
  const std::string kp = key_path(path, key);
  if (!v) return out;
  std::vector<YAML::Node> items;
  if (v.IsScalar())
    items.push_back(v);
  else if (v.IsSequence())
    for (const auto& e : v) items.push_back(e);
  else
    fail(v, kp, "expected a list of numbers");
  if (items.empty()) fail(v, kp, "expected at least one number");
  if (items.size() > max_count) fail(v, kp, std::to_string(items.size()) + " values; at most " + std::to_string(max_count));
  for (const YAML::Node& e : items) {
    const double d = to_double(e, kp);
    if (d < min_value || d > max_value)
      fail(e, kp, "value " + format_double(d) + " is outside " + format_double(min_value) + ".." + format_double(max_value));
    if (integers && d != std::floor(d)) fail(e, kp, "value " + format_double(d) + " is not an integer");
    if (std::find(out.begin(), out.end(), d) != out.end()) fail(e, kp, "value " + format_double(d) + " is listed twice");
    out.push_back(d);
  }
  return out;
}

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

[[noreturn]] void bad_set(const std::string& path, const std::string& what) { throw InputError(SourceLocation{"--set", 0, 0}, path, what); }

// Sets `value` at parts[i..] below `cur`; "*" stands for every entry of a list.
void set_at(YAML::Node cur, const std::vector<std::string>& parts, size_t i, const YAML::Node& value, const std::string& path) {
  const std::string& p = parts[i];
  if (p.empty()) bad_set(path, "empty key component");
  const bool last = i + 1 == parts.size();
  if (cur.IsSequence()) {
    if (p == "*") {
      if (cur.size() == 0) bad_set(path, "'*' matches no list entry");
      for (size_t k = 0; k < cur.size(); ++k) {
        if (last)
          cur[k] = YAML::Clone(value);
        else
          set_at(cur[k], parts, i + 1, value, path);
      }
      return;
    }
    size_t idx = 0;
    try {
      size_t used = 0;
      idx = std::stoul(p, &used);
      if (used != p.size()) throw std::invalid_argument(p);
    } catch (const std::exception&) {
      bad_set(path, "'" + p + "' must be a list index or *");
    }
    if (idx >= cur.size()) bad_set(path, "index " + p + " is out of range (the list has " + std::to_string(cur.size()) + " entries)");
    if (last)
      cur[idx] = value;
    else
      set_at(cur[idx], parts, i + 1, value, path);
    return;
  }
  if (cur.IsDefined() && !cur.IsMap() && !cur.IsNull()) bad_set(path, "'" + p + "' is inside a value that is not a mapping");
  if (p == "*") bad_set(path, "'*' used on a mapping");
  if (last)
    cur[p] = value;
  else
    set_at(cur[p], parts, i + 1, value, path);
}

bool exists_at(const YAML::Node& cur, const std::vector<std::string>& parts, size_t i) {
  if (i == parts.size()) return true;
  const std::string& p = parts[i];
  if (cur.IsSequence()) {
    if (p == "*") {
      if (cur.size() == 0) return false;
      for (size_t k = 0; k < cur.size(); ++k)
        if (!exists_at(cur[k], parts, i + 1)) return false;
      return true;
    }
    try {
      size_t used = 0;
      size_t idx = std::stoul(p, &used);
      return used == p.size() && idx < cur.size() && exists_at(cur[idx], parts, i + 1);
    } catch (const std::exception&) {
      return false;
    }
  }
  if (!cur.IsMap() || !cur[p]) return false;
  return exists_at(cur[p], parts, i + 1);
}

}  // namespace

YAML::Node apply_override(YAML::Node& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) bad_set(assignment, "expected KEY=VALUE (e.g. devices.0.link.bandwidth_mbps=5)");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    bad_set(path, "value does not parse: " + e.msg);
  }
  std::set<std::size_t> walked;
  check_mapping_keys(value, path, walked, [&](const YAML::Node&, const std::string& kp, const std::string& what) {
    throw InputError(SourceLocation{"--set " + printable(assignment, 200), 0, 0}, kp, what);
  });
  set_at(root, split_path(path), 0, value, path);
  return value;
}

bool yaml_path_exists(const YAML::Node& root, const std::string& path) { return exists_at(root, split_path(path), 0); }

}  // namespace coinfer
