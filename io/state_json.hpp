#pragma once
// JSON form of SystemState and Scheme, so that a scheduler can sit behind a process boundary.
#include <string>

#include "core/scheme.hpp"
#include "core/system_state.hpp"

namespace coinfer {

std::string state_to_json(const SystemState& s);
SystemState state_from_json(const std::string& text);  // throws InputError on malformed input
std::string scheme_to_json(const Scheme& s);
Scheme scheme_from_json(const std::string& text);      // throws InputError on malformed input

}  // namespace coinfer
