#include "io/decisions_jsonl.hpp"

#include <fstream>

#include "core/input_error.hpp"
#include "io/record_json.hpp"

namespace coinfer {

std::string decision_to_json(const DecisionRecord& d) { return record_to_json(d, decision_fields()).dump(); }

DecisionRecord decision_from_json(const std::string& text) {
  try {
    return record_from_json(nlohmann::json::parse(text), decision_fields());
  } catch (const std::exception& e) {  // nlohmann's errors and the field checks' (std::invalid_argument)
    throw InputError(std::string("malformed decision record JSON: ") + e.what());
  }
}

std::string decisions_jsonl_text(const std::vector<DecisionRecord>& decisions) {
  std::string out;
  for (DecisionRecord d : decisions) {
    d.wall_s = 0;
    out += decision_to_json(d) + "\n";
  }
  return out;
}

std::vector<DecisionRecord> read_decisions_jsonl(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "decisions", "cannot read this file");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::vector<DecisionRecord> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    try {
      out.push_back(decision_from_json(lines[i]));
    } catch (const InputError& e) {
      if (i + 1 == lines.size()) break;  // torn last line of a killed server
      throw InputError(SourceLocation{path, static_cast<int>(i + 1), 0}, "decisions", e.what());
    }
  }
  return out;
}

}  // namespace coinfer
