#pragma once
// JSON form of SystemState and Scheme: the one codec for what crosses a process boundary around a
// scheduler (the state it is given, the scheme it returns). Decisions: io/decisions_jsonl.hpp.
#include <string>
#include <vector>

#include "core/scheme.hpp"
#include "core/system_state.hpp"

namespace coinfer {

std::string state_to_json(const SystemState& s);
SystemState state_from_json(const std::string& text);  // throws InputError on malformed input
std::string scheme_to_json(const Scheme& s);
Scheme scheme_from_json(const std::string& text);  // throws InputError on malformed input

}  // namespace coinfer
