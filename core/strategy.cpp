#include "core/strategy.hpp"

#include <cctype>
#include <stdexcept>

namespace coinfer {

int Strategy::device_split(int num_stages) const {
  switch (kind) {
    case Kind::local: return num_stages;
    case Kind::offload: return 0;
    case Kind::pp: return split;
    case Kind::data_parallel: return -1;
  }
  return -1;
}

std::string Strategy::to_string() const {
  switch (kind) {
    case Kind::local: return "local";
    case Kind::offload: return "offload";
    case Kind::pp: return "pp(" + std::to_string(split) + ")";
    case Kind::data_parallel: return "data_parallel";
  }
  return "?";
}

Strategy parse_strategy(const std::string& text) {
  if (text == "local") return Strategy::local();
  if (text == "offload") return Strategy::offload();
  if (text == "data_parallel") return Strategy::data_parallel();
  if (text.size() > 4 && text.compare(0, 3, "pp(") == 0 && text.back() == ')') {
    std::string digits = text.substr(3, text.size() - 4);
    bool ok = !digits.empty() && digits.size() < 6;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    if (ok) return Strategy::pp(std::stoi(digits));
  }
  throw std::invalid_argument("'" + text + "' is not a strategy; allowed: local, offload, pp(K), data_parallel");
}

}  // namespace coinfer
