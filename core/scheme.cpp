#include "core/scheme.hpp"

#include "core/text_util.hpp"

namespace coinfer {

std::string Scheme::to_string() const {
  std::string s;
  for (const auto& kv : strategies) {
    if (!s.empty()) s += ' ';
    s += kv.first + "=" + kv.second.to_string();
  }
  return s + " helpers=[" + join(helpers, ",") + "]";
}

}  // namespace coinfer
