#pragma once
// decisions.jsonl: one JSON object per scheduling decision, keys as DecisionRecord's field table
// (core/run_results.hpp decision_fields(), io/record_json.hpp). The real server appends to it as it
// decides; `coinfer run` and the testbed write a run's whole list. Blocks (file I/O).
#include <string>
#include <vector>

#include "core/run_results.hpp"

namespace coinfer {

// One line of a decisions journal.
std::string decision_to_json(const DecisionRecord& d);
DecisionRecord decision_from_json(const std::string& text);  // throws InputError on malformed input
// A decisions journal: every line decoded; a malformed *last* line (a server killed mid-write) is
// skipped, a malformed line before it throws InputError naming the file and line.
std::vector<DecisionRecord> read_decisions_jsonl(const std::string& path);
// The decisions of a run as a journal (one decision_to_json line each) without the wall-clock time
// of each decision (wall_s is 0: it differs between runs and lives in timing.json), so that the same
// scenario and seed give the same file. `coinfer run` and the testbed write it as decisions.jsonl.
std::string decisions_jsonl_text(const std::vector<DecisionRecord>& decisions);

}  // namespace coinfer
