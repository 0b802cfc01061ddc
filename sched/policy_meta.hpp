#pragma once
// The meta record of a learned policy file (JSON text; the SparOA and SAC batching policies): parsed
// and read field by field with errors "KEY: why", which the loaders turn into an InputError naming the
// file and the key. Torch-free; include from .cpp files only (it brings nlohmann/json).
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/input_error.hpp"

namespace coinfer {

// Throws std::invalid_argument "meta: not JSON (...)".
inline nlohmann::json parse_policy_meta(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("meta: not JSON (") + e.what() + ")");
  }
}

// j[key] into `into`; throws std::invalid_argument "KEY: missing or of the wrong type".
template <typename T>
void read_policy_meta(const nlohmann::json& j, const char* key, T& into) {
  try {
    into = j.at(key).get<std::decay_t<T>>();
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(key) + ": missing or of the wrong type");
  }
}

// `e` ("KEY: why", or a message without a key) as an InputError at `path` and that key.
inline InputError policy_meta_error(const std::string& path, const std::invalid_argument& e) {
  const std::string what = e.what();
  const auto colon = what.find(':');
  return InputError(SourceLocation{path, 0, 0}, colon == std::string::npos ? "meta" : what.substr(0, colon),
                    colon == std::string::npos ? what : what.substr(colon + 2));
}

}  // namespace coinfer
