#include "core/strategy.hpp"

#include "core/model_variant.hpp"

#include <cctype>
#include <stdexcept>

namespace coinfer {

int Strategy::device_split(int num_stages) const {
  switch (kind) {
    case Kind::local:
      return num_stages;
    case Kind::offload:
      return 0;
    case Kind::pp:
      return split;
    case Kind::data_parallel:
      return -1;
  }
  return -1;
}

std::string Strategy::to_string() const {
  const std::string at = placement.to_string() + (variant.empty() ? "" : "@" + variant);
  switch (kind) {
    case Kind::local:
      return "local" + at;
    case Kind::offload:
      return "offload" + at;
    case Kind::pp:
      return "pp(" + std::to_string(split) + (cloud_split > 0 ? "," + std::to_string(cloud_split) : "") + ")" + at;
    case Kind::data_parallel:
      return "data_parallel" + at;
  }
  return "?";
}

std::string model_under(const std::string& configured_model, const Strategy& s) {
  if (s.variant.empty()) return configured_model;
  const std::string base = split_variant_name(configured_model).first;
  return s.variant == "fp32" ? base : base + "@" + s.variant;
}

Strategy parse_strategy(const std::string& text) {
  const size_t at = text.find('@');
  if (at != std::string::npos) {
    Strategy s = parse_strategy(text.substr(0, at));
    const std::string v = text.substr(at + 1);
    try {
      const std::string canonical = ModelVariant::parse(v).name();
      s.variant = canonical.empty() ? "fp32" : canonical;
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("'" + text + "': " + e.what());
    }
    return s;
  }
  if (!text.empty() && text.back() == ']') {
    const size_t open = text.find('[');
    if (open == std::string::npos) throw std::invalid_argument("'" + text + "': a placement is written [PARTS] after the strategy");
    Strategy s = parse_strategy(text.substr(0, open));
    if (s.kind == Strategy::Kind::offload)
      throw std::invalid_argument("'" + text + "': only local, pp(K) and data_parallel run stages on the device to place (not " + s.to_string() +
                                  ")");
    if (s.kind == Strategy::Kind::pp && s.split == 0) throw std::invalid_argument("'" + text + "': pp(0) runs no stage on the device to place");
    try {
      s.placement = parse_placement(text.substr(open + 1, text.size() - open - 2));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("'" + text + "': " + e.what());
    }
    if (s.kind == Strategy::Kind::pp) s.placement.resolved(s.split);  // ranges against the split
    return s;
  }
  if (text == "local") return Strategy::local();
  if (text == "offload") return Strategy::offload();
  if (text == "data_parallel") return Strategy::data_parallel();
  if (text.size() > 4 && text.compare(0, 3, "pp(") == 0 && text.back() == ')') {
    const std::string inside = text.substr(3, text.size() - 4);
    auto number = [](const std::string& digits) {
      bool ok = !digits.empty() && digits.size() < 6;
      for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
      return ok ? std::stoi(digits) : -1;
    };
    const size_t comma = inside.find(',');
    if (comma == std::string::npos) {
      const int k = number(inside);
      if (k >= 0) return Strategy::pp(k);
    } else {
      const int k = number(inside.substr(0, comma)), m = number(inside.substr(comma + 1));
      if (k >= 0 && m >= 0) {
        if (m <= k) throw std::invalid_argument("'" + text + "': in pp(K,M) the cloud's part [M,n) starts after the edge's [K,M): K < M");
        return Strategy::pp(k, m);
      }
    }
  }
  throw std::invalid_argument("'" + text +
                              "' is not a strategy; allowed: local, offload, pp(K), pp(K,M), data_parallel, each with an optional @VARIANT; local, "
                              "pp(K) and data_parallel with an optional placement [PARTS]");
}

}  // namespace coinfer
