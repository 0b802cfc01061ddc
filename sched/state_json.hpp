#pragma once
// JSON form of SystemState, Scheme and DecisionRecord: the one codec for what crosses a process
// boundary around a scheduler (the state it is given, the scheme it returns, the decision the real
// server records in its decisions journal and the testbed reads back into results.h5).
#include <string>
#include <vector>

#include "core/run_results.hpp"

#include "core/scheme.hpp"
#include "core/system_state.hpp"

namespace coinfer {

std::string state_to_json(const SystemState& s);
SystemState state_from_json(const std::string& text);  // throws InputError on malformed input
std::string scheme_to_json(const Scheme& s);
Scheme scheme_from_json(const std::string& text);      // throws InputError on malformed input

// One line of a decisions journal (JSON lines; keys as DecisionRecord's fields).
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
