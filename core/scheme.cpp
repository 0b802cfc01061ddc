#include "core/scheme.hpp"

#include "core/text_util.hpp"

namespace coinfer {

std::string Scheme::to_string() const {
  std::string s;
  for (const auto& kv : strategies) {
    if (!s.empty()) s += ' ';
    s += kv.first + "=" + kv.second.to_string();
  }
  s += " helpers=[" + join(helpers, ",") + "]";
  if (!batching.empty()) {
    s += " batching=[";
    bool first = true;
    for (const auto& [server, spec] : batching) {
      s += (first ? "" : ",") + server + ":" + spec.to_string();
      first = false;
    }
    s += "]";
  }
  if (!servers.empty()) {
    s += " servers=[";
    bool first = true;
    for (const auto& [device, server] : servers) {
      s += (first ? "" : ",") + device + ":" + server;
      first = false;
    }
    s += "]";
  }
  return s;
}

std::string BatchSpec::to_string() const { return format_double(window_ms) + "ms/" + std::to_string(max_size); }

Scheme SchemeEdit::applied_to(const Scheme& base) const {
  Scheme s = base;
  apply_to(s);
  return s;
}

void SchemeEdit::apply_to(Scheme& base) const {
  for (const auto& [id, strategy] : set) base.strategies[id] = strategy;
}

}  // namespace coinfer
